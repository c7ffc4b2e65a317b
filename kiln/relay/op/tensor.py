"""Element-wise, broadcast and shape operators: builders (``relay.add`` ...), type relations and registration.

Helpers that compute output shapes (:func:`reshape_shape`, :func:`strided_slice_ranges`, :func:`split_indices`) are
shared with the interpreter and topi, so every layer agrees on the semantics.
"""

import itertools

from ...error import TypeInferenceError
from ...ir.expr import RelayExpr
from ...ir.type import Any, TensorType, TupleType, is_any
from ...tir.layout import layout as parse_layout
from ...topi.transform import slice_ranges
from ..expr import Tuple, TupleWrapper
from . import attrs as A
from .dispatch import constant_value, dyn_ops, is_dynamic
from .op import OpPattern, make_call, register_relay_op
from .shape_rules import reshape_shape  # noqa: F401  (re-exported: the relations of reshape-like ops use it)
from .type_relations import (
    ALL,
    BOOL,
    INTEGER,
    NUMERIC,
    broadcast_rel,
    broadcast_shapes,
    check_dtype,
    dims_match,
    identity_rel,
    normalize_axis,
    same_dtype,
    tensor_arg,
)

_UNARY = ["negative", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "abs", "erf", "floor", "ceil", "round", "sign"]
# bool arithmetic saturates (add is or, multiply and, maximum or, minimum and: kiln.tir.dtype_semantics), so those
# four take bool; subtracting, dividing or raising bools means nothing (numpy refuses it)
_BINARY = {"add": ALL, "subtract": NUMERIC, "multiply": ALL, "divide": NUMERIC, "power": NUMERIC, "maximum": ALL,
           "minimum": ALL}
for _name in _UNARY:
    register_relay_op(_name, 1, identity_rel, OpPattern.ELEMWISE, dtypes=NUMERIC)
for _name, _dtypes in _BINARY.items():
    register_relay_op(_name, 2, broadcast_rel, OpPattern.BROADCAST, dtypes=_dtypes)


def _unary(name):
    def build(data):
        return make_call(name, [data])

    build.__name__ = name
    build.__doc__ = f"Element-wise ``{name}``."
    return build


def _binary(name):
    def build(lhs, rhs):
        return make_call(name, [lhs, rhs])

    build.__name__ = name
    build.__doc__ = f"Broadcasting ``{name}`` of two tensors of one dtype (numpy rules)."
    return build


negative, exp, log, sqrt, rsqrt, tanh, sigmoid, abs, erf, floor, ceil, round, sign = map(_unary, _UNARY)  # noqa: A001
add, subtract, multiply, divide, power, maximum, minimum = map(_binary, _BINARY)


def _clip_rel(types, attrs):
    return tensor_arg(types, 0)


register_relay_op("clip", 1, _clip_rel, OpPattern.ELEMWISE, A.ClipAttrs, dtypes=NUMERIC)


def clip(a, a_min, a_max):
    """Clamp every element into ``[a_min, a_max]``."""
    return make_call("clip", [a], A.ClipAttrs(a_min, a_max))


def _cast_rel(types, attrs):
    check_dtype(attrs.dtype, ALL, "the target", "cast")
    return TensorType(tensor_arg(types, 0).shape, attrs.dtype)


register_relay_op("cast", 1, _cast_rel, OpPattern.ELEMWISE, A.CastAttrs)


def cast(data, dtype):
    """Convert ``data`` to ``dtype``."""
    return make_call("cast", [data], A.CastAttrs(dtype))


# ---------------------------------------------------------------------------------------------- reshape and friends
def _reshape_rel(types, attrs):
    data = tensor_arg(types, 0)
    return TensorType(reshape_shape(data.shape, attrs.newshape, attrs.allowzero), data.dtype)


register_relay_op("reshape", 1, _reshape_rel, OpPattern.INJECTIVE, A.ReshapeAttrs)


def reshape(data, newshape, allowzero=False):
    """Reshape ``data`` to ``newshape`` (with TVM's special values 0, -1, -2, -3, -4; see :func:`reshape_shape`);
    ``newshape`` given as a Relay expression (a shape computed at run time) makes ``dyn.reshape``, unless it is a
    constant (as in TVM)."""
    if is_dynamic(newshape):
        return dyn_ops().reshape(data, newshape, allowzero)
    newshape = constant_value(newshape)
    if isinstance(newshape, int):
        newshape = [newshape]
    return make_call("reshape", [data], A.ReshapeAttrs(tuple(newshape), int(allowzero)))


def transpose_axes(ndim, axes) -> tuple:
    """The permutation ``transpose`` applies (reversed axes when ``axes`` is None)."""
    if axes is None:
        return tuple(range(ndim - 1, -1, -1))
    perm = tuple(normalize_axis(a, ndim) for a in axes)
    if sorted(perm) != list(range(ndim)):
        raise TypeInferenceError(f"transpose: axes {tuple(axes)} are not a permutation of a rank-{ndim} tensor")
    return perm


def _transpose_rel(types, attrs):
    data = tensor_arg(types, 0)
    perm = transpose_axes(data.ndim, attrs.axes)
    return TensorType(tuple(data.shape[p] for p in perm), data.dtype)


register_relay_op("transpose", 1, _transpose_rel, OpPattern.INJECTIVE, A.TransposeAttrs)


def transpose(data, axes=None):
    """Permute the axes of ``data`` (reverse them when ``axes`` is None)."""
    return make_call("transpose", [data], A.TransposeAttrs(None if axes is None else tuple(axes)))


def squeeze_axes(shape, axis) -> list[int]:
    """The axes ``squeeze`` removes: all size-1 axes when ``axis`` is None."""
    if axis is None:
        return [i for i, d in enumerate(shape) if d == 1]
    axes = [normalize_axis(a, len(shape)) for a in axis]
    for a in axes:
        if not is_any(shape[a]) and shape[a] != 1:  # a dynamic size is checked at run time
            raise TypeInferenceError(f"squeeze: axis {a} of shape {tuple(shape)} has size {shape[a]}, not 1")
    return axes


def _squeeze_rel(types, attrs):
    data = tensor_arg(types, 0)
    axes = squeeze_axes(data.shape, attrs.axis)
    return TensorType(tuple(d for i, d in enumerate(data.shape) if i not in axes), data.dtype)


register_relay_op("squeeze", 1, _squeeze_rel, OpPattern.INJECTIVE, A.SqueezeAttrs)


def squeeze(data, axis=None):
    """Remove size-1 axes (all of them when ``axis`` is None); ``axis`` a non-constant Relay expression makes
    ``dyn.squeeze``."""
    if is_dynamic(axis):
        return dyn_ops().squeeze(data, axis)
    axis = constant_value(axis)
    if isinstance(axis, int):
        axis = (axis,)
    return make_call("squeeze", [data], A.SqueezeAttrs(None if axis is None else tuple(axis)))


def _expand_dims_rel(types, attrs):
    data = tensor_arg(types, 0)
    ndim = data.ndim
    if not -ndim - 1 <= attrs.axis <= ndim:
        raise TypeInferenceError(f"expand_dims: axis {attrs.axis} is out of range for rank {ndim}")
    axis = attrs.axis if attrs.axis >= 0 else attrs.axis + ndim + 1
    shape = data.shape[:axis] + (1,) * attrs.num_newaxis + data.shape[axis:]
    return TensorType(shape, data.dtype)


register_relay_op("expand_dims", 1, _expand_dims_rel, OpPattern.BROADCAST, A.ExpandDimsAttrs)


def expand_dims(data, axis, num_newaxis=1):
    """Insert ``num_newaxis`` size-1 axes at ``axis`` (a non-constant Relay expression makes ``dyn.expand_dims``)."""
    if is_dynamic(axis):
        return dyn_ops().expand_dims(data, axis, num_newaxis)
    axis = constant_value(axis)
    return make_call("expand_dims", [data], A.ExpandDimsAttrs(int(axis), int(num_newaxis)))


def _concatenate_rel(types, attrs):
    tup = types[0]
    if not isinstance(tup, TupleType) or not tup.fields:
        raise TypeInferenceError(f"concatenate takes a non-empty tuple of tensors, got {tup}")
    fields = [tensor_arg(tup.fields, i, "tuple field") for i in range(len(tup.fields))]
    ndim = fields[0].ndim
    axis = normalize_axis(attrs.axis, ndim)
    dtype = same_dtype(fields, "concatenated tensors")
    for f in fields:
        if f.ndim != ndim or any(not dims_match(a, b) for i, (a, b) in enumerate(zip(f.shape, fields[0].shape,
                                                                                         strict=True)) if i != axis):
            raise TypeInferenceError(
                f"concatenate on axis {axis}: shapes {', '.join(str(x.shape) for x in fields)} differ off that axis"
            )
    shape = list(fields[0].shape)
    shape[axis] = sum(f.shape[axis] for f in fields)
    concat_dynamic = _unknown(shape[axis])
    for i in range(ndim):
        known = [f.shape[i] for f in fields if not _unknown(f.shape[i])]
        # as TVM's relation: off the axis, a dimension some inputs leave unknown stays unknown unless the joined
        # axis is unknown too ([(1, 3), (1, ?)] -> (2, ?), [(?, 3), (?, ?)] -> (?, 3)); the kernel then checks
        # the sizes at run time
        if i != axis and len(known) < len(fields):
            shape[i] = known[0] if known and concat_dynamic else Any()
    return TensorType(tuple(shape), dtype)


def _unknown(dim) -> bool:
    """Whether ``dim`` is an unnamed ``Any`` (a symbolic dimension is a known expression)."""
    return isinstance(dim, Any) and dim.var is None


register_relay_op("concatenate", 1, _concatenate_rel, OpPattern.INJECTIVE, A.ConcatenateAttrs)


def concatenate(data, axis):
    """Join the tensors of ``data`` (a list or tuple expression, or the outputs of ``split``) along ``axis``."""
    if isinstance(data, list | tuple | TupleWrapper):  # a TupleWrapper is listed output by output, as TVM does
        data = Tuple(tuple(data))
    return make_call("concatenate", [data], A.ConcatenateAttrs(int(axis)))


def split_indices(dim, indices_or_sections, what="split") -> list[int]:
    """The split points of a dimension of size ``dim`` (``n`` sections must divide ``dim``)."""
    if isinstance(indices_or_sections, int):
        if dim % indices_or_sections:
            raise TypeInferenceError(f"{what}: {indices_or_sections} sections do not divide a dimension of {dim}")
        step = dim // indices_or_sections
        return [step * i for i in range(1, indices_or_sections)]
    return list(indices_or_sections)


def _split_rel(types, attrs):
    data = tensor_arg(types, 0)
    axis = normalize_axis(attrs.axis, data.ndim)
    if is_any(data.shape[axis]):
        # a size known at run time: the sections' sizes are too, and so is the last piece after given indices;
        # the pieces between two given indices have their static sizes (as in TVM)
        ios = attrs.indices_or_sections
        sizes = [Any()] * ios if isinstance(ios, int) else \
            [max(0, end - begin) for begin, end in itertools.pairwise([0, *ios])] + [Any()]
        return TupleType([TensorType(tuple(data.shape[:axis]) + (size,) + tuple(data.shape[axis + 1:]), data.dtype)
                          for size in sizes])
    points = [0, *split_indices(data.shape[axis], attrs.indices_or_sections), data.shape[axis]]
    fields = []
    for begin, end in itertools.pairwise(points):
        shape = list(data.shape)
        shape[axis] = max(0, min(end, data.shape[axis]) - begin)
        fields.append(TensorType(tuple(shape), data.dtype))
    return TupleType(fields)


register_relay_op("split", 1, _split_rel, OpPattern.INJECTIVE, A.SplitAttrs)


def split(data, indices_or_sections, axis=0):
    """Split ``data`` along ``axis`` into equal sections or at the given indices; index the result for each part."""
    ios = indices_or_sections if isinstance(indices_or_sections, int) else tuple(indices_or_sections)
    count = ios if isinstance(ios, int) else len(ios) + 1
    return TupleWrapper(make_call("split", [data], A.SplitAttrs(ios, int(axis))), count)


def _take_rel(types, attrs):
    data, indices = tensor_arg(types, 0), tensor_arg(types, 1)
    if attrs.axis is None:
        return TensorType(indices.shape, data.dtype)
    axis = normalize_axis(attrs.axis, data.ndim)
    bd = attrs.batch_dims % indices.ndim if indices.ndim and attrs.batch_dims < 0 else attrs.batch_dims
    shape = data.shape[:axis] + indices.shape[bd:] + data.shape[axis + 1 :]
    return TensorType(shape, data.dtype)


register_relay_op("take", 2, _take_rel, OpPattern.INJECTIVE, A.TakeAttrs, dtypes=(ALL, INTEGER))


def take(data, indices, axis=None, batch_dims=0, mode="clip"):
    """Gather elements of ``data`` at ``indices`` along ``axis`` (flattened when ``axis`` is None)."""
    return make_call("take", [data, indices], A.TakeAttrs(int(batch_dims), None if axis is None else int(axis), mode))


def strided_slice_ranges(shape, attrs) -> list[tuple[int, int, int]]:
    """``(begin, end, stride)`` per axis of ``shape`` for StridedSliceAttrs, clamped like Python slicing (the
    same helper topi's compute uses, so the type relation and the kernel agree)."""
    return slice_ranges(shape, attrs.begin, attrs.end, attrs.strides, attrs.axes, attrs.slice_mode)


def _strided_slice_rel(types, attrs):
    data = tensor_arg(types, 0)
    if attrs.axes is not None and len(attrs.axes) != len(attrs.begin):
        raise TypeInferenceError(f"strided_slice: {len(attrs.begin)} begin values for {len(attrs.axes)} axes")
    if attrs.axes is None and len(attrs.begin) > data.ndim:
        raise TypeInferenceError(f"strided_slice: {len(attrs.begin)} begin values for a rank-{data.ndim} tensor")
    # a dynamic axis is sliced like a huge one, and its result is dynamic: only the shape function knows it
    known = tuple(_HUGE if is_any(d) else d for d in data.shape)
    shape = tuple(Any() if is_any(d) else len(range(b, e, s))
                  for d, (b, e, s) in zip(data.shape, strided_slice_ranges(known, attrs), strict=True))
    return TensorType(shape, data.dtype)


_HUGE = 1 << 62


register_relay_op("strided_slice", 1, _strided_slice_rel, OpPattern.INJECTIVE, A.StridedSliceAttrs)


def strided_slice(data, begin, end, strides=None, axes=None, slice_mode="end"):
    """Slice ``data`` like ``data[begin:end:strides]`` on each axis (Python clamping rules). ``begin``, ``end`` or
    ``strides`` given as a non-constant Relay expression makes ``dyn.strided_slice`` (the others become constants;
    ``axes`` is then not supported, as in TVM)."""
    if any(is_dynamic(v) for v in (begin, end, strides)):
        return dyn_ops().transform.strided_slice_of(data, begin, end, strides, axes, slice_mode)
    begin, end, strides = constant_value(begin), constant_value(end), constant_value(strides)
    return make_call(
        "strided_slice",
        [data],
        A.StridedSliceAttrs(
            tuple(begin), tuple(end), None if strides is None else tuple(strides),
            None if axes is None else tuple(axes), slice_mode,
        ),
    )


def _where_rel(types, attrs):
    cond, x, y = (tensor_arg(types, i) for i in range(3))
    dtype = same_dtype([x, y], "where branches")
    return TensorType(broadcast_shapes(cond.shape, x.shape, y.shape), dtype)


register_relay_op("where", 3, _where_rel, OpPattern.BROADCAST, dtypes=(BOOL + INTEGER, ALL))


def where(condition, x, y):
    """Pick from ``x`` where ``condition`` holds and from ``y`` elsewhere (broadcasting all three)."""
    return make_call("where", [condition, x, y])


def _init_rel(types, attrs):
    check_dtype(attrs.dtype, ALL, "the result", "the initializer")
    return TensorType(attrs.shape, attrs.dtype)


def _full_rel(types, attrs):
    fill = tensor_arg(types, 0)
    if fill.shape:
        raise TypeInferenceError(f"full: fill_value must be a scalar, got {fill}")
    dtype = attrs.dtype or fill.dtype  # no dtype: the fill value's (TVM's rule)
    check_dtype(dtype, ALL, "the result", "full")
    return TensorType(attrs.shape, dtype)


register_relay_op("zeros", 0, _init_rel, OpPattern.ELEMWISE, A.InitOpAttrs)
register_relay_op("ones", 0, _init_rel, OpPattern.ELEMWISE, A.InitOpAttrs)
register_relay_op("full", 1, _full_rel, OpPattern.ELEMWISE, A.InitOpAttrs)


def _shape_tuple(shape):
    """A shape as a tuple; a single int is a one-dimensional shape, as TVM's builders take it."""
    return (shape,) if isinstance(shape, int) else shape


def zeros(shape, dtype="float32"):
    """A tensor of zeros (``shape`` a non-constant Relay expression: ``dyn.zeros``)."""
    if is_dynamic(shape):
        return dyn_ops().zeros(shape, dtype)
    shape = _shape_tuple(constant_value(shape))
    return make_call("zeros", [], A.InitOpAttrs(tuple(shape), dtype))


def ones(shape, dtype="float32"):
    """A tensor of ones (``shape`` a non-constant Relay expression: ``dyn.ones``)."""
    if is_dynamic(shape):
        return dyn_ops().ones(shape, dtype)
    shape = _shape_tuple(constant_value(shape))
    return make_call("ones", [], A.InitOpAttrs(tuple(shape), dtype))


def full(fill_value, shape=(), dtype=""):
    """A tensor filled with the scalar expression (or Python number) ``fill_value``, of ``dtype`` or, when it is
    empty, of the fill value's dtype (a Python number's as :func:`~kiln.relay.const` gives it). ``shape`` a
    non-constant Relay expression makes ``dyn.full``."""
    from ..expr import const

    if not isinstance(fill_value, RelayExpr):
        fill_value = const(fill_value, dtype or None)
        dtype = dtype or str(fill_value.data.dtype)
    if is_dynamic(shape):
        return dyn_ops().full(fill_value, shape, dtype)
    shape = _shape_tuple(constant_value(shape))
    return make_call("full", [fill_value], A.InitOpAttrs(tuple(shape), dtype or ""))


def _layout_transform_rel(types, attrs):
    data = tensor_arg(types, 0)
    try:
        shape = parse_layout(attrs.src_layout).convert_shape(data.shape, parse_layout(attrs.dst_layout))
    except Exception as exc:  # KilnError from the layout helper: report it as a typing error of this call
        raise TypeInferenceError(f"layout_transform {attrs.src_layout} -> {attrs.dst_layout}: {exc}") from exc
    return TensorType(shape, data.dtype)


register_relay_op("layout_transform", 1, _layout_transform_rel, OpPattern.INJECTIVE, A.LayoutTransformAttrs)


def layout_transform(data, src_layout, dst_layout):
    """Move ``data`` from ``src_layout`` to ``dst_layout`` (for example ``NCHW`` to ``NCHW16c``)."""
    return make_call("layout_transform", [data], A.LayoutTransformAttrs(src_layout, dst_layout))


def _shape_of_rel(types, attrs):
    check_dtype(attrs.dtype, NUMERIC, "the result", "shape_of")
    return TensorType((tensor_arg(types, 0).ndim,), attrs.dtype)


register_relay_op("shape_of", 1, _shape_of_rel, OpPattern.OPAQUE, A.ShapeOfAttrs)


def shape_of(data, dtype="int32"):
    """The shape of ``data`` as a 1-D tensor (FoldConstant turns it into a constant: shapes are static)."""
    return make_call("shape_of", [data], A.ShapeOfAttrs(dtype))
