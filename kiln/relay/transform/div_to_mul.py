"""DivToMul: division by a floating-point constant becomes multiplication by its reciprocal (TVM's pass).

Only float16/32/64 divisors are rewritten (the reciprocal of an integer would truncate), and only when no element
is zero, so the rewrite never turns ``x / 0`` (inf or nan) into a finite product. The reciprocal is computed in the
divisor's dtype, as the kernel would (float16 through float32, rounded once).
"""

from dataclasses import dataclass

import numpy as np

from ...ir.transform import PassInfo, register_pass
from .. import op as _op
from ..expr import Constant, const
from .function_pass import FunctionPass
from .rewrite import RuleTable, rewrite

RULES = RuleTable()
_FLOATS = ("float16", "float32", "float64")


@RULES.register("divide")
def divide_by_constant(call):
    """``x / c`` -> ``x * (1 / c)`` for a nonzero floating-point constant ``c``."""
    divisor = call.args[1]
    if not isinstance(divisor, Constant) or str(divisor.data.dtype) not in _FLOATS:
        return None
    value = divisor.data.numpy()
    if not np.all(value != 0):
        return None
    reciprocal = (1.0 / value.astype("float64" if value.dtype == np.float64 else "float32")).astype(value.dtype)
    return _op.multiply(call.args[0], const(reciprocal, dtype=str(value.dtype)))


@register_pass("DivToMul")
@dataclass(frozen=True)
class DivToMul(FunctionPass):
    """Replace division by a floating-point constant with multiplication by its reciprocal."""

    info = PassInfo(0, "DivToMul", required=("InferType", "FoldConstant"))

    def transform_function(self, func, mod, ctx):
        return rewrite(func, RULES, mod=mod)
