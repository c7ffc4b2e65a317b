"""``vision.regular_non_max_suppression`` (kiln/relay/op/vision_detect.py, kernel kiln/topi/regular_nms.py,
reference kiln/topi/testing/regular_nms.py): a hand-worked case, an independent formula where nothing is
suppressed, and random boxes compiled for llvm and c against the reference."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import OpAttributeInvalid, TypeInferenceError
from kiln.topi.testing.regular_nms import regular_non_max_suppression_python

from ...target.conftest import TARGETS


def _run(boxes, scores, *args, target=None):
    b, s = relay.var("b", shape=boxes.shape, dtype=str(boxes.dtype)), relay.var("s", shape=scores.shape,
                                                                                  dtype=str(scores.dtype))
    out = relay.vision.regular_non_max_suppression(b, s, *args)
    mod = kiln.IRModule.from_expr(relay.Function([b, s], out.astuple()))
    kind = "debug" if target is None else "graph"
    return [r.numpy() for r in relay.create_executor(kind, mod=mod, target=target or "llvm").evaluate()(boxes,
                                                                                                     scores)]


# box 1 overlaps box 0 (IoU 81/119 = 0.68); box 2 is apart; box 3 has no area; column 0 is background
BOXES = np.array([[[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [5, 5, 5, 9]]], "float32")
SCORES = np.array([[[0.9, 0.6, 0.1], [0.1, 0.9, 0.7], [0.0, 0.3, 0.8], [0.5, 0.95, 0.2]]], "float32")


@pytest.mark.parametrize("target", [None, *TARGETS])
def test_hand_worked_case(target):
    boxes, classes, scores, count = _run(BOXES, SCORES, 2, 4, 2, 0.5, 0.25, target=target)
    # class 0 (column 1): box 3 (0.95, no area: overlaps nothing), box 1 (0.9), box 0 (0.6) suppressed by box 1,
    # box 2 (0.3) over the per-class limit of 2; class 1: box 2 (0.8), box 1 (0.7); box 0 (0.1) under threshold
    np.testing.assert_array_equal(count, [4])
    np.testing.assert_allclose(scores, [[0.95, 0.9, 0.8, 0.7]])
    np.testing.assert_array_equal(classes, [[0, 0, 1, 1]])
    np.testing.assert_array_equal(boxes, BOXES[:, [3, 1, 2, 1]])
    boxes, classes, scores, count = _run(BOXES, SCORES, 3, 6, 2, 0.5, 0.25, target=target)
    np.testing.assert_array_equal(count, [5])  # box 2 of class 0 joins; the last row stays zero
    np.testing.assert_allclose(scores, [[0.95, 0.9, 0.8, 0.7, 0.3, 0]])
    np.testing.assert_array_equal(boxes[0, 5], [0, 0, 0, 0])


def test_without_overlaps_it_is_the_best_scores_per_class():
    """Boxes far apart: nothing is suppressed, so the result is the ``max_detections`` best (score, class) pairs
    over the threshold, at most ``per_class`` per class (ties: earlier class, then lower box)."""
    rng = np.random.default_rng(4)
    n, columns, classes, per_class, max_det = 12, 4, 3, 3, 7
    corner = np.arange(n, dtype="float32")[:, None] * 10
    boxes = np.concatenate([corner, corner, corner + 5, corner + 5], axis=1)[None]
    scores = rng.integers(0, 8, (1, n, columns)).astype("float32") / 8
    pairs = []
    for c in range(classes):
        column = scores[0, :, c + 1]
        ranked = [i for i in np.argsort(-column, kind="stable") if column[i] >= 0.25][:per_class]
        pairs += [(-column[i], c, i) for i in ranked]
    best = sorted(pairs, key=lambda p: p[0])[:max_det]  # a stable sort keeps class order among equals
    out_boxes, out_classes, out_scores, count = regular_non_max_suppression_python(
        boxes, scores, per_class, max_det, classes, 0.5, 0.25)
    assert count[0] == len(best)
    np.testing.assert_array_equal(out_classes[0, :len(best)], [c for _, c, _ in best])
    np.testing.assert_array_equal(out_scores[0, :len(best)], [-s for s, _, _ in best])
    np.testing.assert_array_equal(out_boxes[0, :len(best)], boxes[0, [i for _, _, i in best]])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_random_boxes_match_the_reference(target, dtype):
    rng = np.random.default_rng(7)
    batch, n, columns = 3, 40, 5
    corner = rng.random((batch, n, 2)) * 0.8
    boxes = np.concatenate([corner, corner + rng.random((batch, n, 2)) * 0.4], axis=2).astype(dtype)
    scores = (rng.integers(0, 16, (batch, n, columns)) / 16).astype(dtype)  # many ties
    for args in ((4, 12, 4, 0.3, 0.5), (100, 100, 5, 0.6, 0.0), (1, 2, 1, 0.1, 0.9)):
        got = _run(boxes, scores, *args, target=target)
        want = regular_non_max_suppression_python(boxes, scores, *args)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def test_types_and_bad_arguments():
    b, s = relay.var("b", shape=(2, 6, 4)), relay.var("s", shape=(2, 6, 3))
    out = relay.vision.regular_non_max_suppression(b, s, 2, 5, 2, 0.5, 0.1)
    typed = relay.testing.run_infer_type(out.astuple())
    assert typed.checked_type == relay.TupleType([relay.TensorType((2, 5, 4)), relay.TensorType((2, 5)),
                                                  relay.TensorType((2, 5)), relay.TensorType((2,), "int32")])
    with pytest.raises(TypeInferenceError, match="regular_non_max_suppression: num_classes=4 exceeds"):
        relay.testing.run_infer_type(relay.vision.regular_non_max_suppression(b, s, 2, 5, 4, 0.5, 0.1).astuple())
    with pytest.raises(TypeInferenceError, match="regular_non_max_suppression: boxes .* must agree"):
        relay.testing.run_infer_type(relay.vision.regular_non_max_suppression(
            b, relay.var("t", shape=(2, 5, 3)), 2, 5, 2, 0.5, 0.1).astuple())
    with pytest.raises(TypeInferenceError, match="regular_non_max_suppression: boxes .* must be"):
        relay.testing.run_infer_type(relay.vision.regular_non_max_suppression(
            relay.var("c", shape=(2, 6, 5)), s, 2, 5, 2, 0.5, 0.1).astuple())
    with pytest.raises(OpAttributeInvalid, match="max_detections"):
        relay.vision.regular_non_max_suppression(b, s, 2, -1, 2, 0.5, 0.1)


def test_prints_and_parses_back():
    b, s = relay.var("b", shape=(1, 5, 4)), relay.var("s", shape=(1, 5, 3))
    body = relay.vision.regular_non_max_suppression(b, s, 2, 3, 2, 0.45, 0.1).astuple()
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([b, s], body)))
    back = relay.transform.InferType()(relay.fromtext(mod.astext()))
    kiln.ir.assert_structural_equal(back["main"], mod["main"])
    assert back["main"].body.attrs.iou_threshold == 0.45
