"""Operators of kiln/relay/op/transform.py: type relations, errors, and the numpy references against numpy."""

import numpy as np
import pytest

from kiln import relay
from kiln.error import OpAttributeInvalid, TypeInferenceError
from kiln.ir import Op
from kiln.relay.op import OpPattern

RNG = np.random.default_rng(11)


def typed(expr):
    return relay.infer_type(expr).checked_type


def run(expr, **inputs):
    params = relay.analysis.free_vars(expr)
    out = relay.create_executor().evaluate(relay.Function(params, expr))(**inputs)
    return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()


def v(shape, dtype="float32", name="x"):
    return relay.var(name, shape=shape, dtype=dtype)


def test_patterns_follow_tvm():
    expected = {"broadcast_to": OpPattern.BROADCAST, "tile": OpPattern.BROADCAST, "repeat": OpPattern.BROADCAST,
                "reverse": OpPattern.INJECTIVE, "gather": OpPattern.INJECTIVE, "gather_nd": OpPattern.INJECTIVE,
                "one_hot": OpPattern.OUT_ELEMWISE_FUSABLE, "cumsum": OpPattern.OPAQUE, "cumprod": OpPattern.OPAQUE,
                "scatter_elements": OpPattern.OPAQUE, "scatter_nd": OpPattern.OPAQUE}
    for name, pattern in expected.items():
        assert Op.get(name).get_attr("TOpPattern") == pattern


def test_broadcast_to():
    a = RNG.standard_normal((3, 1)).astype("float32")
    assert typed(relay.broadcast_to(v((3, 1)), (2, 3, 4))).shape == (2, 3, 4)
    np.testing.assert_array_equal(run(relay.broadcast_to(v((3, 1)), (2, 3, 4)), x=a), np.broadcast_to(a, (2, 3, 4)))
    with pytest.raises(TypeInferenceError, match=r"broadcast_to: .*\(2, 2\)"):
        typed(relay.broadcast_to(v((3, 1)), (2, 2)))
    with pytest.raises(TypeInferenceError, match="cannot be broadcast"):
        typed(relay.broadcast_to(v((2, 3)), (3,)))


@pytest.mark.parametrize("shape,reps", [((2, 3), (2, 1)), ((2, 3), (3,)), ((3,), (2, 2)), ((2, 1, 2), (1, 0, 2))])
def test_tile(shape, reps):
    a = RNG.standard_normal(shape).astype("float32")
    out = run(relay.tile(v(shape), reps), x=a)
    np.testing.assert_array_equal(out, np.tile(a, reps))
    assert typed(relay.tile(v(shape), reps)).shape == np.tile(a, reps).shape
    with pytest.raises(OpAttributeInvalid, match="reps"):
        relay.tile(v(shape), (-1,))


def test_repeat_and_reverse():
    a = RNG.standard_normal((2, 3)).astype("float32")
    np.testing.assert_array_equal(run(relay.repeat(v((2, 3)), 3, -1), x=a), np.repeat(a, 3, axis=1))
    np.testing.assert_array_equal(run(relay.reverse(v((2, 3)), 0), x=a), a[::-1])
    with pytest.raises(TypeInferenceError, match="reverse axis 2"):
        typed(relay.reverse(v((2, 3)), 2))
    with pytest.raises(OpAttributeInvalid, match="repeats"):
        relay.repeat(v((2, 3)), 0, 0)


def test_gather_is_take_along_axis():
    a = RNG.standard_normal((3, 4)).astype("float32")
    idx = RNG.integers(0, 4, (2, 5)).astype("int64")
    out = run(relay.gather(v((3, 4)), 1, v((2, 5), "int64", "i")), x=a, i=idx)
    np.testing.assert_array_equal(out, np.take_along_axis(a[:2], idx, axis=1))
    with pytest.raises(TypeInferenceError, match="integer dtype"):
        typed(relay.gather(v((3, 4)), 1, v((3, 4), name="i")))
    with pytest.raises(TypeInferenceError, match="rank"):
        typed(relay.gather(v((3, 4)), 1, v((3,), "int32", "i")))
    with pytest.raises(Exception, match="out of range"):
        run(relay.gather(v((3, 4)), 0, v((1, 1), "int32", "i")), x=a, i=np.array([[3]], "int32"))


def test_gather_nd_with_and_without_batch_dims():
    a = RNG.standard_normal((2, 3, 4)).astype("float32")
    idx = np.array([[0, 1], [1, 2], [1, 0]]).T  # index tuples (0,1), (1,2), (1,0) along the first axis
    out = run(relay.gather_nd(v((2, 3, 4)), relay.const(idx)), x=a)
    np.testing.assert_array_equal(out, np.stack([a[0, 1], a[1, 2], a[1, 0]]))
    assert typed(relay.gather_nd(v((2, 3, 4)), relay.const(idx))).shape == (3, 4)
    batched = run(relay.gather_nd(v((2, 3, 4)), relay.const(np.array([[2, 0]])), batch_dims=1), x=a)
    np.testing.assert_array_equal(batched, np.stack([a[0, 2], a[1, 0]]))
    with pytest.raises(TypeInferenceError, match="do not fit"):
        typed(relay.gather_nd(v((2, 3)), relay.const(np.zeros((3, 1), "int32"))))


def test_one_hot():
    idx = np.array([[0, 2], [1, 5]], "int32")
    out = run(relay.one_hot(v((2, 2), "int32", "i"), 3.0, -1.0, 4, 1, "float32"), i=idx)
    expected = np.where(np.arange(4)[None, :, None] == idx[:, None, :], 3.0, -1.0).astype("float32")
    np.testing.assert_array_equal(out, expected)
    assert typed(relay.one_hot(v((2, 2), "int32", "i"), 1, 0, 4, -1, "int64")) == relay.TensorType((2, 2, 4), "int64")
    with pytest.raises(TypeInferenceError, match="scalars"):
        typed(relay.one_hot(v((2,), "int32", "i"), relay.const(np.ones(2, "float32")), 0.0, 3, -1, "float32"))


@pytest.mark.parametrize("axis,exclusive", [(None, False), (0, False), (1, True), (-1, False)])
def test_cumsum_and_cumprod(axis, exclusive):
    a = RNG.integers(1, 4, (3, 4)).astype("int32")
    flat = a.reshape(-1) if axis is None else a
    ax = 0 if axis is None else axis
    want_sum, want_prod = np.cumsum(flat, axis=ax), np.cumprod(flat, axis=ax)
    if exclusive:
        want_sum, want_prod = want_sum - flat, want_prod // flat
    got_sum = run(relay.cumsum(v((3, 4), "int32"), axis, exclusive=exclusive), x=a)
    got_prod = run(relay.cumprod(v((3, 4), "int32"), axis, exclusive=exclusive), x=a)
    np.testing.assert_array_equal(got_sum, want_sum)
    np.testing.assert_array_equal(got_prod, want_prod)
    assert typed(relay.cumsum(v((3, 4), "int32"), axis, dtype="float32")).dtype == "float32"


@pytest.mark.parametrize("reduction", ["update", "add", "mul", "min", "max", "mean"])
def test_scatter_elements(reduction):
    a = RNG.standard_normal((3, 4)).astype("float32")
    idx = np.array([[0, 2, 2], [3, 1, 0]], "int64")
    upd = RNG.standard_normal((2, 3)).astype("float32")
    out = run(relay.scatter_elements(v((3, 4)), v((2, 3), "int64", "i"), v((2, 3), name="u"), axis=1,
                                     reduction=reduction), x=a, i=idx, u=upd)
    want = a.copy()
    for r in range(2):
        for c in range(3):
            k = idx[r, c]
            if reduction == "update":
                want[r, k] = upd[r, c]
            elif reduction == "mean":
                continue
            else:
                want[r, k] = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}[reduction](
                    want[r, k], upd[r, c])
    if reduction == "mean":  # row 0 hits column 2 twice: (a + u1 + u2) / 3
        want[0, 0] = (a[0, 0] + upd[0, 0]) / 2
        want[0, 2] = (a[0, 2] + upd[0, 1] + upd[0, 2]) / 3
        want[1, 3], want[1, 1], want[1, 0] = [(a[1, k] + upd[1, c]) / 2 for c, k in enumerate([3, 1, 0])]
    np.testing.assert_allclose(out, want, rtol=1e-6)
    with pytest.raises(TypeInferenceError, match="one shape"):
        typed(relay.scatter_elements(v((3, 4)), v((2, 3), "int64", "i"), v((2, 2), name="u")))
    with pytest.raises(OpAttributeInvalid, match="reduction"):
        relay.scatter_elements(v((3, 4)), v((2, 3), "int64", "i"), v((2, 3), name="u"), reduction="sum")


@pytest.mark.parametrize("mode", ["update", "add", "max"])
def test_scatter_nd(mode):
    a = RNG.standard_normal((4, 3)).astype("float32")
    idx = np.array([[0, 2, 0]])  # rows 0, 2 and 0 again (M = 1)
    upd = RNG.standard_normal((3, 3)).astype("float32")
    out = run(relay.scatter_nd(v((4, 3)), relay.const(idx), v((3, 3), name="u"), mode), x=a, u=upd)
    want = a.copy()
    if mode == "update":
        want[0], want[2] = upd[2], upd[1]
    elif mode == "add":
        want[0] += upd[0] + upd[2]
        want[2] += upd[1]
    else:
        want[0] = np.maximum(np.maximum(a[0], upd[0]), upd[2])
        want[2] = np.maximum(a[2], upd[1])
    np.testing.assert_allclose(out, want, rtol=1e-6)
    with pytest.raises(TypeInferenceError, match="scatter_nd: updates"):
        typed(relay.scatter_nd(v((4, 3)), relay.const(idx), v((3, 2), name="u")))
