"""SimplifyInference: rewrite training-time operators into their inference arithmetic.

* ``batch_norm(x, gamma, beta, mean, var)[0]`` -> ``x * scale + shift`` with ``scale = gamma / sqrt(var + eps)`` and
  ``shift = beta - mean * scale``, both expanded to broadcast along the channel axis (TVM's ``BatchNormToInferUnpack``);
* ``dropout(x)[0]`` -> ``x``;
* ``layer_norm(x, gamma, beta)`` -> ``(x - mean) / sqrt(var + eps) * gamma + beta`` over the normalized axis.

The scale and shift are expressions over the parameters, so FoldConstant folds them when the parameters are bound.
"""

from dataclasses import dataclass

from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ...ir.type import is_any
from .. import op as _op
from ..expr import Call, const
from .function_pass import FunctionPass
from .rewrite import RuleTable, rewrite

RULES = RuleTable()


def expand_to_axis(vec, ndim, axis):
    """Reshape a 1-D ``vec`` so it broadcasts along ``axis`` of a rank-``ndim`` tensor (TVM's ExpandBiasToMatchAxis)."""
    trailing = ndim - axis - 1
    return _op.expand_dims(vec, 1, trailing) if trailing > 0 else vec


def _producer(item, op_name):
    value = item.tuple_value
    if item.index == 0 and isinstance(value, Call) and value.op is Op.get(op_name):
        return value
    return None


@RULES.register("TupleGetItem")
def simplify_batch_norm(item):
    """``batch_norm(...)[0]`` -> ``data * scale + shift``."""
    bn = _producer(item, "nn.batch_norm")
    if bn is None:
        return None
    data, gamma, beta, mean, var = bn.args
    attrs, ttype = bn.attrs, data.checked_type
    axis = attrs.axis % ttype.ndim
    eps = const(attrs.epsilon, ttype.dtype)
    scale = _op.divide(const(1.0, ttype.dtype), _op.sqrt(_op.add(var, eps)))
    if attrs.scale:
        scale = _op.multiply(scale, gamma)
    shift = _op.multiply(_op.negative(mean), scale)
    if attrs.center:
        shift = _op.add(shift, beta)
    channels = ttype.shape[axis]
    if isinstance(channels, int) and any(is_any(p.checked_type.shape[0]) for p in (gamma, beta, mean, var)):
        # parameters of a size known only at run time: the relation checked them against the channels, which the
        # broadcast below cannot see (a dynamic size meeting 1 stays dynamic), so say it
        scale, shift = _op.reshape(scale, [channels]), _op.reshape(shift, [channels])
    out = _op.multiply(data, expand_to_axis(scale, ttype.ndim, axis))
    return _op.add(out, expand_to_axis(shift, ttype.ndim, axis))


@RULES.register("TupleGetItem")
def simplify_dropout(item):
    """``dropout(x)[0]`` -> ``x`` (dropout is the identity at inference)."""
    drop = _producer(item, "nn.dropout")
    return None if drop is None else drop.args[0]


@RULES.register("nn.layer_norm")
def simplify_layer_norm(call):
    """``layer_norm`` -> its mean/variance arithmetic."""
    data, gamma, beta = call.args
    attrs, ttype = call.attrs, data.checked_type
    axis = attrs.axis % ttype.ndim
    mean = _op.mean(data, axis=[axis], keepdims=True)
    centered = _op.subtract(data, mean)
    var = _op.mean(_op.multiply(centered, centered), axis=[axis], keepdims=True)
    out = _op.divide(centered, _op.sqrt(_op.add(var, const(attrs.epsilon, ttype.dtype))))
    if attrs.scale:
        out = _op.multiply(out, expand_to_axis(gamma, ttype.ndim, axis))
    if attrs.center:
        out = _op.add(out, expand_to_axis(beta, ttype.ndim, axis))
    return out


def simplify_inference(expr, mod=None):
    """Apply SimplifyInference's rules to ``expr``; returns a typed expression."""
    return rewrite(expr, RULES, mod=mod)


@register_pass("SimplifyInference")
@dataclass(frozen=True)
class SimplifyInference(FunctionPass):
    """Rewrite batch_norm, dropout and layer_norm into inference arithmetic."""

    info = PassInfo(0, "SimplifyInference", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return simplify_inference(func, mod)
