"""The ``dyn.*`` operators (kiln/relay/op/dyn): each compiled once for the VM with its shape-deciding argument as a
run-time input and run with two different values, against numpy and the reference interpreter; DynamicToStatic
turns a call with a constant shape argument into the static operator; a value the operator cannot take raises a
KilnError naming it, from the VM (the shape function's check) and from the reference interpreter."""

from dataclasses import dataclass

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.runtime.vm import VirtualMachine


def i64(*values):
    return np.array(values, "int64")


def s64(value):
    return np.array(value, "int64")


@dataclass
class Case:
    """``build(*vars)`` the call; ``args`` the static inputs then the shape-deciding ones; ``runs`` the values of the
    shape-deciding inputs for two runs, ``numpy(*args)`` what each gives; ``bad`` values that must be refused with
    ``error`` in the message; ``static`` the static operator DynamicToStatic makes."""

    op: str
    build: object
    args: list
    runs: list
    numpy: object
    bad: list
    error: str
    static: str


X = np.arange(6, dtype="float32").reshape(2, 3)
Y = np.arange(6, dtype="float32").reshape(1, 2, 1, 1, 3)
Z = np.arange(60, dtype="float32").reshape(3, 4, 5)
IDX = np.array([0, 2, 1, 3], "int32")


D = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]], "float32")
IMG = np.arange(24, dtype="float32").reshape(1, 2, 3, 4)
ROI = np.zeros(4, "float32")


def _topk(d, k):
    order = np.argsort(-d, axis=1, kind="stable")
    return np.take_along_axis(d, order[:, :int(k) if k >= 1 else None], axis=1)


def _nearest(img, roi, size):
    """Nearest-neighbour resize with asymmetric coordinates (``floor(y * in / out)``)."""
    rows, cols = (np.minimum(np.floor(np.arange(o) * np.float32(i / o) + 1e-5).astype(int), i - 1)
                  for i, o in zip(img.shape[2:], size, strict=True))
    return img[:, :, rows][:, :, :, cols]


def _one_hot(i, d):
    return (i[:, None] == np.arange(int(d))).astype("float32")


SPARSE = np.array([[0, 1], [2, 0], [1, 1]], "int64")


def _dense(indices, values, default, shape):
    out = np.full(tuple(shape), default.reshape(()), values.dtype)
    for (r, c), v in zip(indices, values, strict=True):
        out[r, c] = v
    return out


CASES = [
    Case("dyn.broadcast_to", relay.broadcast_to, [X], [[i64(4, 2, 3)], [i64(1, 2, 3)]],
         lambda x, s: np.broadcast_to(x, s), [[i64(2, 2, 4)], [i64(-1, 2, 3)]], "dyn.broadcast_to", "broadcast_to"),
    Case("dyn.tile", relay.tile, [X], [[i64(2, 3)], [i64(3, 1)]], np.tile, [[i64(-1, 2)]], "dyn.tile: reps", "tile"),
    Case("dyn.tile", relay.tile, [X], [[np.array([2.0, 3.0], "float32")], [np.array([1.0, 2.0], "float32")]],
         lambda x, r: np.tile(x, r.astype("int64")), [], "", "tile"),
    Case("dyn.arange", lambda a, b, c: relay.arange(a, b, c, "float32"), [],
         [[np.float32(1.0), np.float32(5.0), np.float32(1.5)], [np.float32(2.0), np.float32(-1.0), np.float32(-0.5)]],
         lambda a, b, c: np.arange(a, b, c, dtype="float32"), [[np.float32(0.0), np.float32(1.0), np.float32(0.0)]],
         "dyn.arange: step is 0", "arange"),
    Case("dyn.sparse_to_dense", lambda i, v, d, s: relay.sparse_to_dense(i, s, v, d),
         [SPARSE, np.array([5.0, 6.0, 7.0], "float32"), np.array(-1.0, "float32")], [[i64(3, 2)], [i64(4, 5)]],
         _dense, [[i64(3, -2)]], "dyn.sparse_to_dense: output_shape", "sparse_to_dense"),
    Case("dyn.zeros", lambda s: relay.zeros(s, "int32"), [], [[i64(2, 3)], [i64(4, 1)]],
         lambda s: np.zeros(s, "int32"), [[i64(2, -3)]], "dyn.zeros: shape entry 1 is negative", "zeros"),
    Case("dyn.ones", lambda s: relay.ones(s), [], [[i64(2, 3)], [i64(0, 5)]],
         lambda s: np.ones(s, "float32"), [[i64(-2, 3)]], "dyn.ones", "ones"),
    Case("dyn.full", lambda f, s: relay.full(f, s), [np.array(2.5, "float32")], [[i64(2, 3)], [i64(1, 4)]],
         lambda f, s: np.full(s, f), [[i64(2, -1)]], "dyn.full", "full"),
    Case("dyn.expand_dims", lambda x, a: relay.expand_dims(x, a, 2), [X], [[s64(0)], [s64(-1)]],
         lambda x, a: np.expand_dims(x, (int(a), int(a) + 1) if a >= 0 else (-2, -1)), [[s64(3)], [s64(-4)]],
         "dyn.expand_dims: axis is out of range", "expand_dims"),
    Case("dyn.squeeze", relay.squeeze, [Y], [[i64(0, 2)], [i64(-2, 2)]], lambda y, a: np.squeeze(y, tuple(a)),
         [[i64(1, 0)], [i64(0, 0)], [i64(5, 0)]], "dyn.squeeze: axis", "squeeze"),
    Case("dyn.strided_slice", relay.strided_slice, [Z], [[i64(0, 1), i64(2, 3), i64(1, 1)],
                                                         [i64(-1, 3), i64(-4, 0), i64(-1, -2)]],
         lambda z, b, e, s: z[b[0]:e[0]:s[0], b[1]:e[1]:s[1]], [[i64(0, 0), i64(1, 1), i64(1, 0)]],
         "dyn.strided_slice: stride 1 is 0", "strided_slice"),
    Case("dyn.one_hot", lambda i, d: relay.one_hot(i, 1.0, 0.0, d, -1, "float32"), [IDX], [[s64(4)], [s64(2)]],
         _one_hot, [[s64(-1)]], "dyn.one_hot: depth is negative", "one_hot"),
    Case("dyn.topk", lambda d, k: relay.topk(d, k, axis=1, ret_type="values"), [D], [[s64(2)], [s64(0)]], _topk,
         [], "", "topk"),
    Case("dyn.nn.pad", lambda x, w: relay.nn.pad(x, w, 7.0), [X], [[np.array([[1, 0], [0, 2]])], [np.array([[0, 1],
                                                                                                   [2, 2]])]],
         lambda x, w: np.pad(x, w, constant_values=7.0), [[np.array([[0, -1], [1, 1]])]],
         r"dyn.nn.pad: pad_width\[0\]\[1\] is negative", "nn.pad"),
    Case("dyn.image.resize2d", lambda x, r, s: relay.image.resize2d(x, s, r, method="nearest_neighbor",
                                                                    coordinate_transformation_mode="asymmetric"),
         [IMG, ROI], [[s64([6, 8])], [s64([2, 7])]], _nearest, [[s64([-1, 2])]], "dyn.image.resize2d: size",
         "image.resize2d"),
]


def _module(case):
    params = [relay.var(f"a{k}", shape=a.shape, dtype=str(a.dtype)) for k, a in enumerate(case.args + case.runs[0])]
    return kiln.IRModule.from_expr(relay.Function(params, case.build(*params)))


def _numpy(value):
    return [v.numpy() for v in value] if isinstance(value, list | tuple) else value.numpy()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.op)
def test_compiled_once_and_run_with_two_shapes(case):
    mod = _module(case)
    assert case.op in str(mod)
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    reference = relay.create_executor("debug", mod=mod).evaluate()
    shapes = set()
    for values in case.runs:
        args = case.args + values
        got, want = _numpy(vm.invoke("main", *args)), case.numpy(*args)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(_numpy(reference(*args)), want)
        assert got.dtype == want.dtype
        shapes.add(got.shape)
    assert len(shapes) == 2


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.op)
def test_bad_runtime_value_raises_naming_the_op(case):
    mod = _module(case)
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    reference = relay.create_executor("debug", mod=mod).evaluate()
    for values in case.bad:
        with pytest.raises(KilnError, match=case.error):
            vm.invoke("main", *case.args, *values)
        with pytest.raises(KilnError, match=case.op):
            reference(*case.args, *values)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.op)
def test_dynamic_to_static_with_constant_shape_arguments(case):
    values = case.runs[0]
    params = [relay.var(f"a{k}", shape=a.shape, dtype=str(a.dtype)) for k, a in enumerate(case.args)]
    dyn_args = [relay.var(f"s{k}", shape=v.shape, dtype=str(v.dtype)) for k, v in enumerate(values)]
    call = case.build(*params, *dyn_args)
    # bind the shape arguments to constants after building, so the dyn call is what DynamicToStatic sees
    func = relay.bind(relay.Function(params + dyn_args, call), {v: relay.const(a) for v, a in zip(dyn_args, values,
                                                                                              strict=True)})
    mod = kiln.IRModule.from_expr(relay.Function(params, func.body))
    assert case.op in str(mod)
    out = relay.transform.DynamicToStatic()(mod)
    body = out["main"].body
    assert case.op not in str(body)
    assert case.static in str(body) or isinstance(body, relay.Constant)  # no variable argument: folded whole
    assert not out["main"].checked_type.ret_type.is_dynamic
    want = case.numpy(*case.args, *values)
    got = relay.create_executor("debug", mod=out).evaluate()(*case.args)
    np.testing.assert_array_equal(_numpy(got), want)


def test_shape_of_a_dynamic_tensor_decides_a_broadcast():
    """``broadcast_to(x, shape_of(y))`` with ``y`` of a dynamic batch: one executable, every batch."""
    x, y = relay.var("x", shape=(1, 3)), relay.var("y", shape=(relay.Any(), 3))
    z = relay.broadcast_to(x, relay.shape_of(y, "int64")) + y
    mod = kiln.IRModule.from_expr(relay.Function([x, y], z))
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    xv = np.array([[1, 2, 3]], "float32")
    for batch in (1, 4):
        yv = np.ones((batch, 3), "float32")
        np.testing.assert_array_equal(vm.invoke("main", xv, yv).numpy(), xv + yv)


def test_shape_of_a_static_tensor_makes_the_static_operator():
    x, y = relay.var("x", shape=(1, 3)), relay.var("y", shape=(4, 3))
    mod = kiln.IRModule.from_expr(relay.Function([x, y], relay.zeros(relay.shape_of(y)) + relay.tile(x, [1, 1])))
    assert "dyn.zeros" in str(mod)
    out = relay.transform.DynamicToStatic()(mod)
    assert "dyn." not in str(out) and out["main"].checked_type.ret_type.shape == (4, 3)


def test_builders_keep_the_static_operator_for_constants():
    x = relay.var("x", shape=(2, 3))
    assert relay.broadcast_to(x, relay.const(np.array([2, 2, 3]))).op.name == "broadcast_to"
    assert relay.tile(x, relay.const(np.array([2, 1]))).op.name == "tile"
    assert relay.zeros(relay.const(np.array([2]))).op.name == "zeros"
    assert relay.strided_slice(x, relay.const(np.array([1])), [2]).op.name == "strided_slice"


def test_dynamic_strided_slice_of_named_axes():
    """With ``axes`` (kiln's extension; TVM's builder refuses it) only those axes are sliced, so the others keep
    their static sizes in the type; compiled once, run at two begins against numpy and the interpreter."""
    x, b = relay.var("x", shape=(4, 5, 6)), relay.var("b", shape=(2,), dtype="int64")
    call = relay.strided_slice(x, b, [6, -1], [2, 1], axes=[2, 0])
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([x, b], call)))
    assert mod["main"].ret_type == relay.TensorType((relay.Any(), 5, relay.Any()))
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    reference = relay.create_executor("debug", mod=mod).evaluate()
    a = np.random.default_rng(0).standard_normal((4, 5, 6)).astype("float32")
    for begin in (i64(1, 0), i64(-3, 2)):
        want = a[begin[1]:-1, :, begin[0]:6:2]
        np.testing.assert_array_equal(vm.invoke("main", a, begin).numpy(), want)
        np.testing.assert_array_equal(reference(a, begin).numpy(), want)
    with pytest.raises(KilnError, match="axes"):
        relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([x, b], relay.strided_slice(
            x, b, [6, 1], axes=[2, 2]))))


def test_type_relations_refuse_a_shape_of_unknown_length():
    x, s = relay.var("x", shape=(2, 3)), relay.var("s", shape=(relay.Any(),), dtype="int64")
    with pytest.raises(KilnError, match="dyn.broadcast_to.*static length"):
        relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([x, s], relay.broadcast_to(x, s))))


@pytest.mark.parametrize("dtype", ["float32", "bool", "int8"])
def test_argwhere_counts_at_run_time(dtype):
    """One executable for a tensor of a dynamic leading dimension: every batch, any number of non-zeros (none, all),
    rows in row-major order, against numpy and the reference interpreter."""
    x = relay.var("x", shape=(relay.Any(), 3, 2), dtype=dtype)
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.argwhere(x, "int64")))
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    reference = relay.create_executor("debug", mod=mod).evaluate()
    rng = np.random.default_rng(0)
    for batch, density in ((1, 0.5), (5, 0.3), (4, 0.0), (2, 1.0), (40, 0.5)):
        a = (rng.random((batch, 3, 2)) < density).astype(dtype)
        got = vm.invoke("main", a).numpy()
        np.testing.assert_array_equal(got, np.argwhere(a))
        assert got.dtype == np.int64 and got.shape == (np.count_nonzero(a), 3)
        np.testing.assert_array_equal(reference(a).numpy(), np.argwhere(a))


def test_argwhere_feeds_shape_of():
    """The count of non-zeros decides a later shape: ``zeros(shape_of(argwhere(x)))``."""
    x = relay.var("x", shape=(6,))
    rows = relay.argwhere(x)
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.ones(relay.shape_of(rows, "int64"), "int32")))
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    for a in (np.array([0, 1, 0, 2, 3, 0], "float32"), np.zeros(6, "float32")):
        np.testing.assert_array_equal(vm.invoke("main", a).numpy(), np.ones((np.count_nonzero(a), 1), "int32"))


def test_argwhere_refuses_a_scalar():
    x = relay.var("x", shape=())
    with pytest.raises(KilnError, match="argwhere.*at least one dimension"):
        relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([x], relay.argwhere(x))))


ANY_DATA = [
    ("dyn.strided_slice", lambda x, b, e, s: relay.strided_slice(x, b, e, s), (4,), [i64(0, 1), i64(5, 3), i64(1, 1)],
     lambda a, b, e, s: a[:, 1:3], "float32"),
    ("dyn.nn.pad", lambda x, w: relay.nn.pad(x, w, 1.0), (4,), [np.array([[1, 0], [0, 2]])],
     lambda a, w: np.pad(a, w, constant_values=1.0), "float32"),
    ("dyn.tile", relay.tile, (2,), [i64(2, 2)], np.tile, "float32"),
    ("dyn.topk", lambda x, k: relay.topk(x, k, axis=1, ret_type="values"), (4,), [s64(2)],
     lambda a, k: -np.sort(-a, axis=1)[:, :2], "float32"),
    ("dyn.image.resize2d", lambda x, s: relay.image.resize2d(x, s, None, method="nearest_neighbor",
                                                             coordinate_transformation_mode="asymmetric"),
     (1, 2, 2), [i64(4, 4)], lambda a, s: a.repeat(2, 2).repeat(2, 3), "float32"),
    ("dyn.one_hot", lambda x, d: relay.one_hot(x, 1.0, 0.0, d, -1, "float32"), (), [s64(5)],
     lambda a, d: np.eye(5, dtype="float32")[a], "int32"),
]


@pytest.mark.parametrize("name, build, rest, values, numpy_fn, dtype", ANY_DATA, ids=[c[0] for c in ANY_DATA])
def test_data_with_a_dynamic_batch(name, build, rest, values, numpy_fn, dtype):
    """The data itself has a relay.Any dimension as well: one executable for every batch."""
    x = relay.var("x", shape=(relay.Any(), *rest), dtype=dtype)
    shape_vars = [relay.var(f"s{k}", shape=v.shape, dtype=str(v.dtype)) for k, v in enumerate(values)]
    mod = kiln.IRModule.from_expr(relay.Function([x, *shape_vars], build(x, *shape_vars)))
    assert name in str(mod)
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    reference = relay.create_executor("debug", mod=mod).evaluate()
    for batch in (1, 3):
        a = np.arange(batch * int(np.prod(rest)), dtype=dtype).reshape((batch, *rest)) % 5
        want = numpy_fn(a, *values)
        np.testing.assert_allclose(_numpy(vm.invoke("main", a, *values)), want)
        np.testing.assert_allclose(_numpy(reference(a, *values)), want)


def test_dynamic_pad_wraps_around_by_any_width():
    """``wrap`` (kiln's extension of dyn.nn.pad, ONNX's Pad mode): numpy's periodic padding, also wider than the
    axis, compiled once and run at two widths; DynamicToStatic keeps it dynamic (nn.pad has no such mode)."""
    x, w = relay.var("x", shape=(2, 3)), relay.var("w", shape=(2, 2), dtype="int64")
    mod = kiln.IRModule.from_expr(relay.Function([x, w], relay.nn.pad(x, w, 0.0, "wrap")))
    constant = relay.op.dyn.nn.pad(x, relay.const(np.array([[1, 0], [2, 1]])), relay.const(0.0), "wrap")
    static = relay.transform.DynamicToStatic()(kiln.IRModule.from_expr(relay.Function([x], constant)))
    assert static["main"].body.op.name == "dyn.nn.pad"
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    reference = relay.create_executor("debug", mod=mod).evaluate()
    a = np.random.default_rng(1).standard_normal((2, 3)).astype("float32")
    for widths in (np.array([[1, 0], [2, 1]]), np.array([[0, 3], [4, 7]])):
        want = np.pad(a, widths, mode="wrap")
        np.testing.assert_array_equal(vm.invoke("main", a, widths).numpy(), want)
        np.testing.assert_array_equal(reference(a, widths).numpy(), want)


def test_constant_and_float_shape_arguments_make_static_operators():
    """A Relay constant as sparse_to_dense's output_shape is read as the attribute; a float size tensor of
    dyn.image.resize2d is truncated (TVM's relations check neither dtype)."""
    idx = relay.var("i", shape=(2,), dtype="int32")
    call = relay.sparse_to_dense(idx, relay.const(np.array([4], "int64")), relay.const(np.array([7.0, 8.0], "f4")))
    assert call.op.name == "sparse_to_dense" and call.attrs.output_shape == (4,)
    img, size = relay.var("img", shape=(1, 1, 2, 2)), relay.var("size", shape=(2,), dtype="float32")
    mod = kiln.IRModule.from_expr(relay.Function([img, size], relay.image.resize2d(img, size, method="nearest_neighbor",
                                                                                    coordinate_transformation_mode="asymmetric")))
    data = np.arange(4, dtype="float32").reshape(1, 1, 2, 2)
    got = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(data, np.array([4.0, 2.0], "float32"))
    np.testing.assert_array_equal(got.numpy(), np.repeat(data, 2, axis=2))
