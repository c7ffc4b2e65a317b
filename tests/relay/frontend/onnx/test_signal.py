"""Converters of kiln/relay/frontend/onnx/signal.py (DFT, STFT, NegativeLogLikelihoodLoss, MaxRoiPool) and the
converters this change moved onto new Relay operators, against onnxruntime."""

import numpy as np
import pytest

RNG = np.random.default_rng(41)


def test_max_roi_pool(ox):
    x = RNG.standard_normal((2, 3, 8, 9)).astype("float32")
    rois = np.array([[0, 0, 0, 7, 7], [1, 2.2, 1.4, 6.6, 5.4], [1, 4, 4, 4, 4]], "float32")
    ox.check_node("MaxRoiPool", {"x": x, "rois": rois}, {"pooled_shape": [2, 3], "spatial_scale": 1.0})


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_negative_log_likelihood_loss(ox, reduction):
    x = RNG.standard_normal((3, 5, 2)).astype("float32")
    target = np.array([[0, 4], [1, 2], [3, 3]], "int64")
    weight = RNG.uniform(0.5, 2, (5,)).astype("float32")
    ox.check_node("NegativeLogLikelihoodLoss", {"x": x, "t": target, "w": weight},
                  {"reduction": reduction, "ignore_index": 3})


@pytest.mark.parametrize("onesided,axis", [(0, 1), (1, 2)])
def test_dft(ox, onesided, axis):
    x = RNG.standard_normal((2, 6, 4, 1)).astype("float32")
    ox.check_node("DFT", {"x": x}, {"onesided": onesided, "axis": axis}, rtol=1e-4, atol=1e-4)


def test_stft(ox):
    x = RNG.standard_normal((2, 32, 1)).astype("float32")
    window = np.hanning(8).astype("float32")
    ox.check_node("STFT", {"x": x}, initializers={"step": np.array(4, "int64"), "w": window},
                  input_names=["x", "step", "w"], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample(ox, mode, padding):
    x = RNG.standard_normal((1, 2, 4, 5)).astype("float32")
    grid = RNG.uniform(-1.2, 1.2, (1, 3, 6, 2)).astype("float32")
    ox.check_node("GridSample", {"x": x, "g": grid}, {"mode": mode, "padding_mode": padding, "align_corners": 0},
                  rtol=1e-4, atol=1e-4)


def test_reverse_sequence_and_trilu_with_a_runtime_k(ox):
    x = RNG.standard_normal((4, 3, 2)).astype("float32")
    ox.check_node("ReverseSequence", {"x": x, "n": np.array([1, 4, 2], "int64")}, {"time_axis": 0, "batch_axis": 1})
    ox.check_node("Trilu", {"x": RNG.standard_normal((3, 4)).astype("float32"), "k": np.array(-1, "int64")},
                  {"upper": 1})
