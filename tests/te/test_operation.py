"""Tensor expressions: placeholder, compute, reduce_axis, reducers, indexing (kiln/te/operation.py, tensor.py)."""

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.error import TIRError


def test_placeholder_shape_dtype_name():
    n = te.var("n")
    A = te.placeholder((n, 4), name="A")
    assert A.dtype == "float32"
    assert A.shape[0] is n and A.shape[1].value == 4
    assert isinstance(A.op, te.PlaceholderOp) and A.op.name == "A" and A.name == "A"
    assert A.ndim == 2 and A.op.output(0) is A and A.value_index == 0
    B = te.placeholder(8, dtype="int8", name="B")
    assert B.dtype == "int8" and len(B.shape) == 1


def test_compute_axes_named_after_fcompute_arguments():
    A = te.placeholder((3, 5), name="A")
    B = te.compute((3, 5), lambda row, col: A[row, col] * 2.0, name="B", tag="elemwise")
    assert [iv.var.name_hint for iv in B.op.axis] == ["row", "col"]
    assert [int(iv.dom.extent) for iv in B.op.axis] == [3, 5]
    assert B.op.tag == "elemwise" and B.dtype == "float32" and B.op.reduce_axis == ()
    assert B.op.input_tensors == [A]
    C = te.compute((3, 5), lambda *idx: B[idx] + 1.0, name="C")
    assert [iv.var.name_hint for iv in C.op.axis] == ["i0", "i1"]


def test_compute_dtype_follows_body():
    A = te.placeholder((4,), dtype="int32", name="A")
    B = te.compute((4,), lambda i: A[i].astype("float64"), name="B")
    assert B.dtype == "float64"


def test_tensor_indexing_builds_producer_load():
    A = te.placeholder((4, 6), name="A")
    i, j = te.var("i"), te.var("j")
    load = A[i, j]
    assert isinstance(load, tir.ProducerLoad) and load.producer is A and load.indices == (i, j)
    assert isinstance(A(i, j), tir.ProducerLoad)
    assert A[i][j].indices == (i, j)
    with pytest.raises(TIRError, match="A has 2 dimensions"):
        A(i)
    with pytest.raises(TIRError, match="integers"):
        A[i, 1.5]


def test_reduce_axis_and_sum():
    A = te.placeholder((4, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")
    assert k.iter_type == tir.IterVarType.CommReduce and int(k.dom.extent) == 6
    B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    assert B.op.reduce_axis == (k,)
    body = B.op.body[0]
    assert isinstance(body, tir.Reduce) and body.axis == (k,)
    k2 = te.reduce_axis((1, 5))
    assert int(k2.dom.min) == 1 and int(k2.dom.extent) == 4 and k2.var.name_hint == "rv"


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_a_reduction_over_no_axis_is_its_one_combination(target):
    """te.sum/te.max over ``axis=[]`` (an instance norm of a 2-D tensor reduces no axis) compute the value combined
    once with the initial value, and the stage builds like any other (fuzz seed 90028)."""
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: te.sum(A[i] * 2, axis=[]), name="B")
    C = te.compute((4,), lambda i: te.max(B[i] - 3, axis=[], where=B[i] > 1), name="C")
    assert not B.op.reduce_axis and not isinstance(B.op.body[0], tir.Reduce)
    f = kiln.build(te.create_schedule(C.op), [A, C], target)
    out = kiln.nd.empty((4,), "float32")
    f(kiln.nd.array(np.arange(4, dtype="float32")), out)
    lowest = np.finfo("float32").min
    np.testing.assert_array_equal(out.numpy(), [lowest, 2 * 1 - 3, 2 * 2 - 3, 2 * 3 - 3])


def test_max_min_binary_form():
    x, y = te.var("x"), te.var("y")
    assert isinstance(te.max(x, y), tir.Max)
    assert isinstance(te.min(x, y), tir.Min)


def test_reduction_must_be_whole_expression():
    A = te.placeholder((4, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")
    with pytest.raises(TIRError, match="whole output expression"):
        te.compute((4,), lambda i: te.sum(A[i, k], axis=k) + 1.0, name="B")


def test_fcompute_arity_mismatch():
    with pytest.raises(TIRError, match="2 index arguments but the shape has 3"):
        te.compute((2, 3, 4), lambda i, j: i + j)


def test_multi_output_compute():
    A = te.placeholder((4,), name="A")
    P, Q = te.compute((4,), lambda i: [A[i] + 1.0, A[i] * 2.0], name="PQ")
    assert P.op is Q.op and P.op.num_outputs == 2
    assert (P.value_index, Q.value_index) == (0, 1)
    assert P.name == "PQ.v0" and Q.name == "PQ.v1"


def test_tuple_comm_reducer_builds_one_reduce_per_value():
    argmax = te.comm_reducer(
        lambda x, y: (tir.Select(x[1] >= y[1], x[0], y[0]), tir.Select(x[1] >= y[1], x[1], y[1])),
        lambda t0, t1: (tir.const(-1, t0), tir.min_value(t1)), name="argmax")
    A = te.placeholder((4, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")
    idx, val = te.compute((4,), lambda i: argmax((k.var, A[i, k]), axis=k), name="am")
    r0, r1 = idx.op.body
    assert r0.combiner is r1.combiner and (r0.value_index, r1.value_index) == (0, 1)
    assert idx.dtype == "int32" and val.dtype == "float32"


def test_reducer_values_must_match_the_operands():
    A = te.placeholder((4, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")
    pair = te.comm_reducer(lambda x, y: (x[0] + y[0], x[1] * y[1]), lambda t0, t1: (tir.const(0, t0),), name="pair")
    with pytest.raises(TIRError, match="fcombine and fidentity must give 2 values"):
        te.compute((4,), lambda i: pair((A[i, k], A[i, k]), axis=k), name="p")
    with pytest.raises(TIRError, match="init must give 1 values, got 2"):
        te.compute((4,), lambda i: te.sum(A[i, k], axis=k, init=(1.0, 2.0)), name="s")


def test_reducer_needs_reduction_axes():
    A = te.placeholder((4,), name="A")
    i = te.compute((4,), lambda i: i, name="I").op.axis[0]
    with pytest.raises(TIRError, match="reduction axes"):
        te.sum(A[0], axis=[i])


def test_kiln_exports_te_and_lower():
    assert kiln.te is te
    assert kiln.lower is te.lower


def test_numpy_integer_sizes_index_with_int32():
    import numpy as np

    A = te.placeholder((np.int64(4), np.int32(3)), name="A")
    assert [d.dtype for d in A.shape] == ["int32", "int32"]
    B = te.compute((np.int64(4),), lambda i: A[i, 0], name="B")
    assert B.op.axis[0].var.dtype == "int32"
    k = te.reduce_axis((np.int64(0), np.int64(3)), "k")
    assert k.var.dtype == "int32"


def test_tensor_text():
    A = te.placeholder((4, 8), name="A")
    assert str(A) == "Tensor(shape=[4, 8], op.name=A)"
