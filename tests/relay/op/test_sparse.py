"""sparse_fill_empty_rows (kiln/relay/op/sparse.py): against a numpy formulation of its definition, with static
shapes and with every size known only at run time, in the reference interpreter and on the VM."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import TypeInferenceError


def _expected(indices, values, rows, default):
    """Row by row: the row's entries in their order, or one filler entry ``(r, 0, ...)`` when it has none."""
    out_i, out_v, empty = [], [], []
    for r in range(rows):
        mine = [k for k in range(len(indices)) if indices[k, 0] == r]
        empty.append(not mine)
        for k in mine:
            out_i.append(indices[k])
            out_v.append(values[k])
        if not mine:
            out_i.append([r] + [0] * (indices.shape[1] - 1))
            out_v.append(default)
    return (np.array(out_i, indices.dtype).reshape(-1, indices.shape[1]), np.array(out_v, values.dtype),
            np.array(empty))


CASES = [
    (np.array([[0, 1], [0, 3], [2, 0], [3, 1]]), np.array([1.5, 2.0, 3.0, 4.0], "float32"), (5, 6)),
    (np.array([[1, 0, 2], [1, 1, 1], [4, 2, 2]]), np.array([7, 8, 9], "int32"), (6, 3, 3)),
    (np.zeros((0, 2), "int64"), np.zeros(0, "int32"), (3, 4)),
    (np.array([[0, 0], [1, 1], [2, 2]]), np.array([1, 2, 3], "int32"), (3, 3)),
]


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("indices,values,dense_shape", CASES)
def test_sparse_fill_empty_rows(indices, values, dense_shape, dynamic):
    indices = indices.astype("int64")
    args = [indices, values, np.array(dense_shape, "int64"), np.array([-5], values.dtype)]
    shapes = [a.shape for a in args]
    names = ["i", "v", "d", "dv"]
    vs = [relay.var(n, shape=tuple(relay.Any() for _ in s) if dynamic else s, dtype=str(a.dtype))
          for n, s, a in zip(names, shapes, args, strict=True)]
    func = relay.Function(vs, relay.sparse_fill_empty_rows(*vs))
    want = _expected(indices, values, dense_shape[0], -5)
    for kind in ("debug", "vm"):
        out = relay.create_executor(kind, mod=kiln.IRModule.from_expr(func), target="llvm").evaluate()(*args)
        for got, expected in zip(out, want, strict=True):
            np.testing.assert_array_equal(got.numpy(), expected)
    typed = relay.infer_type(func).body.checked_type
    assert [f.dtype for f in typed.fields] == ["int64", str(values.dtype), "bool"]


def test_bad_arguments_name_the_operator():
    i, v = relay.var("i", shape=(3,), dtype="int64"), relay.var("v", shape=(3,))
    d, dv = relay.var("d", shape=(2,), dtype="int64"), relay.var("dv", shape=(1,))
    with pytest.raises(TypeInferenceError, match="sparse_fill_empty_rows"):
        relay.infer_type(relay.sparse_fill_empty_rows(i, v, d, dv))
