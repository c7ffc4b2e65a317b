"""Shared helpers for pass tests: ``before``/``expected`` builders compared structurally, then semantically."""

import pytest

from kiln import relay
from kiln.ir import assert_structural_equal
from kiln.relay.testing import assert_same_results, run_opt_pass


@pytest.fixture
def check_pass():
    """``check_pass(before, passes, expected=None)``: apply, compare with ``expected`` (a function or text), and
    compare results with the reference interpreter on random inputs; returns the transformed function."""

    def check(before, passes, expected=None, opt_level=3, rtol=1e-5, atol=1e-5, **ctx):
        after = run_opt_pass(before, passes, opt_level=opt_level, **ctx)
        if expected is not None:
            if isinstance(expected, str):
                expected = relay.parse(expected)["main"]
            assert_structural_equal(after, relay.infer_type(expected))
        assert_same_results(before, after, rtol=rtol, atol=atol)
        return after

    return check
