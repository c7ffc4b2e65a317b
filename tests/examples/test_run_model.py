"""examples/run_model.py as a new user meets it, in a subprocess: its own small CNN; a model of one's own with a
symbolic batch and its weights listed among the inputs; missing and corrupt files; ONNX Runtime absent."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "run_model.py"


def run_model(*argv, cwd, env=None):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, argv)], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


def old_style_model(path):
    """A dense layer over a (batch, 6) input, batch symbolic, its weights listed among the graph inputs."""
    rng = np.random.default_rng(0)
    weights = {"fc_w": rng.standard_normal((12, 6)).astype("float32"), "fc_b": rng.standard_normal(12).astype("float32")}
    inputs = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in weights.items()]
    inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6]))
    graph = helper.make_graph([helper.make_node("Gemm", ["x", "fc_w", "fc_b"], ["y"], transB=1)], "old", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 12])],
                              [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_builtin_model(tmp_path):
    done = run_model(cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "== matches kiln's reference interpreter\n== matches ONNX Runtime\n" in done.stdout
    last = done.stdout.splitlines()[-1]
    assert last.startswith("prob: float32 (1, 10); top 5 of the first batch item (index: value): ")
    assert (tmp_path / "out" / "model.so").exists()


def test_own_model_with_symbolic_batch_and_weights_among_inputs(tmp_path):
    model = old_style_model(tmp_path / "old.onnx")
    done = run_model(model, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "== input x: symbolic dimension 'batch' (axis 0) set to 1; choose it with --input-shapes" in out
    assert "== inputs: x float32 (1, 6)\n" in out  # the weights are not fed
    assert "== matches ONNX Runtime" in out and "y: float32 (1, 12); top 5" in out
    done = run_model(model, "--input-shapes", "x:[3,6]", cwd=tmp_path)
    assert done.returncode == 0 and "symbolic" not in done.stdout
    assert "y: float32 (3, 12); top 5 of the first batch item" in done.stdout


def test_bad_files_are_one_line(tmp_path):
    (tmp_path / "corrupt.onnx").write_bytes(b"\x00garbage\xff" * 10)
    for name, message in (("missing.onnx", "no ONNX model file at 'missing.onnx'"),
                          ("corrupt.onnx", "'corrupt.onnx' is not a readable ONNX model")):
        done = run_model(name, cwd=tmp_path)
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("run_model.py: error: ") and message in done.stderr


def test_says_when_onnx_runtime_comparison_is_skipped(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "onnxruntime.py").write_text("raise ImportError('onnxruntime is hidden for this test')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")])}
    done = run_model(cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "== ONNX Runtime comparison skipped: onnxruntime is not installed" in done.stdout
