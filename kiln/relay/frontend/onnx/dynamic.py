"""The dynamic forms of ONNX operators whose shape-deciding input is known only at run time (a graph input, or
computed from one): Reshape's ``shape``, Expand's ``shape``, Slice's ``starts``/``ends``, ConstantOfShape, Tile's
``repeats``, Pad's ``pads``, TopK's ``k``, OneHot's ``depth``, Range's bounds, and NonZero / Compress, whose result
size depends on values.

Each converter reads its shape-deciding input with :meth:`~.common.ConvertContext.value_or_none`; when that gives
None it calls the builder here, which maps the node onto Relay's ``dyn.*`` operators (TVM's names, results with
``relay.Any`` dimensions, run by the VM). :meth:`~.common.ConvertContext.dynamic_op` finds the operator, and while
kiln lacks it raises ``OpNotImplemented`` naming the node and the missing operator.

Inputs that act as attributes (the ``axes`` of a reduction, Unsqueeze or Squeeze, the ``axis`` of CumSum) have few
possible values: the node is built for each of them (:func:`axis_sets`, :func:`axis_choices`) and the value is
picked at run time by a chain of Relay ``If`` (:func:`choose`).
"""

from itertools import combinations
from math import comb

import numpy as np

from ....error import OpNotImplemented
from ....ir.op import Op
from ....ir.type import is_any
from ... import op as _op
from ...expr import Call, Tuple
from ...expr import If as RelayIf
from .common import const


def int64(expr, ctx):
    """``expr`` as int64 (shapes and indices are int64 at run time)."""
    return expr if ctx.dtype(expr) == "int64" else _op.cast(expr, "int64")


def vector(expr, ctx, what):
    """``expr`` (a tensor of a static number of elements) as a 1-D int64 tensor; returns ``(tensor, length)``."""
    shape = ctx.shape(expr)
    if any(not isinstance(d, int) for d in shape):
        raise ctx.error(f"{what} must have a static number of elements (the rank of the result), got shape {shape}")
    length = int(np.prod(shape, dtype=np.int64))
    expr = int64(expr, ctx)
    return (expr if len(shape) == 1 else _op.reshape(expr, (length,))), length


def reshape(x, target, allowzero, ctx):
    """ONNX Reshape of ``x``, whose shape has dimensions known only at run time, to the constant ``target``.
    Relay's reshape reads 0 (copy) and -1 (infer) as ONNX does and lowers with one such dimension; with more, the
    zeros are resolved against ``shape_of(x)`` at run time and ``dyn.reshape`` infers the -1 (a shape read at run
    time, so DynamicToStatic leaves it dynamic)."""
    if sum(is_any(d) for d in ctx.shape(x)) <= 1:
        return _op.reshape(x, [int(v) for v in target], allowzero=bool(allowzero))
    rank, n = ctx.ndim(x), len(target)
    if not allowzero and any(v == 0 for v in target[rank:]):
        raise ctx.error(f"shape {target.tolist()} copies a dimension beyond the input's rank {rank}")
    dims = _op.shape_of(x, "int64")
    dims = _op.strided_slice(dims, [0], [n]) if n <= rank else \
        _op.concatenate([dims, const(np.ones(n - rank, "int64"), "int64")], 0)
    shape = const(target, "int64")
    if not allowzero:
        shape = _op.where(_op.equal(shape, const(0, "int64")), dims, shape)
    return ctx.dynamic_op("dyn.reshape", "the input's shape")(x, shape, bool(allowzero))


def known_entries(expr, ctx) -> list:
    """The entries of the 0-d or 1-D integer tensor ``expr`` (a shape computed in the graph) known while
    converting, None where only run time knows them: through constants, ``shape_of`` (the static dimensions),
    ``concatenate``, casts, reshapes and unit-stride slices. Exporters build shapes as ``Concat(Shape(x)[0],
    [-1, 3])``; the entries known here keep those dimensions static in the result's type."""
    shape = ctx.shape(expr)
    length = int(np.prod(shape, dtype=np.int64)) if all(isinstance(d, int) for d in shape) else 0
    value = ctx.value_or_none(expr, "shape")
    if value is not None:
        return [int(v) for v in value.reshape(-1)]
    call = expr if isinstance(expr, Call) and isinstance(expr.op, Op) else None
    name = call.op.name if call is not None else ""
    if name == "shape_of":
        return [d if isinstance(d, int) else None for d in ctx.shape(call.args[0])]
    if name == "concatenate" and isinstance(call.args[0], Tuple):
        parts = [known_entries(f, ctx) for f in call.args[0].fields]
        return [v for part in parts for v in part] if sum(map(len, parts)) == length else [None] * length
    if name in ("cast", "reshape", "squeeze", "expand_dims") and len(ctx.shape(call.args[0])) <= 1:
        inner = known_entries(call.args[0], ctx)
        return inner if len(inner) == length else [None] * length
    if name == "strided_slice" and len(ctx.shape(call.args[0])) == 1 and call.attrs.strides in (None, (1,)) \
            and len(call.attrs.begin) == 1 and call.attrs.axes in (None, (0,)) and call.attrs.slice_mode == "end":
        inner = known_entries(call.args[0], ctx)
        part = inner[slice(call.attrs.begin[0], call.attrs.end[0])]
        return part if len(part) == length else [None] * length
    return [None] * length


def with_known_dims(result, dims):
    """``result`` (a dyn.* call whose dimensions are all ``relay.Any``) typed with the dimensions of ``dims`` that
    are ints: a reshape to them (0, a copy, for the others) when at most one stays unknown, as Relay's reshape
    lowers it (its shape function checks the sizes at run time)."""
    if all(d is None for d in dims) or sum(d is None for d in dims) > 1:
        return result
    return _op.reshape(result, [0 if d is None else d for d in dims])


def expand(x, shape, ctx):
    """ONNX Expand with a run-time shape: the bidirectional broadcast of ``x``'s shape and ``shape``
    (``dyn.broadcast_to`` to ``where(shape == 1, shape_of(x), shape)``, both padded with ones on the left); the
    result's dimensions known while converting stay static (:func:`known_entries`)."""
    broadcast_to = ctx.dynamic_op("dyn.broadcast_to", "the shape")
    known = known_entries(shape, ctx)
    shape, n = vector(shape, ctx, "shape")
    rank = ctx.ndim(x)
    have = _op.shape_of(x, "int64")
    if rank > n:
        shape = _op.concatenate([const(np.ones(rank - n, "int64"), "int64"), shape], 0)
    elif n > rank:
        have = _op.concatenate([const(np.ones(n - rank, "int64"), "int64"), have], 0)
    out = max(rank, n)
    wanted = [1] * (out - len(known)) + known
    dims = [1] * (out - rank) + [d if isinstance(d, int) else None for d in ctx.shape(x)]
    # a wanted 1 keeps x's size; an unknown one gives x's size when that is not 1 (else it must broadcast)
    result = [d if w == 1 else (w if w is not None else (d if d not in (None, 1) else None))
              for w, d in zip(wanted, dims, strict=True)]
    return with_known_dims(broadcast_to(x, _op.where(_op.equal(shape, const(1, "int64")), have, shape)), result)


def full(value, shape, dtype, ctx):
    """A tensor of the run-time ``shape`` filled with the scalar ``value`` (``dyn.full``), its dimensions known
    while converting static."""
    known = known_entries(shape, ctx)
    shape, _ = vector(shape, ctx, "shape")
    return with_known_dims(ctx.dynamic_op("dyn.full", "the shape")(const(value, dtype), shape, dtype), known)


def tile(x, repeats, ctx):
    """numpy's ``tile`` with run-time ``repeats`` (``dyn.tile``)."""
    repeats, _ = vector(repeats, ctx, "repeats")
    return ctx.dynamic_op("dyn.tile", "repeats")(x, repeats)


def strided_slice(x, starts, ends, axes, steps, ctx, what="starts or ends"):
    """ONNX Slice with run-time ``starts``/``ends``: ``dyn.strided_slice`` of the sliced axes, the others taken
    whole. ``axes`` and ``steps`` are each None (every axis in order; steps of 1), numpy values, or expressions
    known only at run time (then the begins, ends and strides of the sliced axes are scattered into full-rank
    vectors at run time)."""
    slicer = ctx.dynamic_op("dyn.strided_slice", what)
    starts, n = vector(starts, ctx, "starts")
    ends, _ = vector(ends, ctx, "ends")
    rank = ctx.ndim(x)
    if steps is None:
        steps = const(np.ones(n, "int64"), "int64")
    elif isinstance(steps, np.ndarray):
        steps = const(steps.reshape(-1).astype("int64"), "int64")
    else:
        steps, _ = vector(steps, ctx, "steps")
    if axes is None:
        axes = np.arange(n)
    if isinstance(axes, list | tuple):
        axes = np.asarray(axes)
    if isinstance(axes, np.ndarray):  # the other axes keep their sizes in the result's type
        axes = [ctx.axis(a, rank, "axes") for a in axes.reshape(-1)]
        if len(set(axes)) != len(axes):
            raise ctx.error(f"axes repeat an axis: {axes}")
        return slicer(x, starts, ends, steps, axes=axes)
    else:
        axes, _ = vector(axes, ctx, "axes")
        axes = _op.where(_op.less(axes, const(0, "int64")), _op.add(axes, const(rank, "int64")), axes)

    def full(fill, values):
        return _op.scatter_elements(const(np.full(rank, fill, "int64"), "int64"), axes, values, 0)

    return slicer(x, full(0, starts), full(np.iinfo(np.int64).max, ends), full(1, steps))


def split(x, sizes, axis, count, ctx):
    """ONNX Split into ``count`` parts along ``axis`` whose run-time ``sizes`` say how long each is: part ``j`` is
    the slice from the sum of the sizes before it."""
    sizes, n = vector(sizes, ctx, "split")
    if n != count:
        raise ctx.error(f"split has {n} sizes for {count} outputs")
    ends = _op.cumsum(sizes, 0)
    begins = _op.subtract(ends, sizes)
    parts = []
    for j in range(count):
        begin, end = _op.strided_slice(begins, [j], [j + 1]), _op.strided_slice(ends, [j], [j + 1])
        parts.append(strided_slice(x, begin, end, np.array([axis]), None, ctx))
    return parts


def arange(start, limit, delta, dtype, ctx):
    """ONNX Range with run-time bounds: ``start + delta * i`` for ``i < max(ceil((limit - start) / delta), 0)``.
    The count is a run-time value: ``i`` is the running sum of a ``dyn.full`` of that many ones, minus one."""
    full_op = ctx.dynamic_op("dyn.full", "the bounds")
    as_float = [_op.cast(_op.reshape(v, ()), "float64") for v in (start, limit, delta)]
    count = _op.maximum(_op.ceil(_op.divide(_op.subtract(as_float[1], as_float[0]), as_float[2])),
                        const(0.0, "float64"))
    ones = full_op(const(1, "int64"), _op.reshape(_op.cast(count, "int64"), (1,)), "int64")
    index = _op.subtract(_op.cumsum(ones, 0), const(1, "int64"))
    start, delta = (_op.reshape(v, ()) for v in (start, delta))
    return _op.add(start, _op.multiply(delta, _op.cast(index, dtype)))


def nonzero(x, ctx):
    """The int64 indices of the nonzero elements of ``x``, one row per axis (``argwhere``, transposed)."""
    found = ctx.dynamic_op("argwhere", "which elements are nonzero")(x)
    return _op.transpose(int64(found, ctx), (1, 0))


def compress(x, condition, axis, ctx):
    """The slices of ``x`` along ``axis`` (of its flattened elements when None) where the run-time ``condition``
    holds."""
    found = ctx.dynamic_op("argwhere", "the condition")(condition)
    indices = _op.squeeze(int64(found, ctx), [1])
    if axis is None:
        return _op.take(_op.reshape(x, (-1,)), indices)
    return _op.take(x, indices, axis=axis)


#: the most alternatives :func:`choose` builds for an attribute-like input known only at run time
MAX_CASES = 64


def axis_sets(axes, rank, ctx, what="axes"):
    """For ``axes`` known only at run time (a tensor of a static number ``k`` of distinct axes, negative ones counted
    from the end): ``[(axes tuple, condition)]`` for every set of ``k`` axes of a tensor of rank ``rank``, the
    condition (a bool scalar expression) saying the run-time ``axes`` are that set."""
    axes, k = vector(axes, ctx, what)
    if k > rank:
        raise ctx.error(f"{what} lists {k} axes for a tensor of rank {rank}")
    if comb(rank, k) > MAX_CASES:
        raise ctx.error(f"{what} known only at run time: {comb(rank, k)} possible sets of axes is too many",
                        OpNotImplemented)
    mask, _ = _axis_mask(axes, rank, ctx, what)
    cases = []
    for chosen in combinations(range(rank), k):
        indicator = const(np.isin(np.arange(rank), chosen), "bool")
        cases.append((chosen, _op.all(_op.equal(mask, indicator))))
    return cases


def _axis_mask(axes, rank, ctx, what="axes"):
    """The ``(rank,)`` bool mask of the run-time ``axes`` (negative ones counted from the end)."""
    axes, k = vector(axes, ctx, what)
    normalized = _op.where(_op.less(axes, const(0, "int64")), _op.add(axes, const(rank, "int64")), axes)
    hits = _op.equal(_op.reshape(normalized, (k, 1)), const(np.arange(rank, dtype="int64").reshape(1, rank), "int64"))
    return _op.any(hits, axis=0), k


def unsqueeze(x, axes, ctx):
    """ONNX Unsqueeze at run-time ``axes``: ``dyn.reshape`` to ``x``'s shape with ones inserted where the mask of
    the axes (in the output) is set; each other output dimension is the next input dimension."""
    reshape = ctx.dynamic_op("dyn.reshape", "axes")
    rank = ctx.ndim(x)
    _, k = vector(axes, ctx, "axes")
    mask, _ = _axis_mask(axes, rank + k, ctx)
    if rank == 0:
        return reshape(x, const(np.ones(k, "int64"), "int64"))
    source = _op.subtract(_op.cumsum(_op.cast(_op.logical_not(mask), "int64"), 0), const(1, "int64"))
    dims = _op.take(_op.shape_of(x, "int64"), _op.clip(source, 0, rank - 1))
    return reshape(x, _op.where(mask, const(1, "int64"), dims))


def axis_choices(axis, rank, ctx, what="axis"):
    """For a scalar ``axis`` known only at run time: ``[(axis, condition)]`` for each axis of a tensor of rank
    ``rank`` (a negative axis counts from the end)."""
    axis, n = vector(axis, ctx, what)
    if n != 1:
        raise ctx.error(f"{what} must hold one value, got {n}")
    axis = _op.reshape(axis, ())
    normalized = _op.where(_op.less(axis, const(0, "int64")), _op.add(axis, const(rank, "int64")), axis)
    return [(a, _op.equal(normalized, const(a, "int64"))) for a in range(rank)]


def choose(cases, ctx, what):
    """One of the values of ``cases`` (``[(condition, value)]``), picked at run time by the first condition that
    holds (the last value when none does): a chain of Relay ``If``.

    Values of different static shapes (of one rank and dtype) are given dynamic shapes first, so the branches share
    one type: ``dyn.reshape(value, shape_of(value) * condition)``. The factor is 1 where the value is taken; it keeps
    DynamicToStatic from folding the shape back to a constant, and when no condition holds (an invalid run-time
    value) the last value's reshape to zeros fails at run time with dyn.reshape's size check."""
    values = [ctx.typed(v) for _, v in cases]
    if len(values) == 1:
        return values[0]
    types = [v.checked_type for v in values]
    if any(t != types[0] for t in types):
        reshape = ctx.dynamic_op("dyn.reshape", what)
        values = [reshape(v, _op.multiply(_op.shape_of(v, "int64"), _op.cast(cond, "int64")))
                  for (cond, _), v in zip(cases, values, strict=True)]
    result = values[-1]
    for (cond, _), value in zip(reversed(cases[:-1]), reversed(values[:-1]), strict=True):
        result = RelayIf(cond, value, result)
    return result


def pad(x, pads, axes, mode, value, ctx):
    """ONNX Pad with run-time ``pads`` (all begins, then all ends, of ``axes`` or every axis; ``axes`` None, numpy
    values or an expression known only at run time): ``dyn.nn.pad`` with the ``(rank, 2)`` int64 widths, scattered
    into place at run time (negative widths, which crop, are not supported at run time)."""
    pad_op = ctx.dynamic_op("dyn.nn.pad", "pads")
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise ctx.error(f"pad mode {mode!r} with pads known only at run time is not supported", OpNotImplemented)
    rank = ctx.ndim(x)
    pads, n = vector(pads, ctx, "pads")
    if axes is None:
        axes = np.arange(rank)
    if isinstance(axes, np.ndarray):
        axes = const(np.asarray([ctx.axis(a, rank, "axes") for a in axes.reshape(-1)], "int64"), "int64")
    else:
        axes, _ = vector(axes, ctx, "axes")
        axes = _op.where(_op.less(axes, const(0, "int64")), _op.add(axes, const(rank, "int64")), axes)
    k = ctx.shape(axes)[0]
    if n != 2 * k:
        raise ctx.error(f"pads has {n} values for {k} axes (all begins, then all ends)")
    zeros = const(np.zeros(rank, "int64"), "int64")
    begins = _op.scatter_elements(zeros, axes, _op.strided_slice(pads, [0], [k]), 0)
    ends = _op.scatter_elements(zeros, axes, _op.strided_slice(pads, [k], [2 * k]), 0)
    width = _op.stack([begins, ends], 1)
    value = const(value, ctx.dtype(x)) if isinstance(value, np.ndarray | float | int) else _op.reshape(value, ())
    return pad_op(x, width, value, mode)
