"""te.tag_scope: computes declared inside a scope (or a decorated function) carry its tag; scopes do not nest."""

import warnings

import pytest

from kiln import te
from kiln.error import NestedScopeError


def test_with_and_decorator():
    A = te.placeholder((4,), name="A")
    with te.tag_scope("gemm"):
        B = te.compute((4,), lambda i: A[i] * 2.0)
    C = te.compute((4,), lambda i: A[i])
    assert B.op.tag == "gemm" and C.op.tag == ""

    @te.tag_scope(tag="conv")
    def f(x):
        return te.compute(x.shape, lambda i: x[i] + 1.0)

    assert f(A).op.tag == "conv"
    assert f.__name__ == "f"


def test_nesting_and_explicit_tags_are_refused():
    A = te.placeholder((4,), name="A")

    @te.tag_scope(tag="conv")
    def f(x):
        return te.compute(x.shape, lambda i: x[i])

    with pytest.raises(ValueError, match="do not nest"), te.tag_scope("outer"):
        f(A)
    with pytest.raises(NestedScopeError, match="given inside"), te.tag_scope("outer"):
        te.compute((4,), lambda i: A[i], tag="inner")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with te.tag_scope("unused"):
            pass
    assert any("was not used" in str(w.message) for w in caught)
