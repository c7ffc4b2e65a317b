"""The dynamic data-movement operators (TVM's ``relay/op/dyn/transform.py``): ``reshape broadcast_to tile
expand_dims squeeze strided_slice one_hot``, each the static operator with a shape-deciding attribute given as a
tensor known at run time (``newshape``, ``shape``, ``reps``, ``axis``, ``begin``/``end``/``strides``, ``depth``).

Each registers, next to its type relation, a data-dependent shape function that computes the result's shape from
those values and checks them (a negative size, an axis out of range, a stride of 0 fail the call with a
:class:`~kiln.error.KilnError` naming the operator), and ``FDynamicToStatic``, the static call once the values are
constants."""

from dataclasses import dataclass

from ....error import TypeInferenceError
from ....ir.attrs import Attrs
from ....ir.expr import RelayExpr
from ....ir.type import Any, TensorType
from ....tir import op as _op
from ....tir.expr import Select
from ....topi import dynamic as dyn_topi
from ....topi.utils import prod
from ..op import OpPattern, make_call, register_op_attr, register_relay_op, register_shape_func
from ..tensor import expand_dims as static_expand_dims
from ..tensor import reshape as static_reshape
from ..tensor import squeeze as static_squeeze
from ..tensor import strided_slice as static_strided_slice
from ..transform import broadcast_to as static_broadcast_to
from ..transform import one_hot as static_one_hot
from ..transform import tile as static_tile
from ..type_relations import ALL, FLOAT, INTEGER, SIGNED, check_dtype, tensor_arg
from .common import (
    constant_ints,
    dim64,
    entries,
    entry,
    int64,
    nonnegative_checks,
    scalar_arg,
    select_of,
    shape_tensor,
    static_length,
)

__all__ = ["DynReshapeAttrs", "DynExpandDimsAttrs", "DynStridedSliceAttrs", "DynOneHotAttrs", "reshape",
           "broadcast_to", "tile", "expand_dims", "squeeze", "strided_slice", "strided_slice_of", "one_hot"]


@dataclass(frozen=True, slots=True)
class DynReshapeAttrs(Attrs):
    """``allowzero``: whether a 0 in the shape means a zero-sized dimension (1) or a copy of the input's (0)."""

    allowzero: int = 0


def _reshape_rel(types, attrs):
    data, newshape = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "newshape")
    if newshape.ndim != 1 or type(newshape.shape[0]) is Any:
        raise TypeInferenceError(f"newshape must be a 1-D tensor of a static length (the result's "
                                 f"rank), got {newshape}")
    return TensorType((Any(),) * newshape.shape[0], data.dtype)


register_relay_op("dyn.reshape", 2, _reshape_rel, OpPattern.OPAQUE, DynReshapeAttrs, dtypes=(ALL, SIGNED))
# its result is its data's elements in order: the VM views the data with the computed shape instead of copying
register_op_attr("dyn.reshape", "TReshapeOp", True)


@register_shape_func("dyn.reshape", True)
def _reshape_shape_func(attrs, inputs, out_types):
    """The values of ``newshape`` with TVM's 0 (copy the input's dimension, unless ``allowzero``) and -1 (what the
    others leave) resolved; checks: one -1 at most, no other negative entry, as many elements as the input."""
    data, newshape = inputs
    in_dims = [dim64(data, k) for k in range(len(data.shape))]
    rank = out_types[0].ndim
    values = [int64(newshape[j]) for j in range(rank)]
    resolved = []
    for j, v in enumerate(values):
        if attrs.allowzero or j >= len(in_dims):
            resolved.append(v)
        else:
            resolved.append(Select(_op.equal(v, 0), in_dims[j], v))
    known = prod([Select(_op.equal(r, -1), _op.const(1, "int64"), r) for r in resolved])
    total = prod(in_dims) if in_dims else _op.const(1, "int64")
    dims = [Select(_op.equal(r, -1), _op.floordiv(total, _op.maximum(known, _op.const(1, "int64"))), r)
            for r in resolved]
    inferred = sum((Select(_op.equal(v, -1), _op.const(1, "int64"), _op.const(0, "int64")) for v in values),
                   _op.const(0, "int64"))
    shape = shape_tensor(dims, "dyn_reshape_shape")
    checks = [(_op.less_equal(inferred, 1), "dyn.reshape: newshape has more than one -1"),
              *[(_op.greater_equal(v, -1), f"dyn.reshape: newshape entry {j} is negative (only -1 is allowed)")
                for j, v in enumerate(values)],
              (_op.equal(prod(dims) if dims else _op.const(1, "int64"), total),
               f"dyn.reshape: newshape does not hold as many elements as the data of shape {tuple(data.shape)}")]
    return [shape], checks


def reshape(data, newshape, allowzero=False):
    """``data`` reshaped to the shape held by the 1-D integer tensor ``newshape`` (TVM's 0 and -1 apply)."""
    return make_call("dyn.reshape", [data, newshape], DynReshapeAttrs(int(allowzero)))


@register_op_attr("dyn.reshape", "FDynamicToStatic")
def _reshape_to_static(call, values):
    """``reshape(data, newshape)`` once ``newshape`` is a constant."""
    if values[1] is None:
        return None
    return static_reshape(call.args[0], [int(v) for v in values[1]], call.attrs.allowzero)


# ------------------------------------------------------------------------------------------------- broadcast_to
def _broadcast_to_rel(types, attrs):
    data, shape = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "shape")
    rank = static_length(shape, "dyn.broadcast_to", "shape")
    if data.ndim > rank:
        raise TypeInferenceError(f"{data} has more dimensions than the {rank} of the shape")
    return TensorType((Any(),) * rank, data.dtype)


register_relay_op("dyn.broadcast_to", 2, _broadcast_to_rel, OpPattern.OPAQUE, dtypes=(ALL, SIGNED))


@register_shape_func("dyn.broadcast_to", True)
def _broadcast_to_shape_func(attrs, inputs, out_types):
    """The values of ``shape``; checks: none negative, and each dimension of ``data`` equals its entry or is 1."""
    data, shape = inputs
    values = entries(shape, out_types[0].ndim)
    offset = len(values) - len(data.shape)
    checks = nonnegative_checks(values, "dyn.broadcast_to", "shape")
    for k in range(len(data.shape)):
        d = dim64(data, k)
        checks.append((_op.logical_or(_op.equal(d, values[offset + k]), _op.equal(d, 1)),
                       f"dyn.broadcast_to: dimension {k} of data {tuple(data.shape)} does not broadcast to the "
                       f"shape's entry {offset + k}"))
    return [shape_tensor(values, "dyn_broadcast_to_shape")], checks


def broadcast_to(data, shape):
    """``data`` broadcast (numpy's rules) to the shape held by the 1-D integer tensor ``shape``."""
    return make_call("dyn.broadcast_to", [data, shape])


@register_op_attr("dyn.broadcast_to", "FDynamicToStatic")
def _broadcast_to_to_static(call, values):
    """``broadcast_to(data, shape)`` once ``shape`` is a constant."""
    return None if values[1] is None else static_broadcast_to(call.args[0], constant_ints(values[1]))


# --------------------------------------------------------------------------------------------------------- tile
def _tile_rel(types, attrs):
    data, reps = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "reps")
    return TensorType((Any(),) * max(data.ndim, static_length(reps, "dyn.tile", "reps")), data.dtype)


# TVM takes reps of a float type too (its tests do): they are read as integers
register_relay_op("dyn.tile", 2, _tile_rel, OpPattern.OPAQUE, dtypes=(ALL, SIGNED + FLOAT))


@register_shape_func("dyn.tile", True)
def _tile_shape_func(attrs, inputs, out_types):
    """The data's shape (padded with leading 1s) times ``reps`` (padded likewise); checks: no negative entry."""
    data, reps = inputs
    rank = out_types[0].ndim
    values = entries(reps, reps.shape[0].value if hasattr(reps.shape[0], "value") else reps.shape[0])
    dims = [_op.const(1, "int64")] * (rank - len(data.shape)) + [dim64(data, k) for k in range(len(data.shape))]
    padded = [_op.const(1, "int64")] * (rank - len(values)) + values
    shape = shape_tensor([d * r for d, r in zip(dims, padded, strict=True)], "dyn_tile_shape")
    return [shape], nonnegative_checks(values, "dyn.tile", "reps")


def tile(data, reps):
    """``data`` repeated ``reps[i]`` times along axis ``i`` (numpy's ``tile``), ``reps`` a 1-D integer tensor."""
    return make_call("dyn.tile", [data, reps])


@register_op_attr("dyn.tile", "FDynamicToStatic")
def _tile_to_static(call, values):
    """``tile(data, reps)`` once ``reps`` is a constant."""
    return None if values[1] is None else static_tile(call.args[0], constant_ints(values[1]))


# ---------------------------------------------------------------------------------------------------- expand_dims
@dataclass(frozen=True, slots=True)
class DynExpandDimsAttrs(Attrs):
    """``num_newaxis``: how many size-1 axes are inserted at the run-time ``axis``."""

    num_newaxis: int = 1


def _expand_dims_rel(types, attrs):
    data, axis = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "axis")
    scalar_arg(axis, "dyn.expand_dims", "axis")
    return TensorType((Any(),) * (data.ndim + attrs.num_newaxis), data.dtype)


register_relay_op("dyn.expand_dims", 2, _expand_dims_rel, OpPattern.OPAQUE, DynExpandDimsAttrs, dtypes=(ALL, SIGNED))


@register_shape_func("dyn.expand_dims", True)
def _expand_dims_shape_func(attrs, inputs, out_types):
    """The data's shape with ``num_newaxis`` 1s at ``axis`` (negative: counted from the end of the result); checks:
    ``axis`` in range."""
    data, axis_t = inputs
    ndim, n = len(data.shape), attrs.num_newaxis
    axis = entry(axis_t)
    axis = Select(_op.less(axis, 0), axis + (ndim + 1), axis)
    dims = [dim64(data, k) for k in range(ndim)]
    out = []
    for j in range(ndim + n):  # dimension j: a data dimension before the axis, a new 1, or a data dimension after
        before = dims[j] if j < ndim else _op.const(1, "int64")
        after = dims[j - n] if j >= n else _op.const(1, "int64")
        out.append(Select(_op.less(j, axis), before, Select(_op.less(j, axis + n), _op.const(1, "int64"), after)))
    checks = [(_op.logical_and(_op.greater_equal(axis, 0), _op.less_equal(axis, ndim)),
               f"dyn.expand_dims: axis is out of range for data of rank {ndim}")]
    return [shape_tensor(out, "dyn_expand_dims_shape")], checks


def expand_dims(data, axis, num_newaxis=1):
    """Insert ``num_newaxis`` size-1 axes at ``axis``, a scalar integer tensor known at run time."""
    return make_call("dyn.expand_dims", [data, axis], DynExpandDimsAttrs(int(num_newaxis)))


@register_op_attr("dyn.expand_dims", "FDynamicToStatic")
def _expand_dims_to_static(call, values):
    """``expand_dims(data, axis)`` once ``axis`` is a constant."""
    if values[1] is None:
        return None
    return static_expand_dims(call.args[0], constant_ints(values[1])[0], call.attrs.num_newaxis)


# -------------------------------------------------------------------------------------------------------- squeeze
def _squeeze_rel(types, attrs):
    data, axis = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "axis")
    count = static_length(axis, "dyn.squeeze", "axis")
    if count > data.ndim:
        raise TypeInferenceError(f"{count} axes to remove from {data}")
    return TensorType((Any(),) * (data.ndim - count), data.dtype)


register_relay_op("dyn.squeeze", 2, _squeeze_rel, OpPattern.OPAQUE, dtypes=(ALL, SIGNED))


@register_shape_func("dyn.squeeze", True)
def _squeeze_shape_func(attrs, inputs, out_types):
    """The data's shape without the axes listed in ``axis``; checks: each in range, of size 1, none twice."""
    data, axis_t = inputs
    ndim = len(data.shape)
    axes = [entry(axis_t, e) for e in range(ndim - out_types[0].ndim)]
    axes = [Select(_op.less(a, 0), a + ndim, a) for a in axes]
    dims = [dim64(data, k) for k in range(ndim)]
    one, zero = _op.const(1, "int64"), _op.const(0, "int64")
    kept = [_op.all(*[_op.not_equal(a, k) for a in axes]) if axes else _op.const(True, "bool") for k in range(ndim)]
    position, positions = zero, []
    for k in range(ndim):
        positions.append(position)
        position = position + Select(kept[k], one, zero)
    out = []
    for j in range(out_types[0].ndim):  # the j-th kept dimension
        value = zero
        for k in range(ndim):
            value = Select(_op.logical_and(kept[k], _op.equal(positions[k], j)), dims[k], value)
        out.append(value)
    checks = []
    for e, a in enumerate(axes):
        size = select_of(dims, a) if dims else one
        checks.append((_op.logical_and(_op.greater_equal(a, 0), _op.less(a, ndim)),
                       f"dyn.squeeze: axis entry {e} is out of range for data of rank {ndim}"))
        checks.append((_op.equal(size, 1), f"dyn.squeeze: axis entry {e} names a dimension whose size is not 1"))
        checks += [(_op.not_equal(a, b), f"dyn.squeeze: axis entries {f} and {e} name the same dimension")
                   for f, b in enumerate(axes[:e])]
    return [shape_tensor(out, "dyn_squeeze_shape")], checks


def squeeze(data, axis):
    """Remove the size-1 axes listed in the 1-D integer tensor ``axis``, known at run time."""
    return make_call("dyn.squeeze", [data, axis])


@register_op_attr("dyn.squeeze", "FDynamicToStatic")
def _squeeze_to_static(call, values):
    """``squeeze(data, axis)`` once ``axis`` is a constant."""
    return None if values[1] is None else static_squeeze(call.args[0], constant_ints(values[1]))


# -------------------------------------------------------------------------------------------------- strided_slice
@dataclass(frozen=True, slots=True)
class DynStridedSliceAttrs(Attrs):
    """``slice_mode``: ``end`` (``end`` holds end indices) or ``size`` (it holds sizes, -1 meaning the rest);
    ``axes``: the axes the entries of ``begin``/``end``/``strides`` slice, in order (None: the leading axes; kiln's
    extension of TVM's operator, whose builder refuses axes with run-time bounds), the other axes taken whole."""

    slice_mode: str = "end"
    axes: tuple | None = None

    def __post_init__(self):
        self._require(self.slice_mode in ("end", "size"), "slice_mode", "must be end or size")


def _strided_slice_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    if attrs.axes is None:
        for index, what in enumerate(("begin", "end", "strides"), 1):
            if static_length(tensor_arg(types, index, what), "dyn.strided_slice", what) > data.ndim:
                raise TypeInferenceError(f"{what} has more entries than data {data} has axes")
        return TensorType((Any(),) * data.ndim, data.dtype)
    axes = [a + data.ndim if a < 0 else a for a in attrs.axes]
    if len(set(axes)) != len(axes) or any(not 0 <= a < data.ndim for a in axes):
        raise TypeInferenceError(f"axes {attrs.axes} are not distinct axes of data {data}")
    for index, what in enumerate(("begin", "end", "strides"), 1):
        length = static_length(tensor_arg(types, index, what), "dyn.strided_slice", what)
        if length != len(axes) and not (what == "strides" and length == 1):
            raise TypeInferenceError(f"{what} must have an entry for each of axes {attrs.axes}, got {length}")
    shape = list(data.shape)
    for a in axes:
        shape[a] = Any()
    return TensorType(tuple(shape), data.dtype)


register_relay_op("dyn.strided_slice", 4, _strided_slice_rel, OpPattern.OPAQUE, DynStridedSliceAttrs,
                  dtypes=(ALL, SIGNED))


@register_shape_func("dyn.strided_slice", True)
def _strided_slice_shape_func(attrs, inputs, out_types):
    """The length of each sliced range (Python's clamping, as the kernel reads it); checks: no stride is 0."""
    data, begin, end, strides = inputs
    ranges = dyn_topi.slice_ranges_of(data.shape, begin, end, strides, attrs.slice_mode, attrs.axes)
    n = strides.shape[0].value if hasattr(strides.shape[0], "value") else strides.shape[0]
    checks = [(_op.not_equal(int64(strides[k]), 0), f"dyn.strided_slice: stride {k} is 0") for k in range(n)]
    return [shape_tensor([length for _, _, length in ranges], "dyn_strided_slice_shape")], checks


def strided_slice(data, begin, end, strides, slice_mode="end", axes=None):
    """``data[begin:end:strides]`` with ``begin``, ``end`` and ``strides`` 1-D integer tensors known at run time,
    their entries for the leading axes or, given ``axes``, for those axes."""
    axes = None if axes is None else tuple(int(a) for a in axes)
    return make_call("dyn.strided_slice", [data, begin, end, strides], DynStridedSliceAttrs(slice_mode, axes))


@register_op_attr("dyn.strided_slice", "FDynamicToStatic")
def _strided_slice_to_static(call, values):
    """``strided_slice(data, begin, end, strides)`` once all three are constants."""
    if any(v is None for v in values[1:]):
        return None
    begin, end, strides = (constant_ints(v) for v in values[1:])
    if 0 in strides:
        return None  # left for the shape function to refuse at run time, with its message
    return static_strided_slice(call.args[0], begin, end, strides or None, call.attrs.axes, call.attrs.slice_mode)


def strided_slice_of(data, begin, end, strides, axes, slice_mode):
    """``dyn.strided_slice`` from the arguments of the static builder, at least one of them a Relay expression: the
    others become int64 constants (no ``strides``: 1 on every axis); ``axes`` names the sliced axes (TVM's builder
    refuses them here)."""
    from ...expr import const

    begin, end = (v if isinstance(v, RelayExpr) else const(list(v), "int64") for v in (begin, end))
    if strides is None:
        strides = const([1], "int64")
    elif not isinstance(strides, RelayExpr):
        strides = const(list(strides), "int64")
    return strided_slice(data, begin, end, strides, slice_mode, axes)


# -------------------------------------------------------------------------------------------------------- one_hot
@dataclass(frozen=True, slots=True)
class DynOneHotAttrs(Attrs):
    """``axis``: where the new ``depth`` axis goes (-1: last); ``dtype``: the result's."""

    axis: int = -1
    dtype: str = "float32"


def _one_hot_rel(types, attrs):
    indices, on, off, depth = (tensor_arg(types, i, n) for i, n in enumerate(("indices", "on_value", "off_value",
                                                                              "depth")))
    if on.shape or off.shape:
        raise TypeInferenceError(f"on_value {on} and off_value {off} must be scalars")
    scalar_arg(depth, "dyn.one_hot", "depth")
    check_dtype(attrs.dtype, ALL, "the result", "dyn.one_hot")
    axis = attrs.axis if attrs.axis >= 0 else attrs.axis + indices.ndim + 1
    if not 0 <= axis <= indices.ndim:
        raise TypeInferenceError(f"axis {attrs.axis} is out of range for indices {indices}")
    return TensorType(indices.shape[:axis] + (Any(),) + indices.shape[axis:], attrs.dtype)


register_relay_op("dyn.one_hot", 4, _one_hot_rel, OpPattern.OPAQUE, DynOneHotAttrs, dtypes=(INTEGER, ALL, ALL, SIGNED))


@register_shape_func("dyn.one_hot", True)
def _one_hot_shape_func(attrs, inputs, out_types):
    """The indices' shape with ``depth`` inserted at ``axis``; checks: ``depth`` is not negative."""
    indices, depth = inputs[0], entry(inputs[3])
    ndim = len(indices.shape)
    axis = attrs.axis if attrs.axis >= 0 else attrs.axis + ndim + 1
    dims = [dim64(indices, k) for k in range(ndim)]
    shape = shape_tensor(dims[:axis] + [depth] + dims[axis:], "dyn_one_hot_shape")
    return [shape], [(_op.greater_equal(depth, 0), "dyn.one_hot: depth is negative")]


def one_hot(indices, on_value, off_value, depth, axis, dtype):
    """``on_value`` where the new axis (of the run-time size ``depth``, a scalar integer tensor) equals the index,
    ``off_value`` elsewhere."""
    return make_call("dyn.one_hot", [indices, on_value, off_value, depth], DynOneHotAttrs(int(axis), dtype))


@register_op_attr("dyn.one_hot", "FDynamicToStatic")
def _one_hot_to_static(call, values):
    """``one_hot(indices, on, off, depth)`` once ``depth`` is a constant."""
    if values[3] is None:
        return None
    return static_one_hot(*call.args[:3], constant_ints(values[3])[0], call.attrs.axis, call.attrs.dtype)
