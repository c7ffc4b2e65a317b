"""MergeComposite: every match of a named pattern becomes a call of a function marked ``Composite=<name>``
(TVM's pass; the first step of bringing an external code generator its operator combinations).

The pattern table is a list of ``(name, pattern)`` or ``(name, pattern, check)`` entries, applied in order: an
earlier pattern claims its matches first, and ``check(root_call)`` may refuse a match. Each composite function also
carries ``PartitionedFromPattern``, the operators it was made from, as TVM's ``partition`` writes it.
"""

from dataclasses import dataclass

from ...error import KilnError
from ...ir.transform import PassInfo, register_pass
from ..dataflow_pattern import DFPattern
from ..dataflow_pattern.rewrite import partition
from .function_pass import FunctionPass
from .infer_type import infer_type


def _entries(pattern_table):
    for entry in pattern_table:
        if not isinstance(entry, (tuple, list)) or len(entry) not in (2, 3) or not isinstance(entry[1], DFPattern):
            raise KilnError(f"MergeComposite: a pattern table entry is (name, pattern) or (name, pattern, check), "
                            f"not {entry!r}")
        yield entry[0], entry[1], entry[2] if len(entry) == 3 else (lambda call: True)


@register_pass("MergeComposite")
@dataclass(frozen=True)
class MergeComposite(FunctionPass):
    """Wrap each match of the table's patterns in a function marked ``Composite``.

    Parameters
    ----------
    pattern_table : list of (str, DFPattern) or (str, DFPattern, callable)
        Named patterns, matched in order, with optional checks of the matched root call.
    """

    pattern_table: tuple | list = ()
    info = PassInfo(0, "MergeComposite")

    def transform_function(self, func, mod, ctx):
        for name, pattern, check in _entries(self.pattern_table):
            func = infer_type(partition(pattern, func, {"Composite": name}, check), mod)
        return func
