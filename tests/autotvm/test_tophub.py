"""tophub.context: no packages are fetched; the context applies only extra files' records, so a template gets its
default config (TVM's behaviour for a target TopHub has no package for)."""

import pytest

from kiln import autotvm
from kiln.error import KilnError


def test_context_is_an_empty_history():
    ctx = autotvm.tophub.context("llvm")
    assert isinstance(ctx, autotvm.ApplyHistoryBest) and not ctx.best_by_targetkey
    with ctx:
        assert autotvm.DispatchContext.current is ctx


def test_bad_target():
    with pytest.raises(KilnError):
        autotvm.tophub.context("no_such_target")
