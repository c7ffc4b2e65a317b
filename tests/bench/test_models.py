"""bench/models.py: a model kiln cannot import, build in time or run is reported as FAILED and the run goes on; a
model that works gets a full row, with its tuned build's time when it has tuning records; ``--models`` selects
across groups and rejects unknown names."""

import argparse
import sys
import time

import models
import onnx
import pytest
from model_zoo import OnnxBuilder, ZooModel

from kiln import autotvm, relay
from kiln.error import KilnError


def tiny_cnn():
    """A convolution, a ReLU and a classifier: quick to build, enough kernels to time."""
    b = OnnxBuilder()
    x = b.conv("input", 3, 16, 3, 2, act="relu")
    logits = b.classifier(x, 16, 10)
    return b.model("tiny", [("input", "float32", (1, 3, 16, 16))], [(logits, (1, 10))])


def bench_args(**changes):
    args = dict(save=None, threads=1, target="llvm", compile_timeout=60.0, rounds=1, number=1, settle=0.0,
                per_kernel=0, tuning_records=None)
    return argparse.Namespace(**{**args, **changes})


@pytest.fixture
def ort():
    return pytest.importorskip("onnxruntime")


def test_failed_build_is_reported(monkeypatch, ort, capsys):
    def broken_build(*args, **kwargs):
        raise KilnError("no strategy for nn.frobnicate\nsecond line")

    monkeypatch.setattr(models.relay, "build", broken_build)
    result = models.measure(ZooModel("tiny", tiny_cnn), bench_args(), ort)
    assert result.failure == "build: KilnError: no strategy for nn.frobnicate"
    assert "tiny" in capsys.readouterr().out and "FAILED: build: KilnError" in result.row()


def test_slow_build_is_cut_off(monkeypatch, ort):
    monkeypatch.setattr(models.relay, "build", lambda *args, **kwargs: time.sleep(30))
    start = time.perf_counter()
    result = models.measure(ZooModel("tiny", tiny_cnn), bench_args(compile_timeout=0.3), ort)
    assert result.failure == "build: CompileTimeout: compile took longer than 0.3 s"
    assert time.perf_counter() - start < 10


@pytest.mark.needs_cc
@pytest.mark.needs_llvmlite
def test_working_model_gets_a_row(ort, tmp_path, capsys):
    result = models.measure(ZooModel("tiny", tiny_cnn), bench_args(save=tmp_path, per_kernel=2), ort)
    assert result.failure is None and result.error < models.TOLERANCE
    assert result.kiln_ms > 0 and result.ort_ms > 0 and result.compile_s > 0
    assert (tmp_path / "tiny.onnx").exists()
    out = capsys.readouterr().out
    assert "all " in out and "kernels in total" in out  # the per-kernel listing


@pytest.mark.needs_cc
@pytest.mark.needs_llvmlite
def test_model_with_records_gets_its_tuned_time(ort, tmp_path, capsys):
    model = tiny_cnn()
    mod, params = relay.frontend.from_onnx(onnx.load_from_string(model.SerializeToString()))
    log = tmp_path / "tiny.json"
    for task in autotvm.task.extract_from_program(mod, params, target="llvm"):
        option = autotvm.measure_option(builder=autotvm.LocalBuilder(n_parallel=1),
                                        runner=autotvm.LocalRunner(number=1, repeat=1))
        autotvm.tuner.RandomTuner(task, seed=0).tune(2, option, callbacks=[autotvm.callback.log_to_file(str(log))])
    result = models.measure(ZooModel("tiny", lambda: model), bench_args(tuning_records=tmp_path), ort)
    assert result.failure is None and result.error < models.TOLERANCE and result.tuned and result.tuned_ms > 0
    assert f"tuned {result.tuned_ms:.2f} ms" in capsys.readouterr().out


def test_models_select_across_groups(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["models.py", "--models", "squeezenet,vit_b16"])
    args = models._parse_args()
    assert {group: [m.name for m in ms] for group, ms in args.selection.items()} == {
        "light": ["squeezenet"], "modern": ["vit_b16"]}
    monkeypatch.setattr(sys, "argv", ["models.py", "--group", "light", "--models", "vit_b16"])
    with pytest.raises(SystemExit):
        models._parse_args()
