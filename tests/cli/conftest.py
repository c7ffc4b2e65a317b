"""Helpers for the command-line tests: tiny ONNX models (random weights), running ``kiln`` in a subprocess, and
onnxruntime as the reference."""

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper


def tiny_cnn(path, batch=1, weights_as_inputs=False, seed=0):
    """Write a conv-relu-pool-dense classifier for (batch, 3, 8, 8) images to ``path``: ``batch`` may be a symbol
    (``"N"``); with ``weights_as_inputs`` the weights are also listed among the graph inputs, as older exporters
    did."""
    rng = np.random.default_rng(seed)
    weights = {"conv.w": rng.standard_normal((4, 3, 3, 3)).astype("float32"),
               "conv.b": rng.standard_normal(4).astype("float32"),
               "fc.w": rng.standard_normal((5, 4)).astype("float32"),
               "fc.b": rng.standard_normal(5).astype("float32")}
    nodes = [helper.make_node("Conv", ["data", "conv.w", "conv.b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], transB=1)]
    inputs = [helper.make_tensor_value_info("data", TensorProto.FLOAT, [batch, 3, 8, 8])]
    if weights_as_inputs:
        inputs += [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in weights.items()]
    graph = helper.make_graph(nodes, "tiny_cnn", inputs,
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 5])],
                              [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    return str(path)


def onnxruntime_outputs(path, feeds):
    """onnxruntime's outputs of the model at ``path`` on ``feeds``."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def kiln(*argv, cwd=None, env=None):
    """Run ``python -m kiln.cli *argv`` and return the finished process (text output captured)."""
    return subprocess.run([sys.executable, "-m", "kiln.cli", *map(str, argv)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def images(batch=1, seed=1):
    return np.random.default_rng(seed).standard_normal((batch, 3, 8, 8)).astype("float32")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """The static tiny CNN (batch 1) as an ONNX file."""
    return tiny_cnn(tmp_path_factory.mktemp("models") / "tiny.onnx")


@pytest.fixture(scope="session")
def tiny_package(tiny_model, tmp_path_factory):
    """The tiny CNN compiled by ``kiln compile`` (in a subprocess) into a package."""
    path = tmp_path_factory.mktemp("packages") / "tiny.tar"
    done = kiln("compile", tiny_model, "-o", path)
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="session")
def cli():
    """The helpers of this module, for tests to call."""
    return SimpleNamespace(tiny_cnn=tiny_cnn, onnxruntime_outputs=onnxruntime_outputs, kiln=kiln, images=images)
