"""DynamicToStatic: a ``dyn.*`` call whose shape-deciding arguments are constants becomes the static operator
(TVM's ``relay.transform.DynamicToStatic``).

Constants are folded first, so a shape computed from static shapes (``shape_of`` of a static tensor, arithmetic on
it) counts as a constant; folding and rewriting repeat while they change something, since a call made static makes
the shapes read from it static too. Each ``dyn`` operator says how it turns static with the op attribute
``FDynamicToStatic(call, values)``, registered next to it: ``values`` holds each argument's numpy value when it is a
constant (else None), and the function returns the static call, or None when a value it needs is missing. The
result is typed, and static wherever the shapes now are.
"""

from dataclasses import dataclass

from ...ir.op import Op, list_op_names
from ...ir.transform import PassInfo, register_pass
from ..expr import Constant
from .fold_constant import fold_constant
from .function_pass import FunctionPass
from .infer_type import infer_type
from .rewrite import RuleTable, rewrite

__all__ = ["DynamicToStatic", "dynamic_to_static"]


def _static_form(call):
    """The static form of a ``dyn`` call, or None while a shape-deciding argument is not a constant."""
    values = [arg.data.numpy() if isinstance(arg, Constant) else None for arg in call.args]
    return call.op.get_attr("FDynamicToStatic")(call, values)


def _rules():
    rules = RuleTable()
    for name in list_op_names():
        if Op.get(name).get_attr("FDynamicToStatic") is not None:
            rules.register(name)(_static_form)
    return rules


def dynamic_to_static(func, mod=None):
    """``func`` with constants folded and every ``dyn`` call on constant shapes made static; typed (its result type
    inferred anew: it may have become static)."""
    rules = _rules()
    current = func
    # a call made static makes the shapes computed from its result static too (reshape(y, shape_of(reshape(x,
    # shape_of(z))))): fold and rewrite again until nothing changes, as TVM re-infers after each call
    for _ in range(_MAX_ROUNDS):
        folded = fold_constant(current, mod)
        body = rewrite(folded.body, rules, mod=mod)  # the body alone: the return type may become static
        if folded is current and body is current.body:
            break
        current = infer_type(folded.with_fields(body=body, ret_type=None, checked_type_=None), mod)
    return current


_MAX_ROUNDS = 16


@register_pass("DynamicToStatic")
@dataclass(frozen=True)
class DynamicToStatic(FunctionPass):
    """Turn ``dyn.*`` operators whose shape arguments are constants into their static forms.

    Examples
    --------
    >>> mod = relay.transform.DynamicToStatic()(mod)   # dyn.reshape(x, const([2, 3])) -> reshape(x, (2, 3))
    """

    info = PassInfo(3, "DynamicToStatic", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return dynamic_to_static(func, mod)
