"""Gradients of the shape, data-movement and reduction operators (see ``_tensor_grad.py`` for the conventions).

Operators that only move elements have as adjoint the inverse movement of ``grad``: a reshape is undone by
``reshape_like``, a transpose by the inverse permutation, a concatenation by a split, a slice or a gather by writing
``grad`` back where the elements came from (into zeros, summing where one element was read twice). A reduction
hands every reduced element its share of ``grad``: all of it for ``sum``, ``1/n`` for ``mean``, and for ``max`` and
``min`` all of it to the selected elements, split evenly between ties.
"""

import numpy as np

from ...error import KilnError
from ..expr import Tuple, TupleGetItem, const
from . import array_more as _am
from . import elemwise as _e
from . import reduce as _r
from . import tensor as _t
from . import transform as _tr
from .like import broadcast_to_like, cast_like, collapse_sum_like, ones_like, reshape_like, zeros_like
from .op import register_gradient
from .type_relations import normalize_axis, reduce_axes


def _static_shape(expr, what):
    shape = expr.checked_type.shape
    if not all(isinstance(d, int) for d in shape):
        raise KilnError(f"gradient of {what}: needs a static input shape, got {tuple(shape)}")
    return tuple(shape)


def _like_input(orig, grad):
    """The gradient of an operator that only rearranges its first argument's elements into another shape."""
    return [reshape_like(grad, orig.args[0])] + [zeros_like(a) for a in orig.args[1:]]


for _name in ("reshape", "contrib_reverse_reshape", "squeeze", "reshape_like", "nn.batch_flatten"):
    register_gradient(_name, _like_input)


@register_gradient("dyn.reshape")
def dyn_reshape_grad(orig, grad):
    """``grad`` in the input's shape; none to the shape tensor."""
    return [reshape_like(grad, orig.args[0]), zeros_like(orig.args[1])]


@register_gradient("expand_dims")
def expand_dims_grad(orig, grad):
    """``grad`` without the inserted axes."""
    return [reshape_like(grad, orig.args[0])]


@register_gradient("transpose")
def transpose_grad(orig, grad):
    """``grad`` transposed by the inverse permutation."""
    axes = orig.attrs.axes
    if not axes:
        return [_t.transpose(grad)]
    ndim = len(orig.args[0].checked_type.shape)
    inverse = [0] * ndim
    for i, a in enumerate(axes):
        inverse[normalize_axis(int(a), ndim)] = i
    return [_t.transpose(grad, inverse)]


@register_gradient("broadcast_to")
def broadcast_to_grad(orig, grad):
    """``grad`` summed back over the broadcast axes."""
    return [collapse_sum_like(grad, orig.args[0])]


@register_gradient("broadcast_to_like")
def broadcast_to_like_grad(orig, grad):
    """``grad`` summed back over the broadcast axes; none to the shape donor."""
    x, like = orig.args
    return [collapse_sum_like(grad, x), zeros_like(like)]


@register_gradient("collapse_sum_like")
def collapse_sum_like_grad(orig, grad):
    """``grad`` broadcast back (the adjoint of a sum over broadcast axes); none to the shape donor."""
    x, like = orig.args
    return [broadcast_to_like(grad, x), zeros_like(like)]


@register_gradient("collapse_sum_to")
def collapse_sum_to_grad(orig, grad):
    """``grad`` broadcast back to the input."""
    return [broadcast_to_like(grad, orig.args[0])] + [zeros_like(a) for a in orig.args[1:]]


@register_gradient("layout_transform")
def layout_transform_grad(orig, grad):
    """``grad`` transformed back to the source layout."""
    return [_t.layout_transform(grad, orig.attrs.dst_layout, orig.attrs.src_layout)]


@register_gradient("reverse")
def reverse_grad(orig, grad):
    """``grad`` reversed back."""
    return [_tr.reverse(grad, orig.attrs.axis)]


# -- joining and splitting ------------------------------------------------------------------------------------------
@register_gradient("concatenate")
def concatenate_grad(orig, grad):
    """``grad`` split into the pieces each input contributed."""
    fields = orig.args[0].checked_type.fields
    ndim = len(fields[0].shape)
    axis = normalize_axis(orig.attrs.axis, ndim)
    bounds = np.cumsum([f.shape[axis] for f in fields])[:-1]
    if len(fields) == 1:
        return [Tuple([grad])]
    return [_t.split(grad, [int(b) for b in bounds], axis).astuple()]


@register_gradient("stack")
def stack_grad(orig, grad):
    """``grad`` split along the new axis, which each piece then loses."""
    n = len(orig.args[0].checked_type.fields)
    axis = normalize_axis(orig.attrs.axis, len(orig.checked_type.shape))
    pieces = _t.split(grad, n, axis)
    return [Tuple([_t.squeeze(pieces[i], [axis]) for i in range(n)])]


@register_gradient("split")
def split_grad(orig, grad):
    """The pieces' adjoints concatenated back."""
    axis = normalize_axis(orig.attrs.axis, len(orig.args[0].checked_type.shape))
    n = len(orig.checked_type.fields)
    return [_t.concatenate([TupleGetItem(grad, i) for i in range(n)], axis)]


@register_gradient("tile")
def tile_grad(orig, grad):
    """The adjoints of every copy summed: ``grad`` viewed as (copies, size) per axis and summed over the copies."""
    x = orig.args[0]
    shape = _static_shape(x, "tile")
    reps = tuple(int(r) for r in orig.attrs.reps)
    ndim = max(len(shape), len(reps))
    shape = (1,) * (ndim - len(shape)) + shape
    reps = (1,) * (ndim - len(reps)) + reps
    split = _t.reshape(grad, [v for r, d in zip(reps, shape, strict=True) for v in (r, d)])
    summed = _r.sum(split, axis=list(range(0, 2 * ndim, 2)))
    return [reshape_like(summed, x)]


@register_gradient("repeat")
def repeat_grad(orig, grad):
    """The adjoints of each element's copies summed: the repeated axis viewed as (size, repeats)."""
    x = orig.args[0]
    shape = _static_shape(x, "repeat")
    axis = normalize_axis(orig.attrs.axis, len(shape))
    viewed = shape[:axis] + (shape[axis], int(orig.attrs.repeats)) + shape[axis + 1:]
    return [_r.sum(_t.reshape(grad, viewed), axis=[axis + 1])]


# -- slicing and gathering ------------------------------------------------------------------------------------------
@register_gradient("strided_slice")
def strided_slice_grad(orig, grad):
    """``grad`` written into zeros where the slice was read (negative strides: read back to front)."""
    x = orig.args[0]
    shape = _static_shape(x, "strided_slice")
    ranges = _t.strided_slice_ranges(shape, orig.attrs)
    if any(len(range(b, e, s)) == 0 for b, e, s in ranges):
        return [zeros_like(x)]
    begin, end, strides, flipped = [], [], [], []
    for axis, (b, e, s) in enumerate(ranges):
        picked = range(b, e, s)
        if s < 0:
            flipped.append(axis)
            picked = picked[::-1]
        begin.append(picked.start)
        end.append(picked[-1] + 1)
        strides.append(picked.step)
    for axis in flipped:
        grad = _tr.reverse(grad, axis)

    def vector(values):
        return const(np.array(values, "int64"))

    return [_am.strided_set(zeros_like(x), grad, vector(begin), vector(end), vector(strides))]


@register_gradient("take")
def take_grad(orig, grad):
    """``grad`` added into zeros at the taken indices (normalized as the take did: clipped, or wrapped)."""
    data, indices = orig.args
    attrs = orig.attrs
    if attrs.batch_dims:
        raise KilnError("gradient of take: batch_dims other than 0 is not supported")
    shape = _static_shape(data, "take")
    if attrs.axis is None:  # the take read the flattened data
        shape, axis = (int(np.prod(shape)),), 0
    else:
        axis = normalize_axis(attrs.axis, len(shape))
    size = shape[axis]
    index = _t.reshape(indices, (-1,))
    if attrs.mode == "clip":
        index = _t.clip(index, 0, size - 1)
    else:  # wrap, and fast (in range; negatives count from the end)
        n = const(size, indices.checked_type.dtype)
        index = _e.floor_mod(index, n)
    # grad has the index's axes where data had `axis`: flatten them into one, and send each slice to its index
    updates = _t.reshape(grad, shape[:axis] + (-1,) + shape[axis + 1:])
    position = _t.reshape(index, (1,) * axis + (-1,) + (1,) * (len(shape) - axis - 1))
    zeros = _t.zeros(shape, data.checked_type.dtype)
    data_grad = _tr.scatter_elements(zeros, broadcast_to_like(position, updates), updates, axis, "add")
    return [reshape_like(data_grad, data) if attrs.axis is None else data_grad, zeros_like(indices)]


@register_gradient("gather_nd")
def gather_nd_grad(orig, grad):
    """``grad`` added into zeros at the gathered positions."""
    data, indices = orig.args
    return [_tr.scatter_nd(zeros_like(data), indices, grad, mode="add"), zeros_like(indices)]


@register_gradient("one_hot")
def one_hot_grad(orig, grad):
    """The adjoint summed where the result holds ``on_value`` and where it holds ``off_value``."""
    indices, on_value, off_value = orig.args
    zeros = zeros_like(grad)
    on = _e.equal(orig, on_value)
    grad_on, grad_off = _r.sum(_t.where(on, grad, zeros)), _r.sum(_t.where(on, zeros, grad))
    return [zeros_like(indices), cast_like(grad_on, on_value), cast_like(grad_off, off_value)]


def arange_grad(orig, grad):
    """``out[i] = start + i * step``: ``sum(grad)`` to start, ``sum(i * grad)`` to step, nothing to stop (the
    positions ``i`` counted with a cumulative sum, so a length known only at run time works too)."""
    start, stop, step = orig.args
    ones = ones_like(orig)
    positions = _tr.cumsum(ones, 0) - ones
    return [cast_like(_r.sum(grad), start), zeros_like(stop), cast_like(_r.sum(positions * grad), step)]


register_gradient("arange", arange_grad)
register_gradient("dyn.arange", arange_grad)


# -- reductions -------------------------------------------------------------------------------------------------------
def _reduced_axes(orig):
    x = orig.args[0]
    return reduce_axes(len(x.checked_type.shape), orig.attrs.axis, orig.attrs.exclude)


def _unreduce(orig, value):
    """``value`` (shaped like the reduction's result) with the reduced axes put back as size 1."""
    if orig.attrs.keepdims:
        return value
    return _t.reshape(value, [1 if i in _reduced_axes(orig) else d
                              for i, d in enumerate(_static_shape(orig.args[0], orig.op.name))])


@register_gradient("sum")
def sum_grad(orig, grad):
    """``grad`` broadcast over the summed axes."""
    return [broadcast_to_like(_unreduce(orig, grad), orig.args[0])]


def _count(orig):
    shape = _static_shape(orig.args[0], orig.op.name)
    return int(np.prod([shape[a] for a in _reduced_axes(orig)]))


@register_gradient("mean")
def mean_grad(orig, grad):
    """``grad / n`` broadcast over the ``n`` averaged elements."""
    x = orig.args[0]
    share = const(1.0 / max(_count(orig), 1), x.checked_type.dtype)
    return [broadcast_to_like(_unreduce(orig, grad) * share, x)]


def _select_reduce_grad(orig, grad):
    """``max``/``min``: ``grad`` to the elements equal to the result, split evenly between ties."""
    x = orig.args[0]
    chosen = cast_like(_e.equal(x, _unreduce(orig, orig)), x)
    ties = _r.sum(chosen, axis=_reduced_axes(orig), keepdims=True)
    return [chosen * _unreduce(orig, grad) / ties]


register_gradient("max", _select_reduce_grad)
register_gradient("min", _select_reduce_grad)


@register_gradient("prod")
def prod_grad(orig, grad):
    """``grad * prod / x`` (defined where no element is zero)."""
    x = orig.args[0]
    return [_unreduce(orig, grad) * _unreduce(orig, orig) / x]


@register_gradient("variance")
def variance_grad(orig, grad):
    """``var = sum((x - m)^2) / c`` with ``c`` = n (or n - 1 unbiased): ``2 (x - m) / c`` to ``x`` and
    ``-2 sum(x - m) / c`` to the mean argument ``m`` (zero when ``m`` is the mean)."""
    x, m = orig.args
    dtype = x.checked_type.dtype
    count = _count(orig) - (1 if orig.attrs.unbiased else 0)
    scale = const(2.0 / max(count, 1), dtype)
    g = _unreduce(orig, grad)
    centered = x - m
    return [scale * centered * g,
            collapse_sum_like(-(scale * _r.sum(centered, axis=_reduced_axes(orig), keepdims=True) * g), m)]
