"""FastMath: ``exp``, ``erf``, ``tanh`` and ``nn.softmax`` become their fast approximations (TVM's pass).

It runs at opt_level 4, so the standard pipeline applies it only when asked for (``opt_level=4`` or
``required_pass=["FastMath"]``): the approximations trade a few ulps of accuracy for speed.
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from .. import op as _op
from .function_pass import FunctionPass
from .rewrite import RuleTable, rewrite

RULES = RuleTable()


@RULES.register("exp")
def fast_exp(call):
    """``exp(x)`` -> ``fast_exp(x)``."""
    return _op.fast_exp(call.args[0])


@RULES.register("erf")
def fast_erf(call):
    """``erf(x)`` -> ``fast_erf(x)``."""
    return _op.fast_erf(call.args[0])


@RULES.register("tanh")
def fast_tanh(call):
    """``tanh(x)`` -> ``fast_tanh(x)``."""
    return _op.fast_tanh(call.args[0])


@RULES.register("nn.softmax")
def fast_softmax(call):
    """``nn.softmax(x, axis)`` -> ``nn.fast_softmax(x, axis)``."""
    return _op.nn.fast_softmax(call.args[0], call.attrs.axis)


@register_pass("FastMath")
@dataclass(frozen=True)
class FastMath(FunctionPass):
    """Use the fast approximations of exp, erf, tanh and softmax."""

    info = PassInfo(4, "FastMath", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return rewrite(func, RULES, mod=mod)
