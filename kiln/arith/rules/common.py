"""What every rule table of :mod:`kiln.arith.rules` shares: the placeholders (TVM's ``PVar`` names, so a rule reads
as TVM's does), the guards of a table's sections, and the helpers rule conditions use."""

from ...error import TIRError
from ...tir import dtype as _dt
from ...tir import expr as E
from ..pattern import pconsts, pvars

EQ_, LT_, LE_, GT_, GE_, NE_, UNKNOWN = 1, 2, 3, 4, 5, 6, 7
"""TVM's ``CompareResult`` bits: what is known of ``a`` against ``b`` (``LE_ == EQ_ | LT_``); ``&`` intersects."""

x, y, z, b1, b2, s1, s2, lanes = pvars("x y z b1 b2 s1 s2 lanes")
c1, c2, c3 = pconsts("c1 c2 c3")
(c4,) = pvars("c4", E.FloatImm)


def is_index_type(dtype) -> bool:
    """TVM's ``IsIndexType``: a scalar int32 or int64."""
    return dtype in ("int32", "int64")


def vector(node) -> bool:
    """Section guard: the node is a vector."""
    return _dt.lanes(node.dtype) != 1


def index(node) -> bool:
    """Section guard: the node computes a scalar index (int32/int64)."""
    return is_index_type(node.dtype)


def index_operands(node) -> bool:
    """Section guard for comparisons: the operands are scalar indices."""
    return is_index_type(node.a.dtype)


def floating(node) -> bool:
    """Section guard: a floating-point node."""
    return _dt.is_float(node.dtype)


def always(node) -> bool:
    """Section guard: every node."""
    return True


def v(e) -> int:
    """The value of a matched integer constant."""
    return e.value


def run(table, node, s):
    """The first rule of ``table`` (sections of ``(guard, rules)``) that applies to ``node``, or None."""
    for guard, rules in table:
        if guard(node):
            for rule in rules:
                out = rule(node, s)
                if out is not None:
                    return out
    return None


def check_divisor(c, node):
    """Raise for a division of a vector by a zero constant (TVM's check in its ramp rules)."""
    if c.value == 0:
        raise TIRError(f"{type(node).__name__}: division by zero in {node}")
