import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.error import KilnError, OpAttributeInvalid, TypeInferenceError
from kiln.relay.op.tensor import reshape_shape


def typed(expr):
    return relay.infer_type(expr).checked_type


def v(shape, dtype="float32", name="x"):
    return relay.var(name, shape=shape, dtype=dtype)


@pytest.mark.parametrize("a,b,out", [((2, 3), (3,), (2, 3)), ((4, 1, 5), (3, 1), (4, 3, 5)), ((), (2, 2), (2, 2))])
def test_broadcast(a, b, out):
    assert typed(relay.add(v(a), v(b, name="y"))).shape == out


def test_broadcast_errors_name_op_and_shapes():
    with pytest.raises(TypeInferenceError, match=r"add: .*\(2, 3\) and \(4,\)"):
        typed(relay.add(v((2, 3)), v((4,), name="y")))
    with pytest.raises(TypeInferenceError, match="one dtype.*float32, int32"):
        typed(relay.multiply(v((2,)), v((2,), "int32", "y")))


def test_unary_and_cast_and_clip():
    x = v((2, 3))
    for build in (relay.negative, relay.exp, relay.log, relay.sqrt, relay.rsqrt, relay.tanh, relay.sigmoid,
                  relay.abs, relay.erf):
        assert typed(build(x)) == x.type_annotation
    assert typed(relay.cast(x, "int8")).dtype == "int8"
    assert typed(relay.clip(x, -1, 1)).shape == (2, 3)
    with pytest.raises(OpAttributeInvalid, match="a_max"):
        relay.clip(x, 2, 1)
    assert typed(x + 1.0).shape == (2, 3)
    assert typed(2.0 * x - x / x).shape == (2, 3)
    assert typed(-x).shape == (2, 3)


@pytest.mark.parametrize("shape,newshape,out", [
    ((2, 3, 4), (6, 4), (6, 4)),
    ((2, 3, 4), (-1,), (24,)),
    ((2, 3, 4), (0, -1), (2, 12)),
    ((2, 3, 4), (-2,), (2, 3, 4)),
    ((2, 3, 4), (2, -2), (2, 3, 4)),
    ((2, 3, 4), (-3, 4), (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
    ((2, 3, 4), (-4, -1, 1, 3, 4), (2, 1, 3, 4)),
    ((6,), (0,), (6,)),
])
def test_reshape_special_values(shape, newshape, out):
    assert reshape_shape(shape, newshape) == out
    assert typed(relay.reshape(v(shape), newshape)).shape == out


def test_reshape_errors():
    with pytest.raises(TypeInferenceError, match="reshape"):
        typed(relay.reshape(v((2, 3)), (4, 2)))
    with pytest.raises(TypeInferenceError, match="more than one -1"):
        typed(relay.reshape(v((2, 3)), (-1, -1)))


def test_transpose_squeeze_expand():
    x = v((2, 3, 4))
    assert typed(relay.transpose(x)).shape == (4, 3, 2)
    assert typed(relay.transpose(x, (0, 2, 1))).shape == (2, 4, 3)
    with pytest.raises(TypeInferenceError, match="permutation"):
        typed(relay.transpose(x, (0, 0, 1)))
    y = v((1, 3, 1))
    assert typed(relay.squeeze(y)).shape == (3,)
    assert typed(relay.squeeze(y, axis=[0])).shape == (3, 1)
    with pytest.raises(TypeInferenceError, match="size 3"):
        typed(relay.squeeze(y, axis=[1]))
    assert typed(relay.expand_dims(x, 1, 2)).shape == (2, 1, 1, 3, 4)
    assert typed(relay.expand_dims(x, -1)).shape == (2, 3, 4, 1)


def test_concatenate_split():
    a, b = v((2, 3), name="a"), v((2, 5), name="b")
    assert typed(relay.concatenate([a, b], axis=1)).shape == (2, 8)
    with pytest.raises(TypeInferenceError, match="concatenate"):
        typed(relay.concatenate([a, b], axis=0))
    parts = relay.split(v((6, 4)), 3, axis=0)
    t = typed(parts.astuple())
    assert [f.shape for f in t.fields] == [(2, 4)] * 3
    assert typed(parts[2]).shape == (2, 4)
    parts = relay.split(v((7, 4)), [2, 5], axis=0)
    assert [f.shape for f in typed(parts.astuple()).fields] == [(2, 4), (3, 4), (2, 4)]
    with pytest.raises(TypeInferenceError, match="sections"):
        typed(relay.split(v((7, 4)), 3).astuple())


def test_take():
    data, idx = v((5, 6)), v((2, 3), "int32", "i")
    assert typed(relay.take(data, idx)).shape == (2, 3)
    assert typed(relay.take(data, idx, axis=1)).shape == (5, 2, 3)
    with pytest.raises(TypeInferenceError, match="integer"):
        typed(relay.take(data, v((2,), name="f"), axis=0))


@pytest.mark.parametrize("begin,end,strides,axes,mode,out", [
    ((0, 1), (2, 3), None, None, "end", (2, 2, 6)),
    ((1,), (-1,), None, None, "end", (2, 4, 6)),
    ((0,), (100,), (2,), None, "end", (2, 4, 6)),
    ((3,), (0,), (-1,), None, "end", (3, 4, 6)),
    ((1, 2), (2, -1), None, (1, 2), "size", (4, 2, 4)),
    ((1,), (2,), None, (2,), "end", (4, 4, 1)),
])
def test_strided_slice(begin, end, strides, axes, mode, out):
    assert typed(relay.strided_slice(v((4, 4, 6)), begin, end, strides, axes, mode)).shape == out


def test_where_init_layout_transform():
    c = v((2, 1), "bool", "c")
    assert typed(relay.where(c, v((1, 3)), v((2, 3), name="y"))).shape == (2, 3)
    assert typed(relay.zeros((2, 3), "int32")) == relay.TensorType((2, 3), "int32")
    assert typed(relay.ones((4,))).shape == (4,)
    assert typed(relay.full(relay.const(1.5), (3,), "float32")).shape == (3,)
    x = v((1, 32, 8, 8))
    assert typed(relay.layout_transform(x, "NCHW", "NHWC")).shape == (1, 8, 8, 32)
    assert typed(relay.layout_transform(x, "NCHW", "NCHW16c")).shape == (1, 2, 8, 8, 16)
    with pytest.raises(TypeInferenceError, match="layout_transform"):
        typed(relay.layout_transform(v((1, 30, 8, 8)), "NCHW", "NCHW16c"))
    with pytest.raises(OpAttributeInvalid, match="dst_layout"):
        relay.layout_transform(x, "NCHW", "NC?W")


def test_argument_count_checked():
    with pytest.raises(KilnError, match="takes 2 arguments"):
        relay.op.make_call("add", [v((1,))])


def test_full_without_dtype_takes_the_fill_values():
    """TVM's rule: ``relay.full`` with no dtype has the fill value's dtype (issue 13)."""
    assert typed(relay.full(relay.const(7, "int64"), (2,))) == relay.TensorType((2,), "int64")
    assert typed(relay.full(v((), "float16", "f"), (3,))) == relay.TensorType((3,), "float16")
    assert typed(relay.full(2, (2, 2))) == relay.TensorType((2, 2), "int32")  # a Python int is an int32 constant
    assert typed(relay.full(2, (2,), "float64")) == relay.TensorType((2,), "float64")
    f = v((), "int64", "f")
    mod = kiln.IRModule.from_expr(relay.Function([f], relay.full(f, (3,))))
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm")
    m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    m.set_input("f", np.array(2**40, "int64"))
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.full(3, 2**40, "int64"))


def test_split_along_a_dimension_known_at_run_time():
    """Sections of a run-time size are run-time sizes; pieces between given indices keep their static sizes, the
    last one does not. The VM computes them all."""
    x = relay.var("x", shape=(relay.Any(), 3))
    assert [str(f) for f in relay.infer_type(relay.split(x, (1, 3), axis=0).astuple()).checked_type.fields] == [
        "Tensor[(1, 3), float32]", "Tensor[(2, 3), float32]", "Tensor[(?, 3), float32]"]
    data = np.arange(18, dtype="float32").reshape(6, 3)
    for ios, want in ((2, [data[:3], data[3:]]), ((1, 3), [data[:1], data[1:3], data[3:]])):
        func = relay.Function([x], relay.split(x, ios, axis=0).astuple())
        out = relay.create_executor("vm", mod=kiln.IRModule.from_expr(func), target="llvm").evaluate()(data)
        for got, expected in zip(out, want, strict=True):
            np.testing.assert_array_equal(got.numpy(), expected)
