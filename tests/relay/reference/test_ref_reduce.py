"""Reductions of the reference interpreter against independent references (explicit loops where it matters)."""

import itertools

import numpy as np
import pytest

from kiln import relay

RNG = np.random.default_rng(3)
A = RNG.standard_normal((2, 3, 4)).astype("float32")


def run(expr, **inputs):
    params = relay.analysis.free_vars(expr)
    return relay.create_executor().evaluate(relay.Function(params, expr))(**inputs).numpy()


def v(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


@pytest.mark.parametrize("name,ref", [("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min),
                                      ("prod", np.prod)])
@pytest.mark.parametrize("axis,keepdims,exclude,np_axis", [
    (None, False, False, (0, 1, 2)), (1, False, False, (1,)), ((0, 2), True, False, (0, 2)),
    (-1, True, False, (2,)), (1, False, True, (0, 2)), ((0, -1), True, True, (1,)),
])
def test_reductions(name, ref, axis, keepdims, exclude, np_axis):
    out = run(getattr(relay, name)(v("a", A.shape), axis, keepdims, exclude), a=A)
    expected = ref(A.astype("float64"), axis=np_axis, keepdims=keepdims)
    assert out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_integer_sum_stays_int32_and_mean_truncates():
    a = np.array([[1, 2, 4], [-1, -2, -4]], "int32")
    total = run(relay.sum(v("a", (2, 3), "int32"), axis=1), a=a)
    assert total.dtype == np.int32 and total.tolist() == [7, -7]
    mean = run(relay.mean(v("a", (2, 3), "int32"), axis=1), a=a)
    assert mean.dtype == np.int32 and mean.tolist() == [2, -2]  # 7 / 3 and -7 / 3 truncated


def _arg_ref(data, axes, pick_max, last):
    kept = [d for d in range(data.ndim) if d not in axes]
    out = {}
    for k in itertools.product(*[range(data.shape[d]) for d in kept]):
        best, best_index = None, None
        for flat, r in enumerate(itertools.product(*[range(data.shape[d]) for d in axes])):
            index = [0] * data.ndim
            for d, i in zip(kept, k, strict=True):
                index[d] = i
            for d, i in zip(axes, r, strict=True):
                index[d] = i
            value = data[tuple(index)]
            better = best is None or (value > best if pick_max else value < best) or (last and value == best)
            if better:
                best, best_index = value, flat
        out[k] = best_index
    return out


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("axis,exclude", [(None, False), (1, False), ((0, 2), False), (1, True)])
@pytest.mark.parametrize("last", [False, True])
def test_arg_reductions(op, axis, exclude, last):
    data = RNG.integers(0, 3, size=(2, 3, 4)).astype("float32")  # many ties
    out = run(getattr(relay, op)(v("a", data.shape), axis, False, exclude, last), a=data)
    assert out.dtype == np.int32
    if axis is None:
        axes = [0, 1, 2]
    else:
        named = [axis] if isinstance(axis, int) else list(axis)
        axes = [d for d in range(3) if d not in named] if exclude else named
    expected = _arg_ref(data, axes, op == "argmax", last)
    for k, index in expected.items():
        assert out[k] == index


def test_argmax_keepdims_shape():
    out = run(relay.argmax(v("a", A.shape), axis=1, keepdims=True), a=A)
    assert out.shape == (2, 1, 4)
    np.testing.assert_array_equal(out[:, 0, :], np.argmax(A, axis=1))
