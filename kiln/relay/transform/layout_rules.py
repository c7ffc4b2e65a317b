"""Layout rules (``FInferCorrectLayout``) of the tensor operators: element-wise, broadcast, reductions and the
operators that move axes (concatenate, split, squeeze, strided_slice, transpose, slice_like, topk).

Each rule follows :mod:`.infer_layout_utils`'s protocol and TVM's rule of the same operator
(``src/relay/op/tensor/{reduce,transform}.cc``), so AlterOpLayout and ConvertLayout keep a layout flowing through the
same operators as TVM does. Where TVM's rule would produce an ill-typed or wrong program (a topk along a split axis, a
transpose of a blocked layout read character by character) the rule here declines instead (the call keeps its
original layouts). The rules of the nn and image operators are in :mod:`.layout_rules_nn`.
"""

import dataclasses

from ...ir.op import has_op, register_op_attr
from ...ir.type import TupleType
from ...tir.layout import Layout, from_axes
from ..op.type_relations import reduce_axes
from .infer_layout_utils import (
    InferCorrectLayoutOutput,
    binary_broadcast_layout,
    elemwise_arbitrary_layout,
    factor_of,
)

__all__ = ["register_rule", "UNARY_ELEMWISE", "BINARY_BROADCAST"]


def register_rule(*names, level=10):
    """Register the decorated function as the ``FInferCorrectLayout`` of the operators ``names`` (those that exist:
    a build may lack some)."""

    def register(rule):
        for name in names:
            if has_op(name):
                register_op_attr(name, "FInferCorrectLayout", rule, level)
        return rule

    return register


def _replace(attrs, **changes):
    return dataclasses.replace(attrs, **changes)


def _fail(n_in, n_out, attrs):
    return InferCorrectLayoutOutput([None] * n_in, [None] * n_out, attrs)


def _axis(axis, ndim) -> int:
    return axis + ndim if axis < 0 else axis


def _split(lay: Layout, letter: str) -> bool:
    """Whether ``lay`` splits the primal axis of ``letter``."""
    return factor_of(lay, letter) != -1


# ---- element-wise and broadcast ----------------------------------------------------------------------------------
UNARY_ELEMWISE = (
    "abs acos acosh asin asinh atan atanh bitwise_not ceil copy cos cosh erf exp fast_erf fast_exp fast_tanh floor "
    "isfinite isinf isnan log log10 log2 logical_not negative ones_like round rsqrt sigmoid sign sin sinh sqrt tan "
    "tanh trunc zeros_like nn.relu nn.leaky_relu cast cast_like reinterpret clip "
    "fixed_point_multiply").split()
"""The operators TVM gives ``ElemwiseArbitraryLayout``: they compute in whatever layout their input is in."""
BINARY_BROADCAST = (
    "add bitwise_and bitwise_or bitwise_xor divide floor_divide floor_mod left_shift logical_and logical_or "
    "logical_xor maximum minimum mod multiply power right_shift subtract trunc_divide trunc_mod equal greater "
    "greater_equal less less_equal not_equal").split()
"""The operators TVM gives ``BinaryBroadcastLayout``."""

register_rule(*UNARY_ELEMWISE)(elemwise_arbitrary_layout)
register_rule(*BINARY_BROADCAST)(binary_broadcast_layout)


@register_rule("nn.dropout")
def dropout_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Dropout is element-wise; both its outputs (result and mask) are in the input's layout."""
    out = elemwise_arbitrary_layout(attrs, new_in_layouts, old_in_layouts, old_in_types)
    return InferCorrectLayoutOutput(out.input_layouts, out.output_layouts * 2, attrs)


# ---- reductions --------------------------------------------------------------------------------------------------
def _reduce_infer(lay, old, r_axes, exclude, keepdims):
    """``(input layout, output layout, new axis)`` of a reduction over ``r_axes`` of ``old`` computed in ``lay``: a
    reduced split axis reduces both its parts, kept with size 1 when ``keepdims`` (``NCHW16c`` summed over C is
    ``NCHW1c``)."""
    reduced = {old[a] for a in r_axes}
    new_axes: list[int] = []
    out: list[tuple[str, int | None]] = []

    def listed(letter, index):  # the axes attribute lists the kept axes when exclude is set
        if (letter in reduced) != exclude:
            new_axes.append(index)
            return True
        return False

    for i, (letter, factor) in enumerate(lay.axes):
        if factor is None:
            listed(letter, i)
            if letter not in reduced or keepdims:
                out.append((letter, None))
        elif listed(letter.upper(), i):
            if exclude:
                out.append((letter, factor))
            elif keepdims:
                out.append((letter, 1))
        else:
            out.append((letter, factor))
    out_layout = from_axes(out)
    if any(f is not None and out_layout.index_of(a.upper()) < 0 for a, f in out):
        return None, None, None  # a sub-axis left without its primal axis (TVM would fail to parse it)
    # a reduction to a scalar has no output layout (TVM's Layout("") is undefined): the call is left as it is
    return lay, (out_layout if out else None), tuple(new_axes)


@register_rule("argmax", "argmin", "prod", "all", "max", "mean", "min", "sum", "variance")
def reduce_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Reductions reduce the same (moved) axes; a split axis is reduced in both parts (TVM's
    ``ReduceInferCorrectLayout``)."""
    ndim = len(old_in_types[0].shape)
    r_axes = reduce_axes(ndim, attrs.axis, attrs.exclude)
    exclude, keepdims = bool(attrs.exclude), bool(attrs.keepdims)
    inferred_in = inferred_out = None
    if new_in_layouts is not None and r_axes and old_in_layouts[0] is not None:
        inferred_in, inferred_out, new_axes = _reduce_infer(new_in_layouts[0], old_in_layouts[0], r_axes, exclude,
                                                            keepdims)
        if new_axes is not None:
            attrs = _replace(attrs, axis=new_axes)
    elif old_in_layouts[0] is not None:
        inferred_in, inferred_out, _ = _reduce_infer(old_in_layouts[0], old_in_layouts[0], r_axes, exclude,
                                                     keepdims)
    inputs = [inferred_in] * len(old_in_layouts)  # variance also reads its mean in the same layout
    return InferCorrectLayoutOutput(inputs, [inferred_out], attrs)


# ---- operators that move axes ------------------------------------------------------------------------------------
@register_rule("concatenate")
def concatenate_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Concatenation follows its inputs' new layout when they all share it, along the moved axis."""
    shapes = [t.shape for t in old_in_types[0].fields] if isinstance(old_in_types[0], TupleType) else []
    n = len(old_in_layouts)
    if not shapes:
        return _fail(n, 1, attrs)
    axis = _axis(attrs.axis, len(shapes[0]))
    if new_in_layouts is not None and old_in_layouts[0] is not None and \
            all(lay == new_in_layouts[0] for lay in new_in_layouts):
        ret = new_in_layouts[0]
        return InferCorrectLayoutOutput([ret] * n, [ret], _replace(attrs, axis=ret.index_of(old_in_layouts[0][axis])))
    ret = next((lay for lay in old_in_layouts if lay is not None), None)
    if ret is None or ret.ndim <= axis or ret.axes[axis][1] is not None:
        return _fail(1, 1, attrs)
    return InferCorrectLayoutOutput([ret] * n, [ret], attrs)


@register_rule("split")
def split_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Split along the moved axis; indices along a split axis are divided by its factor (when they divide)."""
    shape = old_in_types[0].shape
    axis = _axis(attrs.axis, len(shape))
    ios = attrs.indices_or_sections
    count = int(ios) if isinstance(ios, int) else len(ios) + 1
    ret = old_in_layouts[0]
    if new_in_layouts is not None and old_in_layouts[0] is not None:
        new = new_in_layouts[0]
        letter = old_in_layouts[0][axis]
        factor = factor_of(new, letter)
        new_attrs = _replace(attrs, axis=new.index_of(letter))
        divisible = True
        if factor > 1 and isinstance(ios, int):
            # equal sections of the outer axis are equal sections of the channels only if they hold whole blocks
            divisible = isinstance(shape[axis], int) and (shape[axis] // factor) % ios == 0
        elif factor > 1:
            divisible = all(int(v) % factor == 0 for v in ios)
            new_attrs = _replace(new_attrs, indices_or_sections=tuple(int(v) // factor for v in ios))
        if divisible:
            ret, attrs = new, new_attrs
    return InferCorrectLayoutOutput([ret], [ret] * count, attrs)


@register_rule("squeeze")
def squeeze_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Squeeze the same (moved) axes; the output layout drops them."""
    inferred = new_in_layouts[0] if new_in_layouts is not None else old_in_layouts[0]
    if inferred is None:
        return _fail(1, 1, attrs)
    shape = old_in_types[0].shape
    axis = list(attrs.axis) if attrs.axis is not None else [i for i, d in enumerate(shape) if d == 1]
    if new_in_layouts is not None and old_in_layouts[0] is not None:
        axis = [inferred.index_of(old_in_layouts[0][int(a)]) for a in axis]
        if any(a < 0 for a in axis):
            return _fail(1, 1, attrs)
        attrs = _replace(attrs, axis=tuple(axis))
    dropped = {_axis(int(a), inferred.ndim) for a in axis}
    out = from_axes(ax for i, ax in enumerate(inferred.axes) if i not in dropped)
    return InferCorrectLayoutOutput([inferred], [out], attrs)


@register_rule("transpose")
def transpose_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Transpose the same axes, found by name in the new layout; the output layout is the input's permuted."""
    old = old_in_layouts[0]
    if old is None:
        return _fail(1, 1, attrs)
    axes = list(attrs.axes) if attrs.axes else list(range(old.ndim - 1, -1, -1))
    axes = [_axis(int(a), old.ndim) for a in axes]
    lay = old
    if new_in_layouts is not None and new_in_layouts[0] is not None:
        new = new_in_layouts[0]
        new_axes = [new.index_of(old[a]) for a in axes]
        if all(a >= 0 for a in new_axes) and len(new_axes) == new.ndim:
            axes, lay = new_axes, new
    return InferCorrectLayoutOutput([lay], [from_axes(lay.axes[a] for a in axes)], _replace(attrs, axes=tuple(axes)))


@register_rule("slice_like")
def slice_like_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """slice_like slices the same (moved) axes when both inputs share the layouts."""
    old = old_in_layouts
    if new_in_layouts is not None and old[0] is not None and old[0] == old[1] and \
            new_in_layouts[0] == new_in_layouts[1] and attrs.axes:
        new = new_in_layouts[0]
        axes = [new.index_of(old[0][int(a)]) for a in attrs.axes]
        if all(a >= 0 for a in axes) and not any(_split(new, old[0][int(a)]) for a in attrs.axes):
            return InferCorrectLayoutOutput([new, new], [new], _replace(attrs, axes=tuple(axes)))
    return InferCorrectLayoutOutput([old[0], old[1]], [old[1]], attrs)


@register_rule("topk")
def topk_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """topk along the moved axis (not a split one: the order would be per block)."""
    axis = _axis(attrs.axis, len(old_in_types[0].shape))
    ret = old_in_layouts[0]
    if new_in_layouts is not None and ret is not None:
        letter = ret[axis]
        if not _split(new_in_layouts[0], letter):
            ret = new_in_layouts[0]
            attrs = _replace(attrs, axis=ret.index_of(letter))
    outputs = 2 if attrs.ret_type == "both" else 1
    return InferCorrectLayoutOutput([ret], [ret] * outputs, attrs)


from . import layout_rules_nn  # noqa: E402,F401  (registers the nn and image operators' rules)
from .layout_rules_slice import strided_slice_layout  # noqa: E402,F401  (registers strided_slice's rule)

