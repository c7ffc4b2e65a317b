"""kiln.testing.CompareBeforeAfter: subclasses get a test comparing a transform's output with the expected TIR."""

import pytest

import kiln
from kiln.script import tir as T  # noqa: N812
from kiln.testing import CompareBeforeAfter


class TestSimplifyFoldsAConstantBranch(CompareBeforeAfter):
    transform = kiln.tir.transform.Simplify()

    def before(A: T.Buffer((1,), "int32")):  # noqa: N803
        if 1 < 2:
            A[0] = 42
        else:
            A[0] = 5

    def expected(A: T.Buffer((1,), "int32")):  # noqa: N803
        A[0] = 42


class TestMethodTransformRaises(CompareBeforeAfter):
    def transform(self):
        def inner(mod):
            raise ZeroDivisionError("from the transform")

        return inner

    def before(A: T.Buffer((1,), "int32")):  # noqa: N803
        A[0] = 1

    expected = ZeroDivisionError


def test_a_wrong_expectation_fails():
    case = TestSimplifyFoldsAConstantBranch()

    @T.prim_func
    def before(A: T.Buffer((1,), "int32")):  # noqa: N803
        A[0] = 1 + 1

    @T.prim_func
    def expected(A: T.Buffer((1,), "int32")):  # noqa: N803
        A[0] = 3

    def transform(func):
        return kiln.tir.transform.Simplify()(kiln.IRModule({"main": func}))["main"]

    with pytest.raises(ValueError, match="differs from expected"):
        case.test_compare(before, expected, transform)
