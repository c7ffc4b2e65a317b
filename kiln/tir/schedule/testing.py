"""Helpers TVM's TIR tests import from ``tvm.tir.schedule.testing``."""

from ...ir.structural import assert_structural_equal


def _without_global_symbol(obj):
    from ...ir.module import IRModule
    from ..function import PrimFunc

    if isinstance(obj, PrimFunc):
        attrs = {k: v for k, v in obj.attrs.items() if k != "global_symbol"}
        return obj.with_fields(attrs=attrs) if len(attrs) != len(obj.attrs) else obj
    if isinstance(obj, IRModule):
        return IRModule({gv: _without_global_symbol(f) for gv, f in obj.functions.items()})
    return obj


def assert_structural_equal_ignore_global_symbol(func1, func2, *args, **kwargs):
    """Assert two PrimFuncs (or modules of them) are structurally equal, their ``global_symbol`` attributes aside."""
    assert_structural_equal(_without_global_symbol(func1), _without_global_symbol(func2), *args, **kwargs)
