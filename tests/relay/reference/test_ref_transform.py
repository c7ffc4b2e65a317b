"""Shape operators of the reference interpreter against independent numpy references."""

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from kiln import relay
from kiln.relay import reference

RNG = np.random.default_rng(2)


def run(expr, **inputs):
    params = relay.analysis.free_vars(expr)
    out = relay.create_executor().evaluate(relay.Function(params, expr))(**inputs)
    return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()


def v(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


A = np.arange(24, dtype="float32").reshape(2, 3, 4)


@pytest.mark.parametrize("newshape,expected", [
    ((6, 4), (6, 4)), ((0, -1), (2, 12)), ((-2,), (2, 3, 4)), ((-3, 4), (6, 4)),
    ((-4, 1, 2, -2), (1, 2, 3, 4)), ((2, -4, -1, 3, 4), (2, 1, 3, 4)), ((-1,), (24,)),
])
def test_reshape_special_values(newshape, expected):
    out = run(relay.reshape(v("a", (2, 3, 4)), newshape), a=A)
    assert out.shape == expected
    np.testing.assert_array_equal(out.reshape(-1), A.reshape(-1))


def test_transpose_squeeze_expand_dims():
    x = v("a", (2, 3, 4))
    np.testing.assert_array_equal(run(relay.transpose(x, (1, 2, 0)), a=A), A.transpose(1, 2, 0))
    np.testing.assert_array_equal(run(relay.transpose(x), a=A), A.transpose(2, 1, 0))
    np.testing.assert_array_equal(run(relay.transpose(x, (-1, 0, 1)), a=A), A.transpose(2, 0, 1))
    b = A.reshape(1, 2, 1, 12)
    y = v("b", (1, 2, 1, 12))
    assert run(relay.squeeze(y), b=b).shape == (2, 12)
    assert run(relay.squeeze(y, axis=[2]), b=b).shape == (1, 2, 12)
    out = run(relay.expand_dims(x, 1, 2), a=A)
    assert out.shape == (2, 1, 1, 3, 4)
    assert run(relay.expand_dims(x, -1), a=A).shape == (2, 3, 4, 1)


def test_concatenate_and_split():
    x, y = v("a", (2, 3, 4)), v("b", (2, 1, 4))
    b = RNG.standard_normal((2, 1, 4)).astype("f4")
    np.testing.assert_array_equal(run(relay.concatenate([x, y], axis=1), a=A, b=b), np.concatenate([A, b], 1))
    np.testing.assert_array_equal(run(relay.concatenate([y, x], axis=-2), a=A, b=b), np.concatenate([b, A], 1))
    parts = run(relay.split(x, 2, axis=2).astuple(), a=A)
    assert [p.tolist() for p in parts] == [A[:, :, :2].tolist(), A[:, :, 2:].tolist()]
    parts = run(relay.split(x, [1, 3], axis=-1).astuple(), a=A)
    assert [p.shape for p in parts] == [(2, 3, 1), (2, 3, 2), (2, 3, 1)]
    np.testing.assert_array_equal(parts[1], A[:, :, 1:3])


def _take_ref(data, indices, axis, mode):
    n = data.shape[axis]
    out_shape = data.shape[:axis] + indices.shape + data.shape[axis + 1:]
    out = np.empty(out_shape, data.dtype)
    for pre in itertools.product(*map(range, data.shape[:axis])):
        for idx in itertools.product(*map(range, indices.shape)):
            i = int(indices[idx])
            i = min(max(i, 0), n - 1) if mode == "clip" else i % n
            out[pre + idx] = data[pre + (i,)]
    return out


@pytest.mark.parametrize("mode", ["clip", "wrap"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_take_modes(mode, axis):
    indices = np.array([[0, 5], [-1, 2], [-7, 3]], "int32")
    out = run(relay.take(v("a", (2, 3, 4)), v("i", (3, 2), "int32"), axis=axis, mode=mode), a=A, i=indices)
    np.testing.assert_array_equal(out, _take_ref(A, indices, axis % 3, mode))


def test_take_flattened_fast_and_batch_dims():
    idx = np.array([0, 23, 7], "int64")
    np.testing.assert_array_equal(run(relay.take(v("a", (2, 3, 4)), v("i", (3,), "int64"), mode="fast"), a=A, i=idx),
                                  [0, 23, 7])
    bidx = np.array([[2, 0], [1, 1]], "int32")  # one row of indices per batch element
    out = run(relay.take(v("a", (2, 3, 4)), v("i", (2, 2), "int32"), axis=1, batch_dims=1), a=A, i=bidx)
    assert out.shape == (2, 2, 4)
    for b in range(2):
        for j in range(2):
            np.testing.assert_array_equal(out[b, j], A[b, bidx[b, j]])
    out = run(relay.take(v("a", (2, 3, 4)), v("i", (2, 2), "int32"), axis=2, batch_dims=1), a=A, i=bidx)
    assert out.shape == (2, 3, 2)
    for b, c, j in itertools.product(range(2), range(3), range(2)):
        assert out[b, c, j] == A[b, c, bidx[b, j]]


@pytest.mark.parametrize("begin,end,strides,axes,mode,expected", [
    ((0, 1), (2, 3), None, None, "end", A[0:2, 1:3]),
    ((1, -1), (-3, 0), (-1, -2), (1, 2), "end", A[:, 1:-3:-1, -1:0:-2]),
    ((2,), (-100,), (-1,), (2,), "end", A[:, :, 2::-1]),
    ((-1, 0, 1), (100, 2, 3), (1, 1, 1), None, "end", A[-1:, 0:2, 1:3]),
    ((0, 1), (1, -1), None, (0, 2), "size", A[0:1, :, 1:]),
    ((1,), (2,), (2,), (1,), "end", A[:, 1:2]),
])
def test_strided_slice(begin, end, strides, axes, mode, expected):
    out = run(relay.strided_slice(v("a", (2, 3, 4)), begin, end, strides, axes, mode), a=A)
    np.testing.assert_array_equal(out, expected)


def test_layout_transform_between_layouts():
    x = RNG.standard_normal((2, 8, 3, 5)).astype("f4")  # NCHW
    nhwc = x.transpose(0, 2, 3, 1)
    nchw4c = x.reshape(2, 2, 4, 3, 5).transpose(0, 1, 3, 4, 2)
    d = v("x", (2, 8, 3, 5))
    np.testing.assert_array_equal(run(relay.layout_transform(d, "NCHW", "NHWC"), x=x), nhwc)
    np.testing.assert_array_equal(run(relay.layout_transform(d, "NCHW", "NCHW4c"), x=x), nchw4c)
    np.testing.assert_array_equal(run(relay.layout_transform(v("x", nhwc.shape), "NHWC", "NCHW"), x=nhwc), x)
    np.testing.assert_array_equal(run(relay.layout_transform(v("x", nchw4c.shape), "NCHW4c", "NHWC"), x=nchw4c), nhwc)
    nchw2c = x.reshape(2, 4, 2, 3, 5).transpose(0, 1, 3, 4, 2)
    np.testing.assert_array_equal(run(relay.layout_transform(v("x", nchw4c.shape), "NCHW4c", "NCHW2c"), x=nchw4c),
                                  nchw2c)
    # kernel layouts: OIHW -> OIHW2i4o element by element
    w = RNG.standard_normal((8, 4, 3, 3)).astype("f4")
    out = run(relay.layout_transform(v("w", w.shape), "OIHW", "OIHW2i4o"), w=w)
    assert out.shape == (2, 2, 3, 3, 2, 4)
    for o, i, h, k in itertools.product(range(8), range(4), range(3), range(3)):
        assert out[o // 4, i // 2, h, k, i % 2, o % 4] == w[o, i, h, k]


def test_layout_transform_with_an_axis_split_twice():
    """OHWI4i2o2i (as TVM's OHWI16i64o2i): I = I_outer * 8 + i4 * 2 + i2, the earlier sub-axis the more significant."""
    w = RNG.standard_normal((4, 16, 3, 3)).astype("f4")
    out = run(relay.layout_transform(v("w", w.shape), "OIHW", "OHWI4i2o2i"), w=w)
    assert out.shape == (2, 3, 3, 2, 4, 2, 2)
    for o, i, h, k in itertools.product(range(4), range(16), range(3), range(3)):
        assert out[o // 2, h, k, i // 8, i // 2 % 4, o % 2, i % 2] == w[o, i, h, k]
    back = run(relay.layout_transform(v("x", out.shape), "OHWI4i2o2i", "OIHW"), x=out)
    np.testing.assert_array_equal(back, w)


def test_shape_of():
    # called directly: the reference implementation does not depend on how the operator's attrs are built
    out = reference.transform.shape_of(SimpleNamespace(dtype="int64"), A)
    assert out.dtype == np.int64 and out.tolist() == [2, 3, 4]
