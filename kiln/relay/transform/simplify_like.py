"""SimplifyExpr's concretizing rules: an operator that reads only the type of its ``like`` argument becomes the
operator taking that type as attributes, once the type is known (TVM's ``ConcretizeLikeRewrite``).

``zeros_like``/``ones_like``/``full_like`` become ``zeros``/``ones``/``full`` of the static shape, ``reshape_like``
``reshape``, ``collapse_sum_like`` ``collapse_sum_to``, ``broadcast_to_like`` ``broadcast_to``, and ``cast_like``
``cast`` (its shape may be dynamic: only the dtype matters). The ``like`` argument then has no user left and the
computation it feeds no longer waits for it.
"""

from .. import op as _op
from .simplify_expr import RULES


def _static_shape(expr):
    ttype = expr.checked_type
    return None if ttype.is_dynamic else tuple(int(d) for d in ttype.shape)


@RULES.register("zeros_like", "ones_like")
def concretize_zeros_ones_like(call):
    """zeros_like(x) -> zeros(shape of x, dtype of x); ones_like likewise."""
    shape = _static_shape(call)
    if shape is None:
        return None
    make = _op.zeros if call.op.name == "zeros_like" else _op.ones
    return make(shape, call.checked_type.dtype)


@RULES.register("full_like")
def concretize_full_like(call):
    """full_like(x, fill) -> full(fill, shape of x, dtype of x)."""
    shape = _static_shape(call)
    return None if shape is None else _op.full(call.args[1], shape, call.checked_type.dtype)


@RULES.register("reshape_like")
def concretize_reshape_like(call):
    """reshape_like(x, like) -> reshape(x, the result's shape)."""
    shape = _static_shape(call)
    return None if shape is None else _op.reshape(call.args[0], shape)


@RULES.register("collapse_sum_like")
def concretize_collapse_sum_like(call):
    """collapse_sum_like(x, like) -> collapse_sum_to(x, shape of like)."""
    shape = _static_shape(call)
    return None if shape is None else _op.collapse_sum_to(call.args[0], shape)


@RULES.register("broadcast_to_like")
def concretize_broadcast_to_like(call):
    """broadcast_to_like(x, like) -> broadcast_to(x, the result's shape)."""
    shape = _static_shape(call)
    return None if shape is None else _op.broadcast_to(call.args[0], shape)


@RULES.register("cast_like")
def concretize_cast_like(call):
    """cast_like(x, like) -> cast(x, dtype of like)."""
    return _op.cast(call.args[0], call.checked_type.dtype)
