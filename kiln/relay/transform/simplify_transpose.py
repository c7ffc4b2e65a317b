"""SimplifyExpr's rules for chains of ``transpose`` and ``layout_transform`` (TVM's ``SimplifyTranspose`` and
``SimplifyNoOpTranspose``).

A ``transpose``, or a ``layout_transform`` between two orders of the same axes (``NCHW -> NHWC``), is a permutation;
two consecutive ones compose into one ``transpose``, which disappears when it is the identity. A ``layout_transform``
that changes the rank (``NCHW -> NCHW4c``) absorbs a neighbouring permutation into its source or destination layout,
and two consecutive rank-changing ones become one (or nothing, when they return to the first layout). A pair that
is not a permutation, such as ``NCHW4c -> NCHW8c``, folds only when the second undoes the first.
"""

from ...tir.layout import layout as parse_layout
from .. import op as _op
from ..op.tensor import transpose_axes
from .simplify_expr import RULES, _is_op

_PERMUTES = ("transpose", "layout_transform")


def _name(axes) -> str:
    return "".join(a if f is None else f"{f}{a}" for a, f in axes)


def _order(call, ndim):
    """The permutation ``call`` applies (output axis i reads input axis order[i]), or None when it is no
    permutation (a layout_transform that splits or merges axes)."""
    if _is_op(call, "transpose"):
        return tuple(transpose_axes(ndim, call.attrs.axes))
    src, dst = parse_layout(call.attrs.src_layout), parse_layout(call.attrs.dst_layout)
    if sorted(src.axes, key=str) != sorted(dst.axes, key=str) or src.ndim != ndim:
        return None
    return tuple(src.axes.index(axis) for axis in dst.axes)


def _rank_changing(call) -> bool:
    return _is_op(call, "layout_transform") and \
        parse_layout(call.attrs.src_layout).ndim != parse_layout(call.attrs.dst_layout).ndim


def _fold_rank_changing(data, outer, inner):
    """One layout_transform for ``outer(inner(data))`` when either is rank-changing: ``None`` when neither is,
    ``False`` when they cannot be folded."""
    if _rank_changing(outer):
        src, dst, other = outer.attrs.src_layout, outer.attrs.dst_layout, inner
        if _rank_changing(inner):
            if inner.attrs.dst_layout != src:
                return False
            src = inner.attrs.src_layout
    elif _rank_changing(inner):
        src, dst, other = inner.attrs.src_layout, inner.attrs.dst_layout, outer
    else:
        return None
    src_l, dst_l = parse_layout(src), parse_layout(dst)
    if src_l.ndim < dst_l.ndim:  # a permutation, then a rank-increasing transform: permute its source layout
        order = _order(other, src_l.ndim)
        if order is None:
            return False
        inverse = [0] * len(order)
        for i, axis in enumerate(order):
            inverse[axis] = i
        return _op.layout_transform(data, _name([src_l.axes[i] for i in inverse]), dst)
    if src_l.ndim > dst_l.ndim:  # a rank-decreasing transform, then a permutation: permute its destination
        order = _order(other, dst_l.ndim)
        if order is None:
            return False
        return _op.layout_transform(data, src, _name([dst_l.axes[i] for i in order]))
    if _is_op(other, "layout_transform"):
        return data if src == dst else _op.layout_transform(data, src, dst)
    return False


@RULES.register(*_PERMUTES)
def simplify_transpose_pair(call):
    """Two consecutive permutations (transpose or layout_transform) -> one transpose or layout_transform."""
    inner = call.args[0]
    if not _is_op(inner, *_PERMUTES):
        return None
    data = inner.args[0]
    folded = _fold_rank_changing(data, call, inner)
    if folded is not None:
        return folded or None
    ndim = call.checked_type.ndim
    outer_order, inner_order = _order(call, ndim), _order(inner, ndim)
    if outer_order is None or inner_order is None:
        # layouts that split or merge axes the same way: only an exact inverse pair folds
        if not (_is_op(call, "layout_transform") and _is_op(inner, "layout_transform")):
            return None
        same = (call.attrs.src_layout, call.attrs.dst_layout) == (inner.attrs.dst_layout, inner.attrs.src_layout)
        return data if same else None
    return _op.transpose(data, [inner_order[i] for i in outer_order])


@RULES.register(*_PERMUTES)
def simplify_noop_transpose(call):
    """A transpose by the identity permutation, or a layout_transform to its own layout -> its input."""
    if _is_op(call, "layout_transform"):
        return call.args[0] if call.attrs.src_layout == call.attrs.dst_layout else None
    order = _order(call, call.checked_type.ndim)
    return call.args[0] if order == tuple(range(len(order))) else None
