"""Shape and data-movement operators (TVM's ``topi/transform.py``): ``reshape transpose squeeze expand_dims
concatenate split take strided_slice layout_transform shape_of``. Every result has tag ``injective``.

Each is one ``te.compute`` whose output index maps to the element it reads: ``reshape`` goes through the row-major
linear index, ``concatenate`` selects the input whose range holds the index along the axis, ``split`` yields one
compute per piece, ``take`` brings indices into range as its ``mode`` says (``clip`` clamps, ``wrap`` takes the
index modulo the size, ``fast`` trusts it), ``strided_slice`` reads ``begin + i * stride`` with Python's slice
clamping, and ``layout_transform`` maps the destination index to logical (primal) coordinates and those to the
source layout (``NCHW16c``: ``C = c_outer * 16 + c_inner``).
"""

import itertools
import math

from ..error import OpAttributeInvalid
from ..te.operation import compute
from ..tir import expr as E
from ..tir import intrin as _intrin
from ..tir import op as _op
from ..tir.layout import layout as parse_layout
from . import tag as _tag
from .utils import SHAPE_CHECKS, get_const_tuple, normalize_axis, prod, ravel_index, size_checks, unravel_index

__all__ = [
    "reshape", "transpose", "squeeze", "expand_dims", "concatenate", "split", "take", "strided_slice",
    "slice_ranges", "layout_transform", "shape_of", "flatten", "tile", "repeat", "reverse", "flip",
]


def _injective(shape, fcompute, name):
    return compute(tuple(shape), fcompute, name=name, tag=_tag.INJECTIVE)


def reshape(data, newshape):
    """``data`` with shape ``newshape`` (same number of elements; one entry may be -1).

    Parameters
    ----------
    data : te.Tensor
    newshape : tuple of int

    Returns
    -------
    out : te.Tensor
    """
    in_shape = get_const_tuple(data.shape)
    total = math.prod(in_shape)
    newshape = get_const_tuple(newshape)
    if not all(isinstance(d, int) for d in (*in_shape, *newshape)):
        # symbolic sizes: ``newshape`` is resolved (no -1); the shape function checks it holds as many elements
        check = (_op.equal(prod(newshape), prod(in_shape)), f"cannot reshape {in_shape} to {tuple(newshape)}")
        return compute(tuple(newshape), lambda *i: data(*unravel_index(ravel_index(i, newshape), in_shape)),
                       name="T_reshape", tag=_tag.INJECTIVE, attrs={SHAPE_CHECKS: (check,)})
    newshape = [int(d) for d in newshape]
    if newshape.count(-1) == 1:
        known = math.prod(d for d in newshape if d != -1)
        newshape[newshape.index(-1)] = total // known if known else 0
    if math.prod(newshape) != total or any(d < 0 for d in newshape):
        raise OpAttributeInvalid(f"topi.reshape: cannot reshape {in_shape} to {tuple(newshape)}")
    if tuple(newshape) == in_shape:
        return _injective(newshape, lambda *i: data(*i), "T_reshape")
    return _injective(newshape, lambda *i: data(*unravel_index(ravel_index(i, newshape), in_shape)), "T_reshape")


def dyn_reshape(data, out_shape):
    """``data``'s elements in row-major order as a tensor of ``out_shape``, whose entries may be size variables bound
    at run time from the output buffer (``dyn.reshape``; its shape function checks the sizes)."""
    in_shape = get_const_tuple(data.shape)
    if 0 in in_shape:  # no element to read (the result has none either), and no index to unravel by a zero size
        return compute(tuple(out_shape), lambda *i: _op.const(0, data.dtype), name="T_dyn_reshape",
                       tag=_tag.INJECTIVE)
    return compute(tuple(out_shape), lambda *i: data(*unravel_index(ravel_index(i, out_shape), in_shape)),
                   name="T_dyn_reshape", tag=_tag.INJECTIVE)


def flatten(data):
    """``data`` as ``(shape[0], prod(shape[1:]))`` (``nn.batch_flatten``)."""
    shape = get_const_tuple(data.shape)
    return reshape(data, (shape[0], math.prod(shape[1:])) if shape else (1,))


def transpose(data, axes=None):
    """Permute the axes of ``data`` (reverse them when ``axes`` is None).

    Returns
    -------
    out : te.Tensor
    """
    ndim = len(data.shape)
    perm = list(range(ndim - 1, -1, -1)) if axes is None else [normalize_axis(a, ndim, "transpose axis")
                                                                 for a in axes]
    if sorted(perm) != list(range(ndim)):
        raise OpAttributeInvalid(f"topi.transpose: axes {axes} are not a permutation of rank {ndim}")
    shape = [data.shape[p] for p in perm]

    def fcompute(*i):
        idx = [None] * ndim
        for k, p in enumerate(perm):
            idx[p] = i[k]
        return data(*idx)

    return _injective(shape, fcompute, "T_transpose")


def squeeze(data, axis=None):
    """Remove the size-1 axes ``axis`` (all size-1 axes when None)."""
    shape = get_const_tuple(data.shape)
    if axis is None:
        axes = [k for k, d in enumerate(shape) if d == 1]
    else:
        axes = sorted({normalize_axis(a, len(shape), "squeeze axis") for a in axis})
    checks = size_checks([(shape[a], 1) for a in axes], f"topi.squeeze: a squeezed axis of {shape} is not 1")
    kept = [k for k in range(len(shape)) if k not in axes]

    def fcompute(*i):
        idx = [0] * len(shape)
        for k, pos in enumerate(kept):
            idx[pos] = i[k]
        return data(*idx)

    return compute([shape[k] for k in kept], fcompute, name="T_squeeze", tag=_tag.INJECTIVE,
                   attrs={SHAPE_CHECKS: tuple(checks)} if checks else None)


def expand_dims(data, axis, num_newaxis=1):
    """Insert ``num_newaxis`` size-1 axes at ``axis`` (``-1`` appends)."""
    ndim = len(data.shape)
    if not -ndim - 1 <= axis <= ndim:
        raise OpAttributeInvalid(f"topi.expand_dims: axis {axis} is out of range for rank {ndim}")
    axis = axis if axis >= 0 else axis + ndim + 1
    shape = list(data.shape[:axis]) + [1] * num_newaxis + list(data.shape[axis:])
    return _injective(shape, lambda *i: data(*(i[:axis] + i[axis + num_newaxis:])), "T_expand_dims")


def concatenate(tensors, axis=0):
    """Join ``tensors`` along ``axis``.

    Parameters
    ----------
    tensors : list of te.Tensor
    axis : int

    Returns
    -------
    out : te.Tensor
    """
    tensors = list(tensors)
    if not tensors:
        raise OpAttributeInvalid("topi.concatenate: no tensors to join")
    ndim = len(tensors[0].shape)
    axis = normalize_axis(axis, ndim, "concatenate axis")
    shapes = [get_const_tuple(t.shape) for t in tensors]
    sizes = [sh[axis] for sh in shapes]
    # off the axis each dimension is the inputs' common size: a static one where an input has it, and the sizes
    # known only at run time are checked against it before the kernel runs
    shape = [next((sh[d] for sh in shapes if isinstance(sh[d], int)), shapes[0][d]) for d in range(ndim)]
    shape[axis] = prod_sum(sizes)
    checks = size_checks([(sh[d], shape[d]) for sh in shapes for d in range(ndim) if d != axis],
                         "topi.concatenate: the inputs' dimensions off the joined axis")
    starts = [prod_sum(sizes[:k]) for k in range(len(sizes))]
    # a part of a size known only at run time is kept (it may be empty; then the next part's range starts there)
    parts = [(t, start, size) for t, start, size in zip(tensors, starts, sizes, strict=True)
             if not isinstance(size, int) or size > 0]

    def read(part, i):
        t, start, _ = part
        return t(*(i[:axis] + (i[axis] - start,) + i[axis + 1:]))

    def fcompute(*i):
        # the last input whose range starts at or before i[axis]; if_then_else so that the inputs not taken are
        # never read (their index would be out of bounds)
        value = read(parts[0], i)
        for part in parts[1:]:
            value = _intrin.if_then_else(i[axis] >= part[1], read(part, i), value)
        return value

    attrs = {SHAPE_CHECKS: tuple(checks)} if checks else None
    if not parts:
        return compute(tuple(shape), lambda *i: _op.const(0, tensors[0].dtype), name="T_concat",
                       tag=_tag.INJECTIVE, attrs=attrs)
    return compute(tuple(shape), fcompute, name="T_concat", tag=_tag.INJECTIVE, attrs=attrs)


def prod_sum(values):
    """The sum of ints or expressions (0 for none), as ints while they are."""
    total = 0
    for v in values:
        total = total + v
    return total


def split(data, indices_or_sections, axis=0):
    """Cut ``data`` along ``axis`` into equal sections (an int) or at the given indices.

    Returns
    -------
    pieces : list of te.Tensor
    """
    shape = get_const_tuple(data.shape)
    axis = normalize_axis(axis, len(shape), "split axis")
    dim = shape[axis]
    if not isinstance(dim, int):  # a dimension known only at run time: the points may pass its end
        return _split_dynamic(data, shape, axis, indices_or_sections)
    if isinstance(indices_or_sections, int):
        if indices_or_sections <= 0 or dim % indices_or_sections:
            raise OpAttributeInvalid(f"topi.split: {indices_or_sections} sections do not divide a dimension of {dim}")
        step = dim // indices_or_sections
        points = [step * k for k in range(1, indices_or_sections)]
    else:
        points = [int(p) for p in indices_or_sections]
    points = [0, *points, dim]
    pieces = []
    for k, (begin, end) in enumerate(itertools.pairwise(points)):
        size = max(0, min(end, dim) - begin)
        piece_shape = list(shape)
        piece_shape[axis] = size
        pieces.append(_injective(piece_shape, _shifted_reader(data, axis, begin), f"T_split_{k}"))
    return pieces


def _split_dynamic(data, shape, axis, indices_or_sections):
    """:func:`split` of a dimension known only at run time: equal sections of ``dim // sections`` (the shape
    function checks they divide it), or the pieces between the given points clamped to the dimension."""
    dim = shape[axis]
    if isinstance(indices_or_sections, int):
        step = dim // indices_or_sections
        points = [step * k for k in range(indices_or_sections + 1)]
        check = (_op.equal(_op.floormod(dim, indices_or_sections), 0),
                 f"{indices_or_sections} sections do not divide the dimension {axis} of {tuple(shape)}")
    else:
        points, check = [0, *(int(p) for p in indices_or_sections), dim], None
    pieces = []
    for k, (begin, end) in enumerate(itertools.pairwise(points)):
        begin = _op.minimum(begin, dim) if isinstance(begin, int) and begin else begin
        end = _op.minimum(end, dim) if isinstance(end, int) else end
        piece_shape = list(shape)
        piece_shape[axis] = _op.maximum(end - begin, 0)
        pieces.append(compute(tuple(piece_shape), _shifted_reader(data, axis, begin), name=f"T_split_{k}",
                              tag=_tag.INJECTIVE, attrs={SHAPE_CHECKS: (check,)} if check else None))
    return pieces


def _shifted_reader(data, axis, begin):
    return lambda *i: data(*(i[:axis] + (i[axis] + begin,) + i[axis + 1:]))


def _in_range(idx, size, mode):
    """An index expression brought into ``[0, size)`` as ``take``'s ``mode`` says."""
    if not isinstance(size, int):  # a size known only at run time
        size = _op.cast(size, idx.dtype)
        if mode == "clip":
            return _op.minimum(_op.maximum(idx, _op.const(0, idx.dtype)), _op.maximum(size - 1, 0))
        if mode == "wrap":
            return _op.floormod(idx, _op.maximum(size, 1))
    elif mode == "clip":
        return _op.minimum(_op.maximum(idx, _op.const(0, idx.dtype)), _op.const(max(size - 1, 0), idx.dtype))
    elif mode == "wrap":
        return _op.floormod(idx, _op.const(size, idx.dtype)) if size else idx
    if mode == "fast":
        return idx
    raise OpAttributeInvalid(f"topi.take: mode must be clip, wrap or fast, got {mode!r}")


def _index(v, size, mode):
    """An index read from a tensor, brought into ``[0, size)`` as ``mode`` says, as an int32 or int64 expression:
    narrower integers widen first (every value of theirs fits), uint32 to int64; a uint64 is brought into range in
    its own type first, so an index past 2**63 is not taken for a negative one."""
    if v.dtype == "uint64":
        return _op.cast(_in_range(v, size, mode), "int64")
    if v.dtype not in ("int32", "int64"):
        v = _op.cast(v, "int64" if v.dtype == "uint32" else "int32")
    return _in_range(v, size, mode)


def take(data, indices, axis=None, batch_dims=0, mode="clip"):
    """Gather ``data`` along ``axis`` (the flattened ``data`` when None) at ``indices``.

    Parameters
    ----------
    data, indices : te.Tensor
        The values and the integer indices.
    axis : int, optional
    batch_dims : int
        Leading axes of ``data`` and ``indices`` matched one to one.
    mode : str
        ``clip``, ``wrap`` or ``fast``.

    Returns
    -------
    out : te.Tensor
    """
    dshape, ishape = get_const_tuple(data.shape), get_const_tuple(indices.shape)
    if axis is None:
        total = math.prod(dshape)

        def flat(*i):
            idx = _index(indices(*i), total, mode)
            return data(*unravel_index(idx, dshape))

        return _injective(ishape, flat, "T_take")
    axis = normalize_axis(axis, len(dshape), "take axis")
    bd = batch_dims % len(ishape) if ishape and batch_dims < 0 else batch_dims
    out_shape = dshape[:axis] + ishape[bd:] + dshape[axis + 1:]
    n_idx = len(ishape) - bd

    def fcompute(*i):
        idx_pos = i[:bd] + i[axis:axis + n_idx]
        idx = _index(indices(*idx_pos), dshape[axis], mode)
        return data(*(i[:axis] + (idx,) + i[axis + n_idx:]))

    return _injective(out_shape, fcompute, "T_take")


def slice_ranges(shape, begin, end, strides=None, axes=None, slice_mode="end") -> list:
    """``(begin, end, stride)`` per axis of ``shape``, clamped like Python slices (what Relay's
    ``strided_slice`` means; missing entries take the whole axis)."""
    ndim = len(shape)
    axes = list(axes) if axes is not None else list(range(len(begin)))
    strides = list(strides) if strides else [1] * len(axes)
    if len(strides) == 1 and len(axes) > 1:
        strides = strides * len(axes)
    ranges = [(0, d, 1) for d in shape]
    for k, axis in enumerate(axes):
        axis = normalize_axis(axis, ndim, "strided_slice axis")
        dim = shape[axis]
        stride = strides[k] if k < len(strides) else 1
        if not isinstance(dim, int):  # a size known only at run time: the clamping as expressions
            ranges[axis] = _symbolic_range(dim, begin[k] if k < len(begin) else None,
                                           end[k] if k < len(end) else None, stride, slice_mode)
            continue
        b = begin[k] if k < len(begin) else (0 if stride > 0 else dim - 1)
        if slice_mode == "size":
            size = end[k] if k < len(end) else -1
            e = dim if size < 0 else b + size
            stride = 1
        else:
            e = end[k] if k < len(end) else (dim if stride > 0 else -dim - 1)
        ranges[axis] = slice(b, e, stride).indices(dim)
    return ranges


def _symbolic_range(dim, b, e, stride, slice_mode):
    """Python's ``slice(b, e, stride).indices(dim)`` for a symbolic ``dim`` (``b``/``e`` ints or None: missing)."""
    if slice_mode == "size":
        e = None if e is None or e < 0 else (b or 0) + e
        stride = 1
    if b is not None and e is not None and 0 <= b and 0 <= e and stride > 0:
        return (_op.minimum(b, dim), _op.minimum(e, dim), stride)  # the common case: fixed bounds from the start
    low, high = (0, dim) if stride > 0 else (-1, dim - 1)

    def clamp(v):
        return _op.maximum(v + dim, low) if v < 0 else _op.minimum(v, high)

    first = clamp(b) if b is not None else (0 if stride > 0 else dim - 1)
    last = clamp(e) if e is not None else (dim if stride > 0 else -1)
    return (first, last, stride)


def _range_length(first, last, stride):
    """``len(range(first, last, stride))`` of ints or expressions."""
    if isinstance(first, int) and isinstance(last, int):
        return len(range(first, last, stride))
    span = last - first if stride > 0 else first - last
    step = abs(stride)
    return _op.maximum(_op.floordiv(span + (step - 1), step), 0)


def strided_slice(data, begin, end, strides=None, axes=None, slice_mode="end"):
    """``data[begin:end:stride]`` on each axis (Python's clamping; negative strides walk backwards).

    Returns
    -------
    out : te.Tensor
    """
    ranges = slice_ranges(get_const_tuple(data.shape), begin, end, strides, axes, slice_mode)
    # an axis taken whole keeps its size, which may be known only at run time (a size variable)
    shape = [r[1] if r[0] == 0 and r[2] == 1 and not isinstance(r[1], int) else _range_length(*r) for r in ranges]
    return _injective(shape, lambda *i: data(*[b + x * s for x, (b, _, s) in zip(i, ranges, strict=True)]),
                      "T_strided_slice")


def slice_like(data, like_shape, axes=None):
    """The leading slice of ``data`` whose size on ``axes`` (all of ``like_shape``'s by default) is
    ``like_shape``'s; sizes may be size variables (the relation checked what it could).

    Returns
    -------
    out : te.Tensor
    """
    shape = list(data.shape)
    for a in range(len(like_shape)) if axes is None else axes:
        shape[normalize_axis(a, len(shape))] = like_shape[a]
    return _injective(shape, lambda *i: data(*i), "T_slice_like")


def layout_transform(data, src_layout, dst_layout):
    """Move ``data`` from ``src_layout`` to ``dst_layout`` (any two layouts with the same primal axes, such as
    ``NCHW`` and ``NCHW16c``).

    Returns
    -------
    out : te.Tensor
    """
    src, dst = parse_layout(str(src_layout)), parse_layout(str(dst_layout))
    if sorted(src.primal) != sorted(dst.primal):
        raise OpAttributeInvalid(f"topi.layout_transform: {src.name} and {dst.name} have different primal axes")
    shape = get_const_tuple(data.shape)
    sizes = src.shape_to_primal(shape)
    out_shape = dst.shape_from_primal(sizes)
    if src.name == dst.name:
        return _injective(out_shape, lambda *i: data(*i), "T_layout_trans")

    def fcompute(*i):
        primal = {}
        for axis in dst.primal:  # outer * (product of the sub-factors) + each sub-axis times those after it
            value = i[dst.index_of(axis)]
            for sub in dst.sub_axes(axis):
                value = value * dst.axes[sub][1] + i[sub]
            primal[axis] = value
        idx = []
        for pos, (letter, factor) in enumerate(src.axes):
            axis = letter.upper()
            # the sub-factors after this position (same primal axis) make this part's stride
            stride = 1
            for sub in src.sub_axes(axis):
                if sub > pos:
                    stride *= src.axes[sub][1]
            if factor is None:
                idx.append(primal[axis] // stride if stride != 1 else primal[axis])
            else:
                idx.append((primal[axis] // stride) % factor if stride != 1 else primal[axis] % factor)
        return data(*idx)

    return _injective(out_shape, fcompute, "T_layout_trans")


def shape_of(data, dtype="int32"):
    """The (static) shape of ``data`` as a 1-D tensor of ``dtype``."""
    shape = get_const_tuple(data.shape)

    def fcompute(i):
        value = _op.const(0, dtype)
        for k in reversed(range(len(shape))):
            value = _op.select(_op.equal(i, k), E.convert(shape[k]).astype(dtype), value)
        return value

    return _injective([len(shape)], fcompute, "T_shape_of")


def tile(data, reps):
    """``data`` repeated ``reps[k]`` times along axis ``k`` (numpy's ``tile``: shapes padded with leading 1s)."""
    shape = get_const_tuple(data.shape)
    ndim = max(len(shape), len(reps))
    padded = (1,) * (ndim - len(shape)) + tuple(shape)
    reps = (1,) * (ndim - len(reps)) + tuple(int(r) for r in reps)
    out_shape = [d * r for d, r in zip(padded, reps, strict=True)]
    offset = ndim - len(shape)

    def fcompute(*i):
        return data(*[i[offset + k] % d if r != 1 else i[offset + k]
                      for k, (d, r) in enumerate(zip(shape, reps[offset:], strict=True))])

    return _injective(out_shape, fcompute, "T_tile")


def repeat(data, repeats, axis):
    """Each element of ``data`` repeated ``repeats`` times along ``axis`` (numpy's ``repeat``)."""
    shape = list(get_const_tuple(data.shape))
    axis = normalize_axis(axis, len(shape), "repeat axis")
    shape[axis] *= int(repeats)
    return _injective(shape, lambda *i: data(*(i[:axis] + (i[axis] // repeats,) + i[axis + 1:])), "T_repeat")


def reverse(data, axis):
    """``data`` reversed along ``axis`` (TVM's ``topi.flip``)."""
    shape = get_const_tuple(data.shape)
    axis = normalize_axis(axis, len(shape), "reverse axis")
    last = shape[axis] - 1
    return _injective(shape, lambda *i: data(*(i[:axis] + (last - i[axis],) + i[axis + 1:])), "T_reverse")


def flip(a, axis=0):
    """``a`` reversed along ``axis`` (TVM's name for :func:`reverse`)."""
    return reverse(a, axis)
