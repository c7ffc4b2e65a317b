"""Tests of kiln/tir/transform/make_packed_api.py: the calling convention and its argument checks."""

import numpy as np
import pytest

from kiln import tir
from kiln.error import RuntimeArgumentError
from kiln.ir import PrimType
from kiln.tir.evaluator import call_packed
from kiln.tir.transform import MakePackedAPI


def _scale(helpers, symbolic=False):
    n = tir.Var("n", "int32")
    dim = n if symbolic else 8
    A = tir.decl_buffer((dim, 4), "float32", "A")
    B = tir.decl_buffer((dim, 4), "float32", "B")
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    alpha = tir.Var("alpha", "float32")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    body = tir.For(i, 0, dim, tir.ForKind.SERIAL, tir.For(j, 0, 4, tir.ForKind.SERIAL,
                                                          tir.BufferStore(B, A[i, j] * alpha, [i, j])))
    return helpers.make_func([a, b, alpha], body, {a: A, b: B}, name="scale")


def test_signature_and_attrs(helpers):
    after = helpers.run_pass(MakePackedAPI(), _scale(helpers))
    assert [p.name_hint for p in after.params] == ["args", "arg_type_ids", "num_args", "out_ret_value",
                                                  "out_ret_tcode", "resource_handle"]
    assert [p.dtype for p in after.params] == ["handle", "handle", "int32", "handle", "handle", "handle"]
    assert after.ret_type == PrimType("int32") and after.buffer_map == {}
    assert after.attrs["calling_conv"] == 1 and after.attrs["global_symbol"] == "scale"
    assert isinstance(after.body, tir.AssertStmt)
    assert helpers.run_pass(MakePackedAPI(), after) is after


def test_runs_like_the_runtime(helpers):
    after = helpers.run_pass(MakePackedAPI(), _scale(helpers))
    a = np.random.default_rng(0).standard_normal((8, 4)).astype("float32")
    b = np.zeros((8, 4), "float32")
    assert call_packed(after, a, b, 2.5) == 0
    np.testing.assert_allclose(b, a * 2.5, rtol=1e-6)
    call_packed(after, a, b, 2)  # an int is accepted for a float parameter
    np.testing.assert_allclose(b, a * 2, rtol=1e-6)


@pytest.mark.parametrize("args,message", [
    (lambda a, b: (a, b), "scale: expected 3 arguments (A, B, alpha)"),
    (lambda a, b: (a, np.zeros((8, 5), "float32"), 1.0), "scale: argument B.shape[1] must be 4"),
    (lambda a, b: (a, np.zeros((8, 4), "float64"), 1.0), "scale: argument B must have dtype float32"),
    (lambda a, b: (a, np.zeros((32,), "float32"), 1.0), "scale: argument B must have 2 dimensions"),
    (lambda a, b: (a, 3, 1.0), "scale: argument B (#1) must be a tensor"),
    (lambda a, b: (a, b, a), "scale: argument alpha (#2) must be a float"),
    (lambda a, b: (a, None, 1.0), "scale: argument B (#1) must be a tensor"),
])
def test_argument_errors_name_the_argument(helpers, args, message):
    after = helpers.run_pass(MakePackedAPI(), _scale(helpers))
    a, b = np.zeros((8, 4), "float32"), np.zeros((8, 4), "float32")
    with pytest.raises(RuntimeArgumentError) as info:
        call_packed(after, *args(a, b))
    assert message in str(info.value)


def test_symbolic_shape_is_bound_then_checked(helpers):
    after = helpers.run_pass(MakePackedAPI(), _scale(helpers, symbolic=True))
    a = np.ones((5, 4), "float32")
    b = np.zeros((5, 4), "float32")
    call_packed(after, a, b, 3.0)
    assert (b == 3.0).all()
    with pytest.raises(RuntimeArgumentError, match=r"argument B.shape\[0\] must equal A.shape\[0\] \(n\)"):
        call_packed(after, a, np.zeros((6, 4), "float32"), 3.0)


def test_strides_and_alignment_checks(helpers):
    from kiln.tir.evaluator import DLTensorRecord, evaluate

    after = helpers.run_pass(MakePackedAPI(), _scale(helpers))
    a = np.zeros((8, 4), "float32")
    b = np.zeros((8, 4), "float32")
    bad_strides = DLTensorRecord(b, strides=np.array([1, 8], dtype=np.int64))
    codes = np.array([7, 7, 2], dtype=np.int32)
    with pytest.raises(RuntimeArgumentError, match="argument B must be a compact"):
        evaluate(after, [DLTensorRecord(_aligned(a)), bad_strides, np.float64(1.0)], codes, 3, None, None, None)
    raw = np.zeros(8 * 4 + 1, "float32")
    misaligned = raw[1:].reshape(8, 4) if raw[1:].ctypes.data % 64 else raw[:-1].reshape(8, 4)
    with pytest.raises(RuntimeArgumentError, match="argument A must be 64-byte aligned"):
        evaluate(after, [DLTensorRecord(misaligned), DLTensorRecord(_aligned(b)), np.float64(1.0)], codes, 3,
                 None, None, None)


def _aligned(arr):
    from kiln.runtime import ndarray

    return ndarray.array(arr).handle


def test_a_dimension_is_checked_in_64_bits(helpers):
    """A shape of 2**32 + 8 must not pass for 8 (int32 dimensions were compared after a truncating cast)."""
    from kiln.tir.evaluator import DLTensorRecord, evaluate

    after = helpers.run_pass(MakePackedAPI(), _scale(helpers))
    a, b = np.zeros((8, 4), "float32"), np.zeros((8, 4), "float32")
    huge = DLTensorRecord(_aligned(b))
    huge.shape = np.array([2**32 + 8, 4], dtype=np.int64)
    codes = np.array([7, 7, 2], dtype=np.int32)
    with pytest.raises(RuntimeArgumentError, match=r"argument B.shape\[0\] must be 8"):
        evaluate(after, [DLTensorRecord(_aligned(a)), huge, np.float64(1.0)], codes, 3, None, None, None)


def test_a_symbolic_dimension_must_fit_its_variable(helpers):
    """A dimension bound to an int32 variable is refused when the array's is larger than int32 holds, and a later
    array's dimension must equal it in 64 bits."""
    from kiln.tir.evaluator import DLTensorRecord, evaluate

    after = helpers.run_pass(MakePackedAPI(), _scale(helpers, symbolic=True))
    a, b = np.zeros((8, 4), "float32"), np.zeros((8, 4), "float32")
    huge = DLTensorRecord(_aligned(a))
    huge.shape = np.array([2**32 + 8, 4], dtype=np.int64)
    codes = np.array([7, 7, 2], dtype=np.int32)
    with pytest.raises(RuntimeArgumentError, match=r"argument A.shape\[0\] does not fit the int32 of n"):
        evaluate(after, [huge, DLTensorRecord(_aligned(b)), np.float64(1.0)], codes, 3, None, None, None)
    huge_b = DLTensorRecord(_aligned(b))
    huge_b.shape = np.array([2**32 + 8, 4], dtype=np.int64)
    with pytest.raises(RuntimeArgumentError, match=r"argument B.shape\[0\] must equal A.shape\[0\] \(n\)"):
        evaluate(after, [DLTensorRecord(_aligned(a)), huge_b, np.float64(1.0)], codes, 3, None, None, None)
