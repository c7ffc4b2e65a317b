"""``kiln run --profile`` on ResNet-50 (bench/bench_resnet.py's ONNX model, in a subprocess) lists every kernel the
graph calls, and every call. Timing is not asserted here (the figures are in the README, measured)."""

import json
import pathlib
import subprocess
import sys

import pytest

from kiln.runtime.package import load_package

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "bench_resnet.py"


@pytest.mark.slow
def test_resnet50_profile_lists_every_kernel(cli, tmp_path):
    subprocess.run([sys.executable, str(BENCH), "--save-onnx", str(tmp_path / "resnet50.onnx")], check=True,
                   capture_output=True, timeout=300)
    done = cli.kiln("compile", tmp_path / "resnet50.onnx", "-o", tmp_path / "resnet50.tar")
    assert done.returncode == 0, done.stderr
    graph = json.loads(load_package(tmp_path / "resnet50.tar").graph)
    calls = [n["attrs"]["func_name"] for n in graph["nodes"] if n["op"] == "tvm_op"]
    done = cli.kiln("run", tmp_path / "resnet50.tar", "--profile", "--repeat", "2")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("tvmgen_default_")]
    assert sorted(r[0] for r in rows) == sorted(set(calls))
    assert sum(int(r[3]) for r in rows) == len(calls)
    assert all(float(r[4].replace(",", "")) > 0 for r in rows if "conv2d" in r[0])  # GFLOP/s of every convolution
    assert f"{len(calls)} kernel calls: " in done.stdout
