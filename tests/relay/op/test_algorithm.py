"""``topk`` (kiln/relay/op/algorithm.py): relation and the numpy reference, ties included."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.relay.reference.algorithm import stable_order


def run(expr, **inputs):
    params = relay.analysis.free_vars(expr)
    out = relay.create_executor().evaluate(relay.Function(params, expr))(**inputs)
    return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()


@pytest.mark.parametrize("is_ascend", [False, True])
def test_topk_ties_keep_the_lower_index(is_ascend):
    x = relay.var("x", shape=(2, 5), dtype="int32")
    data = np.array([[3, 1, 3, 2, 1], [np.iinfo("int32").min, 0, 0, 5, np.iinfo("int32").min]], "int32")
    values, indices = run(relay.topk(x, 3, axis=1, is_ascend=is_ascend).astuple(), x=data)
    if is_ascend:
        assert indices.tolist() == [[1, 4, 3], [0, 4, 1]]
    else:
        assert indices.tolist() == [[0, 2, 3], [3, 1, 2]]
    np.testing.assert_array_equal(values, np.take_along_axis(data, indices, 1))
    assert indices.dtype == np.int32


def test_topk_ret_types_and_k_zero():
    x = relay.var("x", shape=(4, 3))
    data = np.random.default_rng(0).standard_normal((4, 3)).astype("float32")
    vals = run(relay.topk(x, 0, axis=0, ret_type="values"), x=data)
    np.testing.assert_array_equal(vals, -np.sort(-data, axis=0))
    idx = run(relay.topk(x, 2, axis=0, ret_type="indices", dtype="int64"), x=data)
    assert idx.dtype == np.int64 and idx.shape == (2, 3)
    assert relay.infer_type(relay.topk(x, 9, axis=0).astuple()).checked_type.fields[0].shape == (4, 3)


def test_stable_order_descending_matches_lexsort():
    data = np.random.default_rng(1).integers(0, 3, 50)
    order = stable_order(data, 0, ascending=False)
    np.testing.assert_array_equal(order, np.lexsort((np.arange(50), -data)))


def _numpy_unique(data, is_sorted):
    """The expected results, from numpy's ``unique`` reordered by first occurrence when not sorted."""
    values, first, inverse, counts = np.unique(data, return_index=True, return_inverse=True, return_counts=True)
    if not is_sorted:
        order = np.argsort(first)
        values, first, counts, inverse = values[order], first[order], counts[order], np.argsort(order)[inverse]
    return values, first, inverse.reshape(-1), counts


@pytest.mark.parametrize("is_sorted", [True, False])
@pytest.mark.parametrize("dynamic", [False, True])
def test_unique_against_numpy(is_sorted, dynamic):
    rng = np.random.default_rng(11)
    data = rng.integers(0, 6, 12).astype("int64")
    x = relay.var("x", shape=(relay.Any(),) if dynamic else data.shape, dtype="int64")
    func = relay.Function([x], relay.unique(x, is_sorted, return_counts=True).astuple())
    values, first, inverse, counts = _numpy_unique(data, is_sorted)
    k = len(values)
    for kind in ("debug", "vm") if dynamic else ("debug", "vm", "graph"):
        out = relay.create_executor(kind, mod=kiln.IRModule.from_expr(func), target="llvm").evaluate()(data)
        got_values, got_first, got_inverse, got_count, got_counts = (o.numpy() for o in out)
        assert got_count.tolist() == [k] and got_first.dtype == "int32" and got_values.shape == data.shape
        np.testing.assert_array_equal(got_values[:k], values)
        np.testing.assert_array_equal(got_first[:k], first)
        np.testing.assert_array_equal(got_inverse, inverse)
        np.testing.assert_array_equal(got_counts[:k], counts)


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_topk_indices_in_a_float_dtype(target):
    """TVM's topk takes any index dtype (its DynamicToStatic tests ask for float32 indices)."""
    data = np.array([[3.0, 1.0, 4.0, 1.5], [9.0, 2.0, 6.0, 5.0]], "float32")
    x = relay.var("x", shape=data.shape)
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.topk(x, 2, ret_type="indices", dtype="float32")))
    got = relay.create_executor("graph", mod=mod, target=target).evaluate()(data).numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.argsort(-data, axis=1, kind="stable")[:, :2].astype("float32"))
