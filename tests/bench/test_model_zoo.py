"""bench/model_zoo: every modern model is a valid ONNX model that ONNX Runtime runs to finite outputs (at a reduced
size, so the test takes seconds), and at its published size has the published parameter count and work."""

import numpy as np
import onnx
import pytest
from _common import onnx_size
from model_zoo import MODERN

#: Published sizes: millions of parameters (torchvision, Ultralytics, the CRNN paper, Hugging Face; batch norms
#: folded here, so a little fewer) and GFLOP as two per multiply-add (the papers' MACs doubled).
PUBLISHED = {
    "mobilenet_v2": (3.50, 0.60), "mobilenet_v3_large": (5.48, 0.434), "mobilenet_v3_small": (2.54, 0.112),
    "efficientnet_b0": (5.29, 0.78), "yolov5s": (7.2, 16.5), "crnn": (8.3, None), "bert_base": (109.5, None),
    "vit_b16": (86.6, 35.1),
}


@pytest.mark.parametrize("zoo_model", MODERN, ids=lambda m: m.name)
def test_reduced_model_runs_in_onnxruntime(zoo_model):
    ort = pytest.importorskip("onnxruntime")
    model = zoo_model.build(reduced=True)
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs = session.run(None, zoo_model.make_inputs(model, np.random.default_rng(0)))
    declared = [tuple(d.dim_value for d in o.type.tensor_type.shape.dim) for o in model.graph.output]
    assert [o.shape for o in outputs] == declared
    for out in outputs:
        assert np.isfinite(out).all()
        assert np.abs(out).max() > 0  # the signal survives every layer


def test_builds_are_deterministic():
    """Seeded weights: the same model is the same bytes on every build (saved models and runs are comparable)."""
    first, second = MODERN[0].build(reduced=True), MODERN[0].build(reduced=True)
    assert first.SerializeToString() == second.SerializeToString()


@pytest.mark.slow
@pytest.mark.parametrize("zoo_model", MODERN, ids=lambda m: m.name)
def test_published_size(zoo_model):
    flops, parameters = onnx_size(zoo_model.build())
    mparams, gflop = PUBLISHED[zoo_model.name]
    assert parameters / 1e6 == pytest.approx(mparams, rel=0.02)
    if gflop is not None:
        assert flops / 1e9 == pytest.approx(gflop, rel=0.02)
