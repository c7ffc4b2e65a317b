"""CanonicalizeOps: express operators through simpler ones so later passes see fewer kinds.

``bias_add(x, b, axis)`` becomes ``add(x, expand_dims(b, ...))`` broadcasting ``b`` along ``axis`` (as TVM does).
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from .. import op as _op
from .function_pass import FunctionPass
from .rewrite import RuleTable, rewrite
from .simplify_inference import expand_to_axis

RULES = RuleTable()


@RULES.register("nn.bias_add")
def canonicalize_bias_add(call):
    """``bias_add(x, b)`` -> ``x + expand_dims(b)``."""
    data, bias = call.args
    ndim = data.checked_type.ndim
    return _op.add(data, expand_to_axis(bias, ndim, call.attrs.axis % ndim))


def canonicalize_ops(expr, mod=None):
    """Apply CanonicalizeOps' rules to ``expr``; returns a typed expression."""
    return rewrite(expr, RULES, mod=mod)


@register_pass("CanonicalizeOps")
@dataclass(frozen=True)
class CanonicalizeOps(FunctionPass):
    """Express bias_add as a broadcast add."""

    info = PassInfo(3, "CanonicalizeOps", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return canonicalize_ops(func, mod)
