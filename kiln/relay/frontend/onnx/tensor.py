"""Converters of ONNX shape and data-movement operators: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat,
Split, Slice, Shape, Size, Constant, ConstantOfShape, Cast, CastLike, Expand, Tile, Range, Where, DepthToSpace,
SpaceToDepth, Trilu, EyeLike.

The operands ONNX passes as tensors to describe shapes (Reshape's ``shape``, Slice's ``starts``/``ends``, Pad's
``pads``...) are read as numbers while converting when they are constants, and Shape, Size, Range, ConstantOfShape
of static shapes become constants. When they depend on graph inputs the converters build the dynamic
forms of :mod:`.dynamic` instead (the module then runs on the VM).
"""

import math

import numpy as np

from ....error import OpNotImplemented
from ....ir.type import is_any
from ... import op as _op
from ...op import nn as _nn
from ...op.type_relations import broadcast_shapes
from . import dynamic
from .common import OnnxOpConverter, const, onnx_dtype, register


def onnx_reshape_shape(in_shape, target, allowzero, ctx) -> tuple:
    """The output shape of ONNX Reshape: 0 copies the input dimension (unless ``allowzero``), -1 is inferred."""
    out = []
    for i, d in enumerate(int(v) for v in target):
        if d == 0 and not allowzero:
            if i >= len(in_shape):
                raise ctx.error(f"shape {list(target)} copies dimension {i} of an input of shape {in_shape}")
            d = in_shape[i]
        out.append(d)
    total = math.prod(in_shape)
    if out.count(-1) > 1 or any(d < -1 for d in out):
        raise ctx.error(f"invalid shape {list(target)}")
    if -1 in out:
        known = math.prod(d for d in out if d != -1)
        if known == 0 or total % known:
            raise ctx.error(f"cannot infer -1 in shape {list(target)} for an input of shape {in_shape}")
        out[out.index(-1)] = total // known
    if math.prod(out) != total:
        raise ctx.error(f"cannot reshape {in_shape} to {tuple(out)}")
    return tuple(out)


@register("Reshape")
class Reshape(OnnxOpConverter):
    """Reshape to a static shape (attribute before opset 5, constant input after; ``allowzero`` from 14)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        return cls._reshape(inputs[0], attr["shape"], 0, ctx)

    @classmethod
    def _impl_v5(cls, inputs, attr, ctx):
        shape = ctx.value_or_none(inputs[1], "shape")
        if shape is None:  # a shape computed at run time
            return ctx.dynamic_op("dyn.reshape", "the shape")(inputs[0], inputs[1], attr.get("allowzero", 0))
        return cls._reshape(inputs[0], shape, attr.get("allowzero", 0), ctx)

    @staticmethod
    def _reshape(x, target, allowzero, ctx):
        if ctx.ttype(x).is_dynamic:
            return dynamic.reshape(x, np.asarray(target, "int64").reshape(-1), allowzero, ctx)
        shape = onnx_reshape_shape(ctx.shape(x), target, allowzero, ctx)
        return x if shape == ctx.shape(x) else _op.reshape(x, shape, allowzero=0 in shape)


@register("Flatten")
class Flatten(OnnxOpConverter):
    """To 2-D: the axes before ``axis`` (1) become the rows, the rest the columns."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        shape = ctx.shape(inputs[0])
        axis = attr.get("axis", 1)
        axis = axis + len(shape) if axis < 0 else axis
        rows, columns = math.prod(shape[:axis]), math.prod(shape[axis:])
        if is_any(rows) and is_any(columns):
            raise ctx.error(f"cannot flatten {ctx.ttype(inputs[0])} at axis {axis}: both sides have dimensions "
                            f"known only at run time")
        # a side known only at run time is what the other leaves (-1)
        newshape = (-1 if is_any(rows) else rows, -1 if is_any(columns) else columns)
        return _op.reshape(inputs[0], newshape, allowzero=0 in shape)


@register("Transpose")
class Transpose(OnnxOpConverter):
    """Permute axes (reversed when ``perm`` is absent)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        perm = attr.get("perm")
        if perm is not None and sorted(perm) != list(range(ctx.ndim(inputs[0]))):
            raise ctx.error(f"perm {list(perm)} is not a permutation of the {ctx.ndim(inputs[0])} axes of its input")
        return _op.transpose(inputs[0], perm)


def _axes_input(inputs, index, attr, ctx, opset_since):
    """Axes from the attribute (before ``opset_since``) or the optional constant input."""
    if ctx.opset < opset_since:
        return attr.get("axes")
    value = ctx.optional_value(inputs, index, "axes")
    return None if value is None else [int(a) for a in value.reshape(-1)]


def _run_time_axes(inputs, index, ctx, opset_since):
    """The axes input when its values are known only at run time (else None)."""
    if ctx.opset < opset_since or len(inputs) <= index or inputs[index] is None:
        return None
    return inputs[index] if ctx.value_or_none(inputs[index], "axes") is None else None


@register("Squeeze")
class Squeeze(OnnxOpConverter):
    """Remove size-1 axes (all of them when ``axes`` is absent)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        given = _run_time_axes(inputs, 1, ctx, 13)
        if given is not None:  # one squeeze per set of size-1 axes, picked at run time
            shape = ctx.shape(inputs[0])
            cases = [(axes, cond) for axes, cond in dynamic.axis_sets(given, len(shape), ctx)
                     if all(shape[a] == 1 for a in axes)]
            if not cases:
                raise ctx.error(f"no {ctx.shape(given)[0]} axes of {shape} have size 1")
            return dynamic.choose([(cond, _op.squeeze(inputs[0], list(axes))) for axes, cond in cases], ctx, "axes")
        axes = _axes_input(inputs, 1, attr, ctx, 13)
        return _op.squeeze(inputs[0], axis=None if axes is None else axes)


@register("Unsqueeze")
class Unsqueeze(OnnxOpConverter):
    """Insert size-1 axes at ``axes`` (positions in the output)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        given = _run_time_axes(inputs, 1, ctx, 13)
        if given is not None:  # a reshape to a shape computed at run time
            return dynamic.unsqueeze(inputs[0], given, ctx)
        axes = _axes_input(inputs, 1, attr, ctx, 13)
        if axes is None:
            raise ctx.error("axes are required")
        return cls._unsqueeze(inputs[0], axes, ctx)

    @staticmethod
    def _unsqueeze(x, axes, ctx):
        shape = list(ctx.shape(x))
        rank = len(shape) + len(axes)
        positions = sorted(ctx.axis(a, rank, "axes") for a in axes)
        if any(is_any(d) for d in shape):  # sizes known only at run time stay where they are
            for axis in positions:
                x = _op.expand_dims(x, axis)
            return x
        for axis in positions:
            shape.insert(axis, 1)
        return _op.reshape(x, shape, allowzero=0 in shape)


@register("Concat")
class Concat(OnnxOpConverter):
    """Join along ``axis``."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        parts = [i for i in inputs if i is not None]
        return parts[0] if len(parts) == 1 else _op.concatenate(parts, attr.get("axis", 1))


@register("Split")
class Split(OnnxOpConverter):
    """Split along ``axis`` at the given sizes, into equal parts, or (opset 18 ``num_outputs``) into parts of
    ``ceil(dim / n)`` with a smaller last one."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        sizes = attr.get("split")
        if sizes is None and len(inputs) > 1 and inputs[1] is not None:
            sizes = ctx.value(inputs[1], "split")
        return cls._split(inputs[0], sizes, attr, ctx)

    @classmethod
    def _impl_v13(cls, inputs, attr, ctx):
        given = inputs[1] if len(inputs) > 1 else None
        if given is not None and ctx.value_or_none(given, "split") is None:  # sizes known only at run time
            axis = ctx.axis(attr.get("axis", 0), ctx.ndim(inputs[0]))
            return dynamic.split(inputs[0], given, axis, len(ctx.node.output), ctx)
        return cls._split(inputs[0], ctx.optional_value(inputs, 1, "split"), attr, ctx)

    @staticmethod
    def _split(x, sizes, attr, ctx):
        shape = ctx.shape(x)
        axis = ctx.axis(attr.get("axis", 0), len(shape))
        dim = shape[axis]
        if sizes is None:
            n = attr.get("num_outputs", len(ctx.node.output))
            if is_any(dim):  # parts of ceil(dim / n), the last one smaller, computed at run time
                length = _op.strided_slice(_op.shape_of(x, "int64"), [axis], [axis + 1])
                chunk = _op.floor_divide(_op.add(length, const(n - 1, "int64")), const(n, "int64"))
                last = _op.subtract(length, _op.multiply(chunk, const(n - 1, "int64")))
                return dynamic.split(x, _op.concatenate([chunk] * (n - 1) + [last], 0), axis, n, ctx)
            chunk = -(-dim // n)
            sizes = [chunk] * (n - 1) + [dim - chunk * (n - 1)]
        sizes = [int(s) for s in np.asarray(sizes).reshape(-1)]
        if is_any(dim):  # the last part's length is known at run time
            return _op.split(x, list(np.cumsum(sizes)[:-1]), axis)
        if sum(sizes) != dim or min(sizes) < 0:
            raise ctx.error(f"split sizes {sizes} do not add up to dimension {dim} of axis {axis}")
        return _op.split(x, list(np.cumsum(sizes)[:-1]), axis)


def slice_ranges(shape, starts, ends, axes, steps, ctx):
    """Per-axis ``(begin, end, step)`` for ONNX Slice, clamped like Python slices and written so that
    ``strided_slice`` reads them back unchanged."""
    ndim = len(shape)
    axes = list(range(len(starts))) if axes is None else [ctx.axis(a, ndim, "axes") for a in axes]
    steps = [1] * len(starts) if steps is None else [int(s) for s in steps]
    begin, end = [], []
    for s, e, a, step in zip(starts, ends, axes, steps, strict=True):
        dim = shape[a]
        b, en, _ = slice(int(s), int(e), step).indices(dim)
        # slice.indices says "before index 0" with -1, which strided_slice would read as the last index
        begin.append(b if b >= 0 else -dim - 1)
        end.append(en if en >= 0 else -dim - 1)
    return begin, end, steps, axes


@register("Slice")
class Slice(OnnxOpConverter):
    """``strided_slice`` from constant starts/ends/axes/steps (attributes before opset 10); ``dyn.strided_slice``
    when one of them is known only at run time."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        return cls._slice(inputs[0], attr["starts"], attr["ends"], attr.get("axes"), None, ctx)

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        given = [inputs[i] if len(inputs) > i else None for i in range(1, 5)]
        values = [None if g is None else ctx.value_or_none(g, what)
                  for g, what in zip(given, ("starts", "ends", "axes", "steps"), strict=True)]
        if any(g is not None and v is None for g, v in zip(given, values, strict=True)):  # known only at run time
            # axes and steps: their values when they are constants, else their expressions
            axes, steps = (g if v is None else v for g, v in zip(given[2:], values[2:], strict=True))
            return dynamic.strided_slice(inputs[0], given[0], given[1], axes, steps, ctx)
        for what, value in zip(("starts", "ends", "axes", "steps"), values, strict=True):
            if value is not None and np.ndim(value) != 1:  # ONNX Runtime refuses a scalar too
                raise ctx.error(f"{what} must be a 1-D tensor, got one of shape {np.shape(value)}")
        starts, ends, axes, steps = values
        return cls._slice(inputs[0], starts.reshape(-1), ends.reshape(-1),
                          None if axes is None else axes.reshape(-1), None if steps is None else steps.reshape(-1),
                          ctx)

    @staticmethod
    def _slice(x, starts, ends, axes, steps, ctx):
        if steps is not None and 0 in [int(s) for s in steps]:
            raise ctx.error("steps must not be 0")
        for what, values in (("ends", ends), ("axes", axes), ("steps", steps)):
            if values is not None and len(values) != len(starts):
                raise ctx.error(f"{what} has {len(values)} values, starts has {len(starts)}")
        shape = ctx.shape(x)
        sliced = range(len(starts)) if axes is None else [ctx.axis(a, len(shape), "axes") for a in axes]
        if any(is_any(shape[a]) for a in sliced):  # clamped against a size known only at run time
            return dynamic.strided_slice(x, const(np.asarray(starts, "int64"), "int64"),
                                         const(np.asarray(ends, "int64"), "int64"),
                                         None if axes is None else np.asarray(axes),
                                         None if steps is None else np.asarray(steps), ctx,
                                         "the size of a sliced axis")
        begin, end, steps, axes = slice_ranges(shape, starts, ends, axes, steps, ctx)
        return _op.strided_slice(x, begin, end, steps, axes)


@register("Shape")
class Shape(OnnxOpConverter):
    """The shape as an int64 constant when it is static (``start``/``end`` slice it from opset 15), else read at run
    time with ``shape_of``."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        shape = ctx.shape(inputs[0])
        start, end = slice(attr.get("start", 0), attr.get("end", len(shape))).indices(len(shape))[:2]
        if not any(is_any(d) for d in shape[start:end]):
            return const(np.array(shape[start:end], "int64"), "int64")
        dims = _op.shape_of(inputs[0], "int64")
        return dims if (start, end) == (0, len(shape)) else _op.strided_slice(dims, [start], [max(start, end)])


@register("Size")
class Size(OnnxOpConverter):
    """The number of elements as an int64 scalar: a constant when the shape is static, else the product of the shape
    read at run time."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        shape = ctx.shape(inputs[0])
        if not any(is_any(d) for d in shape):
            return const(math.prod(shape), "int64")
        return _op.prod(_op.shape_of(inputs[0], "int64"))


@register("Constant")
class Constant(OnnxOpConverter):
    """A constant from ``value`` or one of the ``value_*`` attributes."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        if "value" in attr:
            value = np.asarray(attr["value"])
            if value.dtype.kind not in "biuf":
                raise ctx.error(f"constants of numpy dtype {value.dtype} are not supported", OpNotImplemented)
            return const(value, value.dtype.name)
        for key, dtype in (("value_float", "float32"), ("value_floats", "float32"), ("value_int", "int64"),
                           ("value_ints", "int64")):
            if key in attr:
                return const(attr[key], dtype)
        present = ", ".join(sorted(attr)) or "none"
        raise ctx.error(f"unsupported constant attribute ({present})", OpNotImplemented)


@register("ConstantOfShape")
class ConstantOfShape(OnnxOpConverter):
    """A constant of the given static shape filled with ``value`` (float32 0 by default)."""

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        value = np.asarray(attr.get("value", np.zeros(1, "float32"))).reshape(-1)
        shape = ctx.value_or_none(inputs[0], "shape")
        if shape is None:
            return dynamic.full(value[0], inputs[0], value.dtype.name, ctx)
        shape = [int(d) for d in shape.reshape(-1)]
        return const(np.full(shape, value[0], value.dtype), value.dtype.name)


def cast_dtype(to, ctx):
    """The kiln dtype of Cast's ``to`` (a TensorProto type; a type name before opset 6)."""
    if isinstance(to, str):
        from onnx import TensorProto

        to = TensorProto.DataType.Value(to.upper())
    return onnx_dtype(to, f"ONNX node {ctx.name!r} ({ctx.node.op_type}) target type")


@register("Cast")
class Cast(OnnxOpConverter):
    """Convert to ``to``."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        dtype = cast_dtype(attr["to"], ctx)
        return inputs[0] if ctx.dtype(inputs[0]) == dtype else _op.cast(inputs[0], dtype)


@register("CastLike")
class CastLike(OnnxOpConverter):
    """Convert to the dtype of the second input."""

    @classmethod
    def _impl_v15(cls, inputs, attr, ctx):
        dtype = ctx.dtype(inputs[1])
        return inputs[0] if ctx.dtype(inputs[0]) == dtype else _op.cast(inputs[0], dtype)


@register("Expand")
class Expand(OnnxOpConverter):
    """Broadcast to the (bidirectional) broadcast of the input shape and the given shape."""

    @classmethod
    def _impl_v8(cls, inputs, attr, ctx):
        x = inputs[0]
        target = ctx.value_or_none(inputs[1], "shape")
        if target is None:
            return dynamic.expand(x, inputs[1], ctx)
        target = tuple(int(d) for d in target.reshape(-1))
        if ctx.ttype(x).is_dynamic:  # broadcast against a tensor of the target shape: exact for every dtype
            return _op.where(const(np.ones(target, bool), "bool"), x, x)
        shape = broadcast_shapes(ctx.shape(x), target)
        return x if shape == ctx.shape(x) else _op.broadcast_to(x, shape)


@register("Tile")
class Tile(OnnxOpConverter):
    """numpy's ``tile`` with constant repeats."""

    @classmethod
    def _impl_v6(cls, inputs, attr, ctx):
        repeats = ctx.value_or_none(inputs[1], "repeats")
        if repeats is None:
            return dynamic.tile(inputs[0], inputs[1], ctx)
        return _op.tile(inputs[0], [int(r) for r in repeats.reshape(-1)])


@register("Range")
class Range(OnnxOpConverter):
    """A constant ``start + i * delta`` for ``i < max(ceil((limit - start) / delta), 0)``."""

    @classmethod
    def _impl_v11(cls, inputs, attr, ctx):
        names = ("start", "limit", "delta")  # three inputs: the schema check (validate.py) saw to it
        values = [ctx.value_or_none(i, name) for i, name in zip(inputs, names, strict=True)]
        dtype = ctx.dtype(inputs[0])
        if any(v is None for v in values):
            return dynamic.arange(*inputs, dtype, ctx)
        start, limit, delta = (v.reshape(()) for v in values)
        count = max(int(np.ceil((float(limit) - float(start)) / float(delta))), 0)
        return const(start + np.arange(count, dtype=dtype) * delta, dtype)


@register("Where")
class Where(OnnxOpConverter):
    """Select from the second input where the condition holds, else from the third."""

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        return _op.where(*inputs)


@register("DepthToSpace")
class DepthToSpace(OnnxOpConverter):
    """Move channel blocks into ``blocksize`` x ``blocksize`` spatial blocks (modes DCR and CRD):
    ``nn.depth_to_space``."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        return _nn.depth_to_space(inputs[0], attr["blocksize"], "NCHW", attr.get("mode", "DCR"))


@register("SpaceToDepth")
class SpaceToDepth(OnnxOpConverter):
    """Move ``blocksize`` x ``blocksize`` spatial blocks into channels (block-major ``DCR`` order, or
    channel-major ``CRD``)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x = inputs[0]
        n, c, h, w = ctx.shape(x)
        b = attr["blocksize"]
        perm = (0, 3, 5, 1, 2, 4) if attr.get("mode", "DCR") == "DCR" else (0, 1, 3, 5, 2, 4)
        y = _op.transpose(_op.reshape(x, (n, c, h // b, b, w // b, b)), perm)
        return _op.reshape(y, (n, c * b * b, h // b, w // b))


@register("Trilu")
class Trilu(OnnxOpConverter):
    """Keep the upper (or lower) triangle of the last two axes from diagonal ``k`` (a constant or a run-time
    value), zero the rest: ``trilu``."""

    @classmethod
    def _impl_v14(cls, inputs, attr, ctx):
        k = inputs[1] if len(inputs) > 1 and inputs[1] is not None else const(0, "int64")
        return _op.trilu(inputs[0], k, bool(attr.get("upper", 1)))


@register("EyeLike")
class EyeLike(OnnxOpConverter):
    """A constant matrix of the input's shape with ones on diagonal ``k``."""

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        rows, cols = ctx.shape(inputs[0])
        dtype = cast_dtype(attr["dtype"], ctx) if "dtype" in attr else ctx.dtype(inputs[0])
        return const(np.eye(rows, cols, attr.get("k", 0), dtype=dtype), dtype)
