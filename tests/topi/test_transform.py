"""Shape and data-movement operators (kiln/topi/transform.py, indexing.py) against the numpy reference."""

import numpy as np

from kiln.relay.op import attrs as A


def test_reshape_family(harness, target):
    x = harness.rand((2, 3, 4), "float32")
    cases = [
        harness.Case("reshape", [x], A.ReshapeAttrs((0, -1)), label="reshape 0,-1"),
        harness.Case("reshape", [x], A.ReshapeAttrs((-4, 1, 2, -2)), label="reshape -4"),
        harness.Case("reshape", [x], A.ReshapeAttrs((6, 4)), label="reshape 6x4"),
        harness.Case("transpose", [x], A.TransposeAttrs(None), label="transpose reversed"),
        harness.Case("transpose", [x], A.TransposeAttrs((1, -1, 0)), label="transpose perm"),
        harness.Case("squeeze", [x.reshape(2, 1, 3, 1, 4)], A.SqueezeAttrs(None), label="squeeze all"),
        harness.Case("squeeze", [x.reshape(2, 1, 3, 1, 4)], A.SqueezeAttrs((-2,)), label="squeeze one"),
        harness.Case("expand_dims", [x], A.ExpandDimsAttrs(1, 2), label="expand_dims 1x2"),
        harness.Case("expand_dims", [x], A.ExpandDimsAttrs(-1, 1), label="expand_dims -1"),
        harness.Case("nn.batch_flatten", [x], label="batch_flatten"),
        harness.Case("shape_of", [x], A.ShapeOfAttrs("int64"), label="shape_of"),
        harness.Case("layout_transform", [harness.rand((1, 32, 3, 5))], A.LayoutTransformAttrs("NCHW", "NCHW16c")),
        harness.Case("layout_transform", [harness.rand((1, 2, 3, 5, 16))], A.LayoutTransformAttrs("NCHW16c", "NHWC")),
        harness.Case("layout_transform", [harness.rand((2, 3, 5, 32))], A.LayoutTransformAttrs("NHWC", "NCHW8c")),
        harness.Case("layout_transform", [harness.rand((2, 4, 3, 3, 8))],
                     A.LayoutTransformAttrs("NCHW8c", "NCHW4c"), label="layout 8c->4c"),
        harness.Case("layout_transform", [harness.rand((8, 16, 3, 3))],
                     A.LayoutTransformAttrs("OIHW", "OHWI4i4o2i"), label="layout I split twice"),
        harness.Case("layout_transform", [harness.rand((1, 2, 3, 3, 2, 2))],
                     A.LayoutTransformAttrs("NCHW2c2c", "NCHW4c"), label="layout 2c2c->4c"),
    ]
    harness.run_cases(cases, target)


def test_concatenate_split_slice(harness, target):
    a, b, c = harness.rand((2, 3, 4), seed=1), harness.rand((2, 5, 4), seed=2), harness.rand((2, 1, 4), seed=3)
    x = harness.rand((6, 10), "int32", -50, 50)
    cases = [
        harness.Case("concatenate", [(a, b, c)], A.ConcatenateAttrs(1), label="concat axis 1"),
        harness.Case("concatenate", [(a, a)], A.ConcatenateAttrs(-1), label="concat same tensor twice"),
        harness.Case("concatenate", [(c,)], A.ConcatenateAttrs(0), label="concat one"),
        harness.Case("split", [x], A.SplitAttrs(3, 0), label="split sections"),
        harness.Case("split", [x], A.SplitAttrs((2, 7), 1), label="split indices"),
        harness.Case("split", [x], A.SplitAttrs((3, 20), 1), label="split past the end"),
        harness.Case("strided_slice", [x], A.StridedSliceAttrs((1, 2), (5, 9), (2, 3)), label="slice strides"),
        harness.Case("strided_slice", [x], A.StridedSliceAttrs((-1,), (-7,), (-2,), (1,)), label="slice negative"),
        harness.Case("strided_slice", [x], A.StridedSliceAttrs((1, 0), (2, 4), None, None, "size"),
                     label="slice size mode"),
        harness.Case("strided_slice", [x], A.StridedSliceAttrs((4,), (100,)), label="slice clamps"),
    ]
    harness.run_cases(cases, target)


def test_take_modes(harness, target):
    data = harness.rand((4, 5, 3), "float32")
    idx = np.array([[0, 4, -1], [7, 2, -6]], "int32")
    in_range = np.array([[0, 4, 1], [3, 2, 0]], "int64")
    cases = [
        harness.Case("take", [data, idx], A.TakeAttrs(0, 1, "clip"), label="take clip"),
        harness.Case("take", [data, idx], A.TakeAttrs(0, 1, "wrap"), label="take wrap"),
        harness.Case("take", [data, in_range], A.TakeAttrs(0, 1, "fast"), label="take fast"),
        harness.Case("take", [data, idx], A.TakeAttrs(0, None, "wrap"), label="take flat"),
        harness.Case("take", [data, idx[:1].repeat(4, 0)], A.TakeAttrs(1, 1, "clip"), label="take batch_dims"),
        harness.Case("take", [data, np.array(3, "int32")], A.TakeAttrs(0, -1, "clip"), label="take scalar index"),
    ]
    harness.run_cases(cases, target)


def test_tile_repeat_reverse_gather(harness, target):
    x = harness.rand((2, 3, 4), "float32")
    gidx = harness.rand((2, 2, 4), "int32", 0, 3, seed=5)
    nd_idx = np.array([[[0, 1], [1, 0]], [[2, 0], [1, 1]]], "int32")  # (M=2, 2, 2)
    cases = [
        harness.Case("broadcast_to", [harness.rand((3, 1))], A.InitOpAttrs((2, 3, 4)), label="broadcast_to"),
        harness.Case("tile", [x], A.TileAttrs((2, 1, 3)), label="tile"),
        harness.Case("tile", [x], A.TileAttrs((2, 1, 1, 2)), label="tile higher rank"),
        harness.Case("repeat", [x], A.RepeatAttrs(3, 1), label="repeat"),
        harness.Case("reverse", [x], A.ReverseAttrs(-1), label="reverse"),
        harness.Case("gather", [x, gidx], A.GatherAttrs(1), label="gather"),
        harness.Case("gather_nd", [x, nd_idx], A.GatherNDAttrs(0), label="gather_nd"),
        harness.Case("gather_nd", [x, np.array([[1, 0], [2, 1]], "int32")], A.GatherNDAttrs(1),
                     label="gather_nd batch_dims"),
        harness.Case("one_hot", [np.array([[0, 3], [2, 5]], "int32"), np.array(2.0, "float32"),
                                 np.array(-1.0, "float32")], A.OneHotAttrs(4, 1, "float32"), label="one_hot"),
    ]
    harness.run_cases(cases, target)


def test_scatter(harness, target):
    data = harness.rand((4, 5, 3), "float32")
    upd = harness.rand((2, 5, 3), "float32", seed=9)
    idx = np.array([[[0, 3, 3]] * 5, [[3, 1, 0]] * 5], "int64")  # duplicates along axis 0
    small_idx = harness.rand((2, 2, 2), "int32", 0, 4, seed=4)
    small_upd = harness.rand((2, 2, 2), "float32", seed=5)
    nd_idx = np.array([[0, 2, 0], [1, 4, 1]], "int32")  # (M=2, 3): three (a, b) pairs, one duplicate
    nd_upd = harness.rand((3, 3), "float32", seed=6)
    cases = [harness.Case("scatter_elements", [data, idx, upd], A.ScatterElementsAttrs(0, r), label=f"elements {r}")
             for r in ("update", "add", "mul", "min", "max", "mean")]
    cases.append(harness.Case("scatter_elements", [data, small_idx, small_upd], A.ScatterElementsAttrs(0),
                              label="elements, indices smaller than data"))
    cases += [harness.Case("scatter_nd", [data, nd_idx, nd_upd], A.ScatterNDAttrs(mode), label=f"nd {mode}")
              for mode in ("update", "add", "mul", "min", "max")]
    cases.append(harness.Case("scatter_nd", [data, np.array([[1], [2], [0]], "int32"), harness.rand((1,), seed=7)],
                              A.ScatterNDAttrs("update"), label="nd full index"))
    cases.append(harness.Case("scatter_nd", [data, np.array([2, 1], "int32"), harness.rand((3,), seed=8)],
                              A.ScatterNDAttrs("add"), label="nd one index tuple"))
    harness.run_cases(cases, target)


def test_take_along_a_size_known_only_at_run_time():
    """clip and wrap bound int32 indices by a size variable (int64): the size is taken in the indices' dtype, so
    the index arithmetic never mixes int32 and int64 (what failed the ONNX Gather of a dynamic dimension)."""
    import kiln
    from kiln import relay
    from kiln.runtime.vm import VirtualMachine

    x = relay.var("x", shape=(relay.Any(), 3))
    idx = np.array([0, 5, -1], "int32")
    for mode in ("clip", "wrap"):
        func = relay.Function([x], relay.take(x, relay.const(idx), axis=0, mode=mode))
        vm = VirtualMachine(relay.vm.compile(kiln.IRModule.from_expr(func), "llvm"), kiln.cpu(0))
        for rows in (2, 4):
            data = np.arange(rows * 3, dtype="float32").reshape(rows, 3)
            np.testing.assert_array_equal(vm.invoke("main", data).numpy(), np.take(data, idx, axis=0, mode=mode))
