"""Annotation: the first step of quantization (TVM's ``relay.quantize._annotate`` and its ``QuantizeAnnotate``).

The pass rewrites a float graph so it simulates the rounding of the integer computation it will become: each
operator with an annotation rule (``FQAnnotateRewrite``) puts ``simulated_quantize`` calls on its inputs and marks
its result with the kind of value it is (:class:`QAnnotateExpr`): a convolution or dense quantizes its data as an
``INPUT`` and its weight as a ``WEIGHT`` and produces an ``ACTIVATION``; element-wise and shape operators pass the
kind through; ``add``, ``multiply`` and ``concatenate`` bring their operands to a common kind; a global average
pooling stops quantization (what follows stays float). A value used more than once is quantized as an ``INPUT``
where it is produced. The new ``dom_scale``/``clip_min``/``clip_max`` variables become parameters of the function;
calibration binds them.
"""

import warnings

from ...ir.op import register_op_attr
from ..expr import Call, Constant, Tuple
from ..transform.function_pass import function_pass
from .config import QAnnotateKind, current_qconfig, quantize_context
from .forward_rewrite import TempExpr, forward_rewrite
from .simulated_quantize import attach_simulated_quantize

__all__ = ["QAnnotateKind", "QAnnotateExpr", "attach_simulated_quantize", "register_annotate_function",
           "QuantizeAnnotate"]

ATTR = "FQAnnotateRewrite"


class QAnnotateExpr(TempExpr):
    """An annotated value: the expression and the :class:`QAnnotateKind` of what it holds."""

    def __init__(self, expr, kind):
        self.expr, self.kind = expr, QAnnotateKind(int(kind))

    def realize(self):
        return self.expr


def _get_expr_kind(anno):
    """``(expr, kind)`` of an annotated value, ``(expr, None)`` of a plain one."""
    if isinstance(anno, QAnnotateExpr):
        return anno.expr, anno.kind
    return anno, None


def _forward_op(ref_call, args):
    return Call(ref_call.op, tuple(args), ref_call.attrs, span=ref_call.span)


def _is_constant(expr) -> bool:
    """TVM's ``check_constant``: a constant, or a tuple of constants."""
    if isinstance(expr, Constant):
        return True
    return isinstance(expr, Tuple) and all(_is_constant(f) for f in expr.fields)


def register_annotate_function(op_name, frewrite=None, level=10):
    """Register ``frewrite(ref_call, new_args, ctx)`` as the annotation rule of ``op_name``; an operator the
    configuration's ``debug_enabled_ops`` leaves out just gets its arguments back. Usable as a decorator."""

    def default_rewrite(ref_call, new_args, ctx):
        return _forward_op(ref_call, [_get_expr_kind(x)[0] for x in new_args])

    def register(func):
        def guarded(ref_call, new_args, ctx):
            if not current_qconfig().guard(ref_call):
                return default_rewrite(ref_call, new_args, ctx)
            return func(ref_call, new_args, ctx)

        register_op_attr(op_name, ATTR, guarded, level)
        return func

    return register(frewrite) if frewrite is not None else register


def _weight_or_input(expr):
    return attach_simulated_quantize(expr, QAnnotateKind.WEIGHT if _is_constant(expr) else QAnnotateKind.INPUT)


@register_annotate_function("nn.contrib_conv2d_NCHWc")
def conv2d_nchwc_rewrite(ref_call, new_args, ctx):
    warnings.warn("NCHWc layout Conv2D detected: quantize before layout alteration (a lower opt_level) for it to "
                  "have an effect", stacklevel=2)


def _data_weight_rewrite(ref_call, new_args, ctx):
    """Convolutions and dense: the data as INPUT, the weight as WEIGHT, the result an ACTIVATION."""
    if quantize_context().check_to_skip(ref_call):
        return None
    lhs_expr, lhs_kind = _get_expr_kind(new_args[0])
    rhs_expr, rhs_kind = _get_expr_kind(new_args[1])
    if lhs_kind is None or lhs_kind == QAnnotateKind.ACTIVATION:
        lhs_expr = attach_simulated_quantize(lhs_expr, QAnnotateKind.INPUT)
    if rhs_kind is not None:
        return None  # a computed weight: leave the call unquantized
    rhs_expr = attach_simulated_quantize(rhs_expr, QAnnotateKind.WEIGHT)
    return QAnnotateExpr(_forward_op(ref_call, [lhs_expr, rhs_expr]), QAnnotateKind.ACTIVATION)


register_annotate_function("nn.conv2d", _data_weight_rewrite)
register_annotate_function("nn.conv1d", _data_weight_rewrite)


@register_annotate_function("nn.dense")
def dense_rewrite(ref_call, new_args, ctx):
    """Dense as a convolution, unless ``skip_dense_layer``."""
    if current_qconfig().skip_dense_layer:
        return None
    return _data_weight_rewrite(ref_call, new_args, ctx)


@register_annotate_function("multiply")
def multiply_rewrite(ref_call, new_args, ctx):
    """An annotated operand times a plain one (a constant is quantized as a WEIGHT)."""
    if quantize_context().check_to_skip(ref_call):
        return None
    (lhs_expr, lhs_kind), (rhs_expr, rhs_kind) = map(_get_expr_kind, new_args)
    if lhs_kind is None and rhs_kind is None:
        return None
    if lhs_kind in (QAnnotateKind.ACTIVATION, QAnnotateKind.INPUT) and rhs_kind is None:
        if lhs_kind == QAnnotateKind.ACTIVATION:
            lhs_expr = attach_simulated_quantize(lhs_expr, QAnnotateKind.INPUT)
        rhs_expr = _weight_or_input(rhs_expr)
    elif rhs_kind in (QAnnotateKind.ACTIVATION, QAnnotateKind.INPUT) and lhs_kind is None:
        if rhs_kind == QAnnotateKind.ACTIVATION:
            rhs_expr = attach_simulated_quantize(rhs_expr, QAnnotateKind.INPUT)
        lhs_expr = _weight_or_input(lhs_expr)
    else:
        return None  # two annotated operands: TVM refuses; kiln leaves the product in float
    return QAnnotateExpr(_forward_op(ref_call, [lhs_expr, rhs_expr]), QAnnotateKind.ACTIVATION)


@register_annotate_function("add")
def add_rewrite(ref_call, new_args, ctx):
    """Operands brought to a common kind; the sum is an ACTIVATION."""
    if quantize_context().check_to_skip(ref_call):
        return None
    (lhs_expr, lhs_kind), (rhs_expr, rhs_kind) = map(_get_expr_kind, new_args)
    if lhs_kind is None and rhs_kind is None:
        return None
    if lhs_kind is None:
        lhs_expr = attach_simulated_quantize(lhs_expr, QAnnotateKind.INPUT)
    elif rhs_kind is None:
        rhs_expr = _weight_or_input(rhs_expr)
    elif lhs_kind == QAnnotateKind.ACTIVATION and rhs_kind == QAnnotateKind.ACTIVATION:
        rhs_expr = attach_simulated_quantize(rhs_expr, QAnnotateKind.INPUT)
    return QAnnotateExpr(_forward_op(ref_call, [lhs_expr, rhs_expr]), QAnnotateKind.ACTIVATION)


def identity_rewrite(ref_call, new_args, ctx):
    """Operators that move or select values keep their operand's kind."""
    if quantize_context().check_to_skip(ref_call):
        return None
    x_expr, x_kind = _get_expr_kind(new_args[0])
    if x_kind is None:
        return None
    return QAnnotateExpr(_forward_op(ref_call, [x_expr]), x_kind)


for _name in ("reshape", "clip", "nn.relu", "strided_slice", "nn.avg_pool2d", "nn.batch_flatten", "transpose",
              "annotation.stop_fusion"):
    register_annotate_function(_name, identity_rewrite)


def pool_rewrite(ref_call, new_args, ctx):
    """Max pooling reads an INPUT (quantizing an ACTIVATION first) and produces one."""
    if quantize_context().check_to_skip(ref_call):
        return None
    expr, x_kind = _get_expr_kind(new_args[0])
    if x_kind is None:
        return None
    if x_kind == QAnnotateKind.ACTIVATION:
        expr = attach_simulated_quantize(expr, QAnnotateKind.INPUT)
    return QAnnotateExpr(_forward_op(ref_call, [expr]), QAnnotateKind.INPUT)


register_annotate_function("nn.max_pool2d", pool_rewrite)
register_annotate_function("nn.max_pool1d", pool_rewrite)


@register_annotate_function("annotation.cast_hint")
def cast_hint_rewrite(ref_call, new_args, ctx):
    """The partition's cast hint: an INPUT from here on."""
    expr, x_kind = _get_expr_kind(new_args[0])
    if quantize_context().check_to_skip(ref_call):
        return expr
    if x_kind is None:
        return new_args[0]
    if x_kind == QAnnotateKind.ACTIVATION:
        expr = attach_simulated_quantize(expr, QAnnotateKind.INPUT)
    return QAnnotateExpr(_forward_op(ref_call, [expr]), QAnnotateKind.INPUT)


@register_annotate_function("concatenate")
def concatenate_rewrite(ref_call, new_args, ctx):
    """Plain fields are quantized as ACTIVATIONs so all fields share one kind."""
    if quantize_context().check_to_skip(ref_call):
        return None
    pairs = [_get_expr_kind(x) for x in new_args[0]]
    if all(kind is None for _, kind in pairs):
        return None
    exprs = [attach_simulated_quantize(e, QAnnotateKind.ACTIVATION) if k is None else e for e, k in pairs]
    return QAnnotateExpr(_forward_op(ref_call, [Tuple(exprs)]), QAnnotateKind.ACTIVATION)


@register_annotate_function("nn.global_avg_pool2d")
def global_avg_pool2d_rewrite(ref_call, new_args, ctx):
    """The end of quantization: this pooling and everything after stay float."""
    if quantize_context().check_to_skip(ref_call):
        return None
    expr, x_kind = _get_expr_kind(new_args[0])
    if x_kind is None:
        return None
    out = _forward_op(ref_call, [new_args[0].realize()])
    quantize_context().stop_quantize()
    return out


@register_annotate_function("nn.batch_matmul")
def batch_matmul_rewrite(ref_call, new_args, ctx):
    """Both operands quantized (constants as WEIGHTs); the product is an ACTIVATION."""
    if quantize_context().check_to_skip(ref_call):
        return None
    exprs = []
    for expr, kind in map(_get_expr_kind, new_args):
        exprs.append(_weight_or_input(expr) if kind is None or kind == QAnnotateKind.ACTIVATION else expr)
    return QAnnotateExpr(_forward_op(ref_call, exprs), QAnnotateKind.ACTIVATION)


def _multi_ref(value):
    """A value used more than once is quantized where it is produced (as an INPUT)."""
    if isinstance(value, QAnnotateExpr):
        return QAnnotateExpr(attach_simulated_quantize(value.expr, QAnnotateKind.INPUT), QAnnotateKind.INPUT)
    return value


@function_pass(opt_level=1, name="QuantizeAnnotate", required=["InferType"])
def QuantizeAnnotate(func, mod, ctx):  # noqa: N802  (TVM's pass name)
    """Annotate each function for quantization (see the module docstring)."""
    from ..analysis import free_vars

    out = forward_rewrite(func, ATTR, None, _multi_ref)
    extra = [v for v in free_vars(out) if v not in set(out.params)]
    return out.with_fields(params=tuple(out.params) + tuple(extra))
