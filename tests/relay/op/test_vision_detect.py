"""``vision.non_max_suppression`` and ``vision.proposal`` on hand-worked cases, in the reference interpreter and
compiled for llvm and c (their sequential kernels, kiln/topi/nms.py and kiln/topi/proposal.py)."""

import math

import numpy as np
import pytest

from kiln import relay
from kiln.error import OpAttributeInvalid, TypeInferenceError

from .checks import check

# rows [class, score, x1, y1, x2, y2]: row 1 overlaps row 0 (IoU 81 / 119 = 0.68) and row 2 (same box as row 0,
# other class); row 3 is apart
BOXES = np.array([[[0, 0.6, 0, 0, 10, 10], [0, 0.9, 1, 1, 11, 11], [1, 0.8, 0, 0, 10, 10],
                   [0, 0.3, 20, 20, 30, 30]]], "float32")
NONE = [-1.0] * 6


def nms(return_indices=False, valid=4, indices=None, **kwargs):
    data = relay.var("d", shape=(1, 4, 6))
    count = relay.const(np.array([valid], "int32"))
    idx = relay.const(np.array(indices if indices is not None else [[0, 1, 2, 3]], "int32"))
    return relay.vision.non_max_suppression(data, count, idx, return_indices=return_indices, **kwargs)


@pytest.mark.parametrize("kwargs,rows", [
    ({}, [1, 2, None, 3]),  # by score: 1, 2 (another class), 0 (overlaps 1: dropped), 3
    ({"force_suppress": True}, [1, None, None, 3]),  # 2 overlaps 1 as well
    ({"max_output_size": 2}, [1, 2, None, None]),
    ({"top_k": 2}, [1, 2, None, None]),
    ({"iou_threshold": 0.7}, [1, 2, 0, 3]),  # 0.68 is below
    ({"iou_threshold": 0.0}, [0, 1, 2, 3]),  # no suppression: rows as they are
    ({"invalid_to_bottom": True}, [1, 2, 3, None]),
    ({"valid": 3}, [1, 2, None, None]),
    ({"id_index": -1}, [1, None, None, 3]),  # no classes: every row competes
])
def test_non_max_suppression_rows(kwargs, rows):
    valid = kwargs.pop("valid", 4)
    want = np.array([[BOXES[0, r] if r is not None else NONE for r in rows]], "float32")
    check(nms(valid=valid, **kwargs), {"d": BOXES}, want)


def test_non_max_suppression_indices():
    out = nms(return_indices=True, indices=[[10, 11, 12, 13]])
    check(out.astuple(), {"d": BOXES}, (np.array([[11, 12, 13, -1]], "int32"), np.array([[3]], "int32")))
    scores_below_zero = BOXES.copy()
    scores_below_zero[0, :, 1] = [-0.5, 0.9, -0.2, 0.4]  # rows of score <= 0 stay, neither kept nor dropped
    out = nms(return_indices=True, force_suppress=True)
    check(out.astuple(), {"d": scores_below_zero}, (np.array([[1, 3, 2, 0]], "int32"), np.array([[4]], "int32")))


def test_non_max_suppression_types():
    t = relay.infer_type(nms(return_indices=True).astuple()).checked_type
    assert t == relay.TupleType([relay.TensorType((1, 4), "int32"), relay.TensorType((1, 1), "int32")])
    assert relay.infer_type(nms()).checked_type == relay.TensorType((1, 4, 6), "float32")
    with pytest.raises(TypeInferenceError, match="indices"):
        relay.infer_type(relay.vision.non_max_suppression(relay.var("d", shape=(1, 4, 6)), relay.var(
            "c", shape=(1,), dtype="int32"), relay.var("i", shape=(1, 4))).astuple())
    with pytest.raises(TypeInferenceError, match="coord_start"):
        relay.infer_type(relay.vision.non_max_suppression(relay.var("d", shape=(1, 4, 5)), relay.var(
            "c", shape=(1,), dtype="int32"), relay.var("i", shape=(1, 4), dtype="int32"), coord_start=2).astuple())


def proposal(cls, deltas, info, threshold=0.7, pre=-1, post=6, iou_loss=True):
    expr = relay.vision.proposal(relay.var("c", shape=cls.shape), relay.var("b", shape=deltas.shape),
                                 relay.var("i", shape=info.shape), (1.0,), (1.0,), 16, threshold, pre, post, 4,
                                 iou_loss)
    return expr, {"c": cls, "b": deltas, "i": info}


def test_proposal_ranks_and_cycles_the_kept_boxes():
    """One 16 x 16 anchor per cell of a 2 x 2 map: boxes (0, 0, 15, 15) shifted by 16 per cell, none overlapping."""
    cls = np.zeros((1, 2, 2, 2), "float32")
    cls[0, 1] = [[0.1, 0.7], [0.4, 0.9]]
    deltas = np.zeros((1, 4, 2, 2), "float32")
    cell = {(0, 0): [0, 0, 15, 15], (0, 1): [16, 0, 31, 15], (1, 0): [0, 16, 15, 31], (1, 1): [16, 16, 31, 31]}
    order = [(1, 1), (0, 1), (1, 0), (0, 0), (1, 1), (0, 1)]
    want = np.array([[0.0, *cell[k]] for k in order], "float32")
    expr, inputs = proposal(cls, deltas, np.array([[32, 32, 1]], "float32"))
    assert relay.infer_type(expr).checked_type == relay.TensorType((6, 5), "float32")
    check(expr, inputs, want)


def test_proposal_small_boxes_the_real_map_and_suppression():
    """An image 16 high: the second row of cells is outside the real map (score -1) and clipped to a box 1 high,
    smaller than 4 pixels, so it grows by 2 on each side: (-2, 13, 17, 17) and (14, 13, 33, 17). Each overlaps the
    box above it by IoU 48 / 308 = 0.156."""
    cls = np.zeros((1, 2, 2, 2), "float32")
    cls[0, 1] = [[0.1, 0.7], [0.5, 0.9]]
    deltas = np.zeros((1, 4, 2, 2), "float32")
    info = np.array([[16, 32, 1]], "float32")
    kept = [[0, 16, 0, 31, 15], [0, 0, 0, 15, 15], [0, -2, 13, 17, 17], [0, 14, 13, 33, 17]]
    expr, inputs = proposal(cls, deltas, info, threshold=0.3, post=4)
    check(expr, inputs, np.array(kept, "float32"))
    expr, inputs = proposal(cls, deltas, info, threshold=0.1, post=3)
    check(expr, inputs, np.array([kept[0], kept[1], kept[0]], "float32"))
    expr, inputs = proposal(cls, deltas, info, threshold=0.1, pre=1, post=2)
    check(expr, inputs, np.array([kept[0], kept[0]], "float32"))


def test_proposal_box_regression():
    """Centre and log-size deltas: the best box (0, 0, 15, 15) moved by dx = 0.1 and widened twice (dw = log 2)
    is centred at 7.5 + 1.6 = 9.1, 32 wide: x from -6.4 (clipped to 0) to 24.6."""
    cls = np.zeros((1, 2, 1, 2), "float32")
    cls[0, 1, 0] = [0.9, 0.2]
    deltas = np.zeros((1, 4, 1, 2), "float32")
    deltas[0, 0, 0, 0], deltas[0, 2, 0, 0] = 0.1, math.log(2.0)
    expr, inputs = proposal(cls, deltas, np.array([[16, 32, 1]], "float32"), pre=1, post=1, iou_loss=False)
    check(expr, inputs, np.array([[0, 0, 0, 24.6, 15]], "float32"), rtol=1e-5)
    with pytest.raises(TypeInferenceError, match="anchors"):
        relay.infer_type(relay.vision.proposal(relay.var("c", shape=(1, 4, 2, 2)), relay.var("b", shape=(1, 4, 2, 2)),
                                               relay.var("i", shape=(1, 3)), (1.0,), (1.0,), 16, 0.7, 4, 2, 4,
                                               False))
    with pytest.raises(OpAttributeInvalid, match="feature_stride"):
        relay.vision.proposal(relay.var("c"), relay.var("b"), relay.var("i"), (1.0,), (1.0,), 0, 0.7, 4, 2, 4, False)
