"""vision.all_class_non_max_suppression (ONNX's NonMaxSuppression): the sequential kernel against the reference
interpreter and onnxruntime, on both targets, and sliced to its run-time row count on the VM."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.error import KilnError
from kiln.runtime.vm import VirtualMachine

from ...target.conftest import TARGETS

B, C, N = 2, 3, 12


def _data(seed=0):
    rng = np.random.default_rng(seed)
    boxes = rng.random((B, N, 4)).astype("float32")
    boxes[..., 2:] = boxes[..., :2] + rng.random((B, N, 2)).astype("float32") * 0.6
    boxes[1, 0] = boxes[1, 0, [2, 3, 0, 1]]  # corners in the other order count the same
    scores = rng.random((B, C, N)).astype("float32")
    scores[0, 0, 3] = scores[0, 0, 5]  # a tie: the lower index first
    return boxes, scores


SETTINGS = [(3, 0.5, 0.2), (0, 0.5, 0.0), (-1, 0.3, 0.5), (100, 0.0, 0.0), (2, 1.0, 0.9)]


def _vars():
    return (relay.var("boxes", shape=(B, N, 4)), relay.var("scores", shape=(B, C, N)),
            relay.var("m", shape=(), dtype="int64"), relay.var("iou", shape=(1,)), relay.var("thr", shape=()))


def _args(boxes, scores, m, iou, thr):
    return [boxes, scores, np.array(m, "int64"), np.array([iou], "float32"), np.array(thr, "float32")]


def _onnxruntime(boxes, scores, m, iou, thr):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    helper, TensorProto = onnx.helper, onnx.TensorProto

    node = helper.make_node("NonMaxSuppression", ["b", "s", "m", "i", "t"], ["y"])
    inputs = [helper.make_tensor_value_info("b", TensorProto.FLOAT, boxes.shape),
              helper.make_tensor_value_info("s", TensorProto.FLOAT, scores.shape),
              helper.make_tensor_value_info("m", TensorProto.INT64, [1]),
              helper.make_tensor_value_info("i", TensorProto.FLOAT, [1]),
              helper.make_tensor_value_info("t", TensorProto.FLOAT, [1])]
    graph = helper.make_graph([node], "nms", inputs, [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 7
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {"b": boxes, "s": scores, "m": np.array([m], "int64"), "i": np.array([iou], "float32"),
            "t": np.array([thr], "float32")}
    return session.run(None, feed)[0]


def test_vm_gives_the_selected_rows_at_their_run_time_count():
    """One executable; each setting selects a different number of rows, as onnxruntime selects them."""
    boxes, scores = _data()
    bv, sv, mv, iv, tv = _vars()
    out = relay.vision.all_class_non_max_suppression(bv, sv, mv, iv, tv)
    count = relay.concatenate([out[1], relay.const([3], "int64")], 0)
    selected = relay.strided_slice(out[0], relay.const([0, 0], "int64"), count)
    mod = kiln.IRModule.from_expr(relay.Function([bv, sv, mv, iv, tv], selected))
    assert mod["main"].body.op.name == "dyn.strided_slice"
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    reference = relay.create_executor("debug", mod=mod).evaluate()
    counts = set()
    for setting in SETTINGS:
        args = _args(boxes, scores, *setting)
        got = vm.invoke("main", *args).numpy()
        want = _onnxruntime(boxes, scores, *setting) if setting[0] >= 0 else reference(*args).numpy()
        np.testing.assert_array_equal(got, want, err_msg=str(setting))
        np.testing.assert_array_equal(reference(*args).numpy(), got)
        counts.add(got.shape[0])
    assert len(counts) >= 4 and 0 in counts


@pytest.mark.parametrize("target", TARGETS)
def test_padded_form_on_the_graph_executor(target):
    boxes, scores = _data(1)
    bv, sv, mv, iv, tv = _vars()
    out = relay.vision.all_class_non_max_suppression(bv, sv, mv, iv, tv)
    mod = kiln.IRModule.from_expr(relay.Function([bv, sv, mv, iv, tv], out.astuple()))
    lib = relay.build(mod, target=target)
    module = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    reference = relay.create_executor("debug", mod=mod).evaluate()
    for setting in SETTINGS:
        args = _args(boxes, scores, *setting)
        module.run(**dict(zip(["boxes", "scores", "m", "iou", "thr"], args, strict=True)))
        want = reference(*args)
        rows, count = module.get_output(0).numpy(), module.get_output(1).numpy()
        np.testing.assert_array_equal(rows, want[0].numpy())
        np.testing.assert_array_equal(count, want[1].numpy())
        assert rows.shape == (B * C * N, 3) and not rows[count[0]:].any()


def test_dynamic_numbers_of_boxes_and_batches_compile_once():
    """Boxes, batches and classes known only at run time: one executable, run at two sizes against onnxruntime; a
    boxes count that differs from the scores' fails the kernel's argument check."""
    any_ = relay.Any()
    bv, sv = relay.var("boxes", shape=(any_, any_, 4)), relay.var("scores", shape=(any_, any_, any_))
    _, _, mv, iv, tv = _vars()
    out = relay.vision.all_class_non_max_suppression(bv, sv, mv, iv, tv)
    count = relay.concatenate([out[1], relay.const([3], "int64")], 0)
    selected = relay.strided_slice(out[0], relay.const([0, 0], "int64"), count)
    mod = kiln.IRModule.from_expr(relay.Function([bv, sv, mv, iv, tv], selected))
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    boxes, scores = _data(2)
    for b, c, n in ((B, C, N), (1, 2, 7)):
        args = _args(boxes[:b, :n], scores[:b, :c, :n], 3, 0.4, 0.1)
        np.testing.assert_array_equal(vm.invoke("main", *args).numpy(), _onnxruntime(*args[:2], 3, 0.4, 0.1))
    with pytest.raises(KilnError, match="boxes"):
        vm.invoke("main", *_args(boxes[:, :7], scores[:, :, :8], 3, 0.4, 0.1))


def test_refuses_mismatched_boxes():
    scores = relay.var("s", shape=(B, C, N))
    boxes = relay.var("b", shape=(B, N + 1, 4))
    call = relay.vision.all_class_non_max_suppression(boxes, scores, 2, 0.5, 0.1).astuple()
    with pytest.raises(KilnError, match=r"\(batch, boxes, 4\)"):
        relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([boxes, scores], call)))


def _tensorflow_form(onnx_rows, scores):
    """The tensorflow-format results derived from ONNX's ``(batch, class, box)`` rows: per batch its ``(class, box)``
    rows in order, their scores, zero-padded to ``classes * boxes``, and their count."""
    batch, classes, n = scores.shape
    indices, selected, counts = np.zeros((batch, classes * n, 2), "int64"), np.zeros((batch, classes * n)), []
    for b in range(batch):
        mine = onnx_rows[onnx_rows[:, 0] == b]
        indices[b, :len(mine)] = mine[:, 1:]
        selected[b, :len(mine)] = scores[b, mine[:, 1], mine[:, 2]]
        counts.append(len(mine))
    return indices, selected.astype("float32"), np.array(counts, "int64")


@pytest.mark.parametrize("executor", ["vm", "graph"])
def test_tensorflow_format_groups_each_batchs_rows_with_their_scores(executor):
    boxes, scores = _data(3)
    n = relay.Any() if executor == "vm" else N
    bv, sv = relay.var("boxes", shape=(B, n, 4)), relay.var("scores", shape=(B, C, n))
    _, _, mv, iv, tv = _vars()
    out = relay.vision.all_class_non_max_suppression(bv, sv, mv, iv, tv, output_format="tensorflow")
    mod = kiln.IRModule.from_expr(relay.Function([bv, sv, mv, iv, tv], out.astuple()))
    assert [f.shape for f in relay.transform.InferType()(mod)["main"].ret_type.fields] == \
        [(B, C * n, 2), (B, C * n), (B,)]
    run = relay.create_executor(executor, mod=mod, target="llvm").evaluate()
    for setting in [s for s in SETTINGS if s[0] >= 0]:  # onnxruntime selects nothing for a negative limit
        args = _args(boxes, scores, *setting)
        got = [x.numpy() for x in run(*args)]
        want = _tensorflow_form(_onnxruntime(boxes, scores, *setting), scores)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w, err_msg=str(setting))
