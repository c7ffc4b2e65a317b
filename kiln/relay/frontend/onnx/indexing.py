"""Converters of ONNX indexing operators: Gather, GatherElements, GatherND, ScatterElements (and the older
Scatter), ScatterND, OneHot, NonZero, Compress.

Negative indices are wrapped into range: at conversion time for constant indices, with ``where(i < 0, i + n, i)``
otherwise. NonZero and Compress have output shapes that depend on values, so those values must be constants.
"""

import numpy as np

from ....error import OpNotImplemented
from ....ir.type import is_any
from ... import op as _op
from . import dynamic
from .common import OnnxOpConverter, const, register


def wrap_indices(indices, dims, ctx):
    """Negative ``indices`` counted from the end of ``dims`` (a size, or sizes along the last axis)."""
    dtype = ctx.dtype(indices)
    if any(is_any(d) for d in np.atleast_1d(np.asarray(dims, dtype=object))):
        raise ctx.error("negative indices into an axis whose size is known only at run time are not supported",
                        OpNotImplemented)
    if ctx.is_const(indices):
        value = ctx.value(indices)
        return const(np.where(value < 0, value + np.asarray(dims, dtype), value), dtype)
    sizes = const(dims, dtype)
    return _op.where(_op.less(indices, const(0, dtype)), _op.add(indices, sizes), indices)


@register("Gather")
class Gather(OnnxOpConverter):
    """``take`` along ``axis`` (0)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        data, indices = inputs
        axis = ctx.axis(attr.get("axis", 0), ctx.ndim(data))
        if not is_any(ctx.shape(data)[axis]):
            return _op.take(data, wrap_indices(indices, ctx.shape(data)[axis], ctx), axis=axis)
        # a size known only at run time: negative indices wrap against it at run time
        size = _op.take(_op.shape_of(data, ctx.dtype(indices)), const(axis, "int64"))
        wrapped = _op.where(_op.less(indices, const(0, ctx.dtype(indices))), _op.add(indices, size), indices)
        return _op.take(data, wrapped, axis=axis)


@register("GatherElements")
class GatherElements(OnnxOpConverter):
    """``gather`` (numpy's ``take_along_axis``) along ``axis`` (0)."""

    @classmethod
    def _impl_v11(cls, inputs, attr, ctx):
        data, indices = inputs
        axis = ctx.axis(attr.get("axis", 0), ctx.ndim(data))
        return _op.gather(data, axis, wrap_indices(indices, ctx.shape(data)[axis], ctx))


@register("GatherND")
class GatherND(OnnxOpConverter):
    """``gather_nd`` with the index tuples moved from the last axis (ONNX) to the first (Relay)."""

    @classmethod
    def _impl_v11(cls, inputs, attr, ctx):
        data, indices = inputs
        batch_dims = attr.get("batch_dims", 0)
        ishape = ctx.shape(indices)
        m = ishape[-1]
        indices = wrap_indices(indices, ctx.shape(data)[batch_dims : batch_dims + m], ctx)
        rank = len(ishape)
        indices = _op.transpose(indices, [rank - 1] + list(range(rank - 1)))
        return _op.gather_nd(data, indices, batch_dims=batch_dims)


_REDUCTIONS = {"none": "update", "add": "add", "mul": "mul", "min": "min", "max": "max"}


def _reduction(attr, ctx):
    reduction = attr.get("reduction", "none")
    if reduction not in _REDUCTIONS:
        raise ctx.error(f"unknown reduction {reduction!r}")
    return _REDUCTIONS[reduction]


@register("ScatterElements", "Scatter")
class ScatterElements(OnnxOpConverter):
    """``scatter_elements`` along ``axis`` (0) with ``reduction`` (none, add, mul, min, max)."""

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        data, indices, updates = inputs
        axis = ctx.axis(attr.get("axis", 0), ctx.ndim(data))
        indices = wrap_indices(indices, ctx.shape(data)[axis], ctx)
        return _op.scatter_elements(data, indices, updates, axis, _reduction(attr, ctx))


@register("ScatterND")
class ScatterND(OnnxOpConverter):
    """``scatter_nd`` with the index tuples moved from the last axis (ONNX) to the first (Relay)."""

    @classmethod
    def _impl_v11(cls, inputs, attr, ctx):
        data, indices, updates = inputs
        ishape = ctx.shape(indices)
        indices = wrap_indices(indices, ctx.shape(data)[: ishape[-1]], ctx)
        rank = len(ishape)
        indices = _op.transpose(indices, [rank - 1] + list(range(rank - 1)))
        return _op.scatter_nd(data, indices, updates, _reduction(attr, ctx))


@register("OneHot")
class OneHot(OnnxOpConverter):
    """``values[1]`` where the new axis equals the index, ``values[0]`` elsewhere (negative indices count from
    ``depth``)."""

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        indices, depth_in, values = inputs
        depth = ctx.value_or_none(depth_in, "depth")
        if not ctx.dtype(indices).startswith(("int", "uint")):
            indices = _op.cast(indices, "int64")
        dtype = ctx.dtype(values)
        off = _op.take(values, const(0, "int32"))
        on = _op.take(values, const(1, "int32"))
        if depth is None:  # known only at run time: dyn.one_hot
            depth = _op.cast(_op.reshape(depth_in, ()), ctx.dtype(indices))
            indices = _op.where(_op.less(indices, const(0, ctx.dtype(indices))), _op.add(indices, depth), indices)
            return ctx.dynamic_op("dyn.one_hot", "depth")(indices, on, off, depth, attr.get("axis", -1), dtype)
        depth = int(depth.reshape(-1)[0])
        indices = wrap_indices(indices, depth, ctx)
        return _op.one_hot(indices, on, off, depth, attr.get("axis", -1), dtype)


@register("NonZero")
class NonZero(OnnxOpConverter):
    """Indices of the nonzero elements: a constant when the input is one, else ``argwhere`` at run time (the
    result's shape depends on the values)."""

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        value = ctx.value_or_none(inputs[0], "input (NonZero's output shape depends on it)")
        if value is None:
            return dynamic.nonzero(inputs[0], ctx)
        return const(np.array(np.nonzero(value), "int64").reshape(value.ndim, -1), "int64")


@register("Compress")
class Compress(OnnxOpConverter):
    """The slices where the condition holds, along ``axis`` or of the flattened input (``argwhere`` when the
    condition is known only at run time)."""

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        x, condition = inputs
        keep = ctx.value_or_none(condition, "condition (Compress's output shape depends on it)")
        if keep is None:
            axis = ctx.axis(attr["axis"], ctx.ndim(x)) if "axis" in attr else None
            return dynamic.compress(x, condition, axis, ctx)
        keep = np.nonzero(keep)[0]
        indices = const(keep.astype("int64"), "int64")
        if "axis" not in attr:
            return _op.take(_op.reshape(x, (-1,)), indices)
        return _op.take(x, indices, axis=ctx.axis(attr["axis"], ctx.ndim(x)))


@register("ReverseSequence")
class ReverseSequence(OnnxOpConverter):
    """Reverse the first ``sequence_lens[b]`` elements along ``time_axis`` of each batch: ``reverse_sequence``."""

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        return _op.reverse_sequence(inputs[0], inputs[1], attr.get("time_axis", 0), attr.get("batch_axis", 1))
