"""``kiln run`` (kiln/cli/run.py): runs a package (in a subprocess) and agrees with onnxruntime; inputs from an npz
or filled; timing, the per-kernel profile, top values; bad input is one line on stderr."""

import io
import re
import tarfile

import numpy as np
import pytest

from kiln.cli import main
from kiln.cli.run import top_values


def test_outputs_match_onnxruntime(cli, tiny_model, tiny_package, tmp_path):
    x = cli.images()
    np.savez(tmp_path / "x.npz", data=x)
    done = cli.kiln("run", tiny_package, "--inputs", tmp_path / "x.npz", "--outputs", tmp_path / "out.npz",
                    "--print-top", "3")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    got = np.load(tmp_path / "out.npz")
    assert got.files == ["output_0"]
    (want,) = cli.onnxruntime_outputs(tiny_model, {"data": x})
    np.testing.assert_allclose(got["output_0"], want, rtol=1e-4, atol=1e-5)
    lines = done.stdout.splitlines()
    assert lines[0] == f"saved output_0 to {tmp_path / 'out.npz'}"
    assert lines[1].startswith("output_0: float32[1, 5]  min ")
    assert lines[2] == "top 3 of output_0 (batch item 0):"
    best = np.argsort(want[0])[::-1][:3]
    assert [int(line.split()[2]) for line in lines[3:6]] == list(best)


def test_missing_inputs_are_filled_and_say_so(cli, tiny_model, tiny_package, tmp_path):
    done = cli.kiln("run", tiny_package, "--fill-mode", "zeros", "--outputs", tmp_path / "zeros")
    assert done.returncode == 0
    assert done.stderr == "kiln run: note: input 'data' float32[1, 3, 8, 8] not given: filled with zeros values\n"
    (want,) = cli.onnxruntime_outputs(tiny_model, {"data": np.zeros((1, 3, 8, 8), "float32")})
    np.testing.assert_allclose(np.load(tmp_path / "zeros.npz")["output_0"], want, rtol=1e-4, atol=1e-5)


def test_print_time_and_profile(cli, tiny_package):
    done = cli.kiln("run", tiny_package, "--print-time", "--profile", "--repeat", "3", "--number", "2")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Execution time summary:\n mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)\n" in out
    table = out[out.index("Name "):]
    header = table.splitlines()[0].split()
    assert header[:4] == ["Name", "Duration", "(us)", "Percent"] and "GFLOP/s" in header and "Relay" in header
    rows = [line for line in table.splitlines() if line.startswith("tvmgen_default_")]
    assert any(re.search(r"nn.(contrib_)?conv2d(_NCHWc)?, (nn.bias_add|add), nn.relu", r) for r in rows)
    conv, pool = next(r for r in rows if "conv2d" in r), next(r for r in rows if "pool" in r)
    assert float(conv.split()[4].replace(",", "")) >= 0  # GFLOP/s: known for the convolution...
    assert pool.split()[4] == "nn.global_avg_pool2d"  # ... and left empty for pooling
    assert any(line.startswith("Sum ") for line in table.splitlines())
    assert any(line.startswith("Total ") for line in table.splitlines())
    assert "Number of runs: 3" in out and f"{len(rows)} kernel calls: " in out


def test_top_values_of_the_first_batch_item():
    value = np.array([[[0.1], [0.7], [0.2]], [[9.0], [0.0], [0.0]]])
    assert top_values(value, 2) == [(1, 0.7), (2, 0.2)]
    assert top_values(np.array([3, 1, 2]), 5) == [(0, 3), (2, 2), (1, 1)]


@pytest.fixture
def bad_files(tmp_path, tiny_package):
    (tmp_path / "notar.tar").write_text("text")
    with tarfile.open(tmp_path / "partial.tar", "w") as tar:
        info = tarfile.TarInfo("mod.json")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"{}"))
    (tmp_path / "x.txt").write_text("not numpy")
    np.savez(tmp_path / "other.npz", image=np.zeros((1, 3, 8, 8), "float32"))
    np.savez(tmp_path / "wrong.npz", data=np.zeros((1, 3, 9, 9), "float32"))
    np.savez(tmp_path / "double.npz", data=np.zeros((1, 3, 8, 8), "float64"))
    return tmp_path


@pytest.mark.parametrize("argv,message", [
    (["missing.tar"], "no package file at missing.tar"),
    (["notar.tar"], "notar.tar is not a kiln package (not a tar archive)"),
    (["partial.tar"], "partial.tar: not a kiln package: it lacks mod.so, mod.params"),
    (["{pkg}", "--inputs", "missing.npz"], "--inputs: no file missing.npz"),
    (["{pkg}", "--inputs", "x.txt"], "--inputs: x.txt is not an .npz archive"),
    (["{pkg}", "--inputs", "other.npz"], "--inputs: other.npz has 'image', which the model has no input for"),
    (["{pkg}", "--inputs", "wrong.npz"], "--inputs: wrong.npz: input 'data' has shape (1, 3, 9, 9) and dtype float32; "
                                         "the model takes shape (1, 3, 8, 8) and dtype float32"),
    (["{pkg}", "--inputs", "double.npz"], "input 'data' has shape (1, 3, 8, 8) and dtype float64"),
    (["{pkg}", "--repeat", "0"], "--repeat must be at least 1, got 0"),
])
def test_bad_input_is_one_line(capsys, monkeypatch, bad_files, tiny_package, argv, message):
    monkeypatch.chdir(bad_files)
    code = main(["run", *(a.format(pkg=tiny_package) for a in argv)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and err.startswith("kiln run: error: "), err
    assert message in err
