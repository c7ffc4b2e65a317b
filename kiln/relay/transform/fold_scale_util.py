"""Shared pieces of ForwardFoldScaleAxis and BackwardFoldScaleAxis (TVM's ``fold_scale_axis.cc`` helpers).

A *message* says which axes of a tensor may carry a per-channel scale and whether folding needs the scale to be
positive (true once it has to pass through ``relu``: ``relu(x * s) == relu(x) * s`` only for ``s > 0``). Messages
meet by intersection: a tensor used by two consumers can only be scaled on the axes both accept.

The helpers here decide whether a multiplier broadcasts only along those axes (:func:`match_broadcast_to_left_axes`),
turn a multiplier into a scale vector (:func:`scale_of`) and reshape a scale vector so it broadcasts
along given axes of another tensor (:func:`expand_bias_to_match_axis`, :func:`reshape_to_match_axis`). They emit the
same ``squeeze`` / ``expand_dims`` / ``reshape`` calls as TVM, which FoldConstant folds afterwards.
"""

from dataclasses import dataclass

import numpy as np

from ...ir.op import Op
from ...ir.type import TensorType
from ...tir.layout import layout as parse_layout
from .. import op as _op
from ..expr import Call, Constant
from .infer_type import TypeInferencer, infer_type


@dataclass(frozen=True, slots=True)
class Message:
    """Axes that may carry a scale (sorted) and whether the scale must be positive."""

    axes: tuple
    require_positive: bool


def intersect(lhs, rhs):
    """The meet of two messages (None, meaning "no scaling possible", absorbs everything)."""
    if lhs is None or rhs is None:
        return None
    axes = tuple(a for a in lhs.axes if a in rhs.axes)
    return Message(axes, lhs.require_positive or rhs.require_positive)


def defined(message) -> bool:
    """Whether ``message`` allows scaling on at least one axis."""
    return message is not None and len(message.axes) > 0


def match_broadcast_to_left_axes(lhs_shape, rhs_shape, axes):
    """Whether ``rhs`` broadcasts to ``lhs`` varying only along ``axes`` (with the full size there).

    Returns the axes of ``rhs`` to squeeze to get the scale vector (a list, maybe empty), or None when it does not
    match. A scalar ``rhs`` never matches here (see :func:`scale_of`).
    """
    if len(lhs_shape) < len(rhs_shape):
        return None
    base = len(lhs_shape) - len(rhs_shape)
    squeeze = []
    for i, dim in enumerate(lhs_shape):
        if i in axes:
            if i < base or rhs_shape[i - base] != dim:
                return None
        elif i >= base:
            if rhs_shape[i - base] != 1:
                return None
            squeeze.append(i - base)
    return squeeze


_PEELED = ("expand_dims", "reshape", "transpose", "squeeze", "repeat")


def is_all_positive_constant(expr) -> bool:
    """Whether ``expr`` is a constant whose every element is positive, seen through the reshaping operators
    (expand_dims, reshape, transpose, squeeze, repeat) that move but do not change its values (TVM's
    ``IsAllPositiveConstant``)."""
    while isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name in _PEELED:
        expr = expr.args[0]
    return isinstance(expr, Constant) and bool(np.all(expr.data.numpy() > 0))


def scale_of(expr, expr_type, value_shape, axes, require_positive):
    """The scale vector of a multiplier ``expr`` (of type ``expr_type``) of a tensor of ``value_shape`` scaled
    along ``axes``, as TVM's ``MatchBroadcastToLeftAxes``: ``squeeze(expr)`` to the axes (or ``expr`` itself; a
    scalar is expanded and repeated to the axes' sizes).

    Returns None when ``expr`` does not broadcast only along ``axes``, is not positive while it must be (then it must
    be a constant), or is not floating-point: in integer arithmetic a scale moved into the weight wraps or truncates
    at another place.
    """
    if not axes or not isinstance(expr_type, TensorType) or "float" not in str(expr_type.dtype):
        return None
    if expr_type.ndim == 0:
        scale = _op.expand_dims(expr, axis=0, num_newaxis=len(axes))
        for i, axis in enumerate(axes):
            scale = _op.repeat(scale, int(value_shape[axis]), i)
    else:
        squeeze = match_broadcast_to_left_axes(value_shape, expr_type.shape, axes)
        if squeeze is None:
            return None
        scale = _op.squeeze(expr, axis=squeeze) if squeeze else expr
    if require_positive and not is_all_positive_constant(scale):
        return None
    return scale


def expand_bias_to_match_axis(bias, target_ndim, axes):
    """Insert size-1 axes into ``bias`` (one axis per entry of ``axes``) so it broadcasts along ``axes`` of a
    rank-``target_ndim`` tensor: ``(C,)`` along axis 1 of NCHW becomes ``(C, 1, 1)``."""
    for i in range(len(axes), 0, -1):
        if i == len(axes):
            pad = target_ndim - axes[i - 1] - 1
        else:
            pad = axes[i] - axes[i - 1] - 1
        if pad > 0:
            bias = _op.expand_dims(bias, axis=i, num_newaxis=pad)
    return bias


def reshape_to_match_axis(scale, shape, axes):
    """Reshape ``scale`` to ``shape`` with every axis outside ``axes`` set to 1 (blocked layouts such as NCHW16c)."""
    return _op.reshape(scale, [d if i in axes else 1 for i, d in enumerate(shape)])


def reshape_or_expand_to_match_axis(scale, shape, axes):
    """:func:`expand_bias_to_match_axis` for one axis, :func:`reshape_to_match_axis` for several (as TVM)."""
    if len(axes) > 1:
        return reshape_to_match_axis(scale, shape, axes)
    return expand_bias_to_match_axis(scale, len(shape), axes)


@dataclass(frozen=True, slots=True)
class ConvScaleInfo:
    """Where a conv2d's channels are: ``data_axes`` of the data (or output) tensor and the kernel axes to scale."""

    data_axes: tuple
    kernel_axes: tuple
    blocked: bool


def conv_scale_info(call, output):
    """How a scale on the input (``output=False``) or output channels of the conv2d ``call`` folds into its weight.

    Only plain conv2d (groups=1) and depthwise conv2d (one output channel per input channel) with a simple (NCHW,
    NHWC, ...) or fully blocked (NCHW16c data with OIHW16i16o kernel) layout qualify, as in TVM; None otherwise.
    """
    attrs = call.attrs
    data_layout = parse_layout((attrs.out_layout or attrs.data_layout) if output else attrs.data_layout)
    kernel_layout = parse_layout(attrs.kernel_layout)
    c_big, c_small = data_layout.index_of("C"), data_layout.index_of("c")
    ko_big, ki_big = kernel_layout.index_of("O"), kernel_layout.index_of("I")
    ko_small, ki_small = kernel_layout.index_of("o"), kernel_layout.index_of("i")
    if c_big < 0 or ko_big < 0 or ki_big < 0:
        return None
    depthwise = is_depthwise_conv2d(attrs, call.args[1].checked_type.shape)
    if attrs.groups != 1 and not depthwise:
        return None
    simple = ko_small < 0 and ki_small < 0 and c_small < 0
    blocked = ko_small >= 0 and ki_small >= 0 and c_small >= 0
    if not (simple or blocked):
        return None
    data_axes: tuple[int, ...] = (c_big,) if simple else (c_big, c_small)
    # a depthwise kernel's input channel axis has size 1: its channels are on the output axis
    on_output = output or depthwise
    kernel_axes: tuple[int, ...]
    if simple:
        kernel_axes = (ko_big,) if on_output else (ki_big,)
    else:
        kernel_axes = (ko_big, ko_small) if on_output else (ki_big, ki_small)
    if list(data_axes) != sorted(data_axes) or list(kernel_axes) != sorted(kernel_axes):
        return None  # scale vectors are laid out in axis order
    shape = (call.checked_type if output else call.args[0].checked_type).shape
    if not scale_fits([shape[a] for a in data_axes], call.args[1].checked_type.shape, kernel_axes):
        return None  # the kernel axes must hold the same channels (blocked alike or not: a reshape regroups them)
    return ConvScaleInfo(data_axes, kernel_axes, blocked)


def is_depthwise_conv2d(attrs, weight_shape) -> bool:
    """Whether a conv2d with ``attrs`` and a weight of ``weight_shape`` has one output channel per group of one
    input channel (TVM's test)."""
    kernel = parse_layout(attrs.kernel_layout).shape_to_primal(weight_shape)
    return kernel["O"] == attrs.groups and kernel["I"] == 1


def conv_weight_scale(scale, info, weight_type):
    """``scale`` (a vector, or a matrix for blocked layouts) shaped to broadcast along the kernel axes of ``info``."""
    if not info.blocked:
        return expand_bias_to_match_axis(scale, weight_type.ndim, info.kernel_axes)
    return reshape_to_match_axis(scale, weight_type.shape, info.kernel_axes)


def scale_fits(scale_shape, shape, axes) -> bool:
    """Whether a scale of ``scale_shape`` holds as many channels as ``shape`` has on ``axes`` (outer axis first:
    NCHW2c data's ``(C, 2)`` scale reshapes to an OIHW4i2o kernel's ``(I, 4)``, the channel order is the same)."""
    return int(np.prod([int(d) for d in scale_shape])) == int(np.prod([int(shape[a]) for a in axes]))


def typed_function(func, mod=None):
    """``func`` with every expression typed (itself when already typed); global calls are typed through ``mod``."""
    if getattr(func, "checked_type_", None) is not None:
        return func
    cache = {}

    def global_type(gv):
        if "mod" not in cache:
            cache["mod"] = infer_type(mod)
        typed = cache["mod"]
        return typed[typed.get_global_var(gv.name_hint)].checked_type

    return TypeInferencer(global_type if mod is not None else None).visit(func)


def retype_function(func, mod=None):
    """Type a function rebuilt by a pass (its new nodes carry no type yet)."""
    return typed_function(func.with_fields(ret_type=None, checked_type_=None), mod)
