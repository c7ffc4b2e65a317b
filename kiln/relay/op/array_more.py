"""More array operators of TVM: ``invert_permutation contrib_reverse_reshape strided_set sparse_reshape
fixed_point_multiply nn.fifo_buffer vision.multibox_prior nn.sparse_dense nn.sparse_add debug``.

``sparse_reshape`` keeps static shapes: its outputs' shapes follow from its inputs' shapes (the ``-1`` of the new
shape is resolved from the values at run time).
"""

import numpy as np

from ...error import TypeInferenceError
from ...ir.type import Any, TensorType, TupleType, is_any
from ..expr import TupleWrapper, const
from . import attrs as AS
from . import attrs_array as A
from .op import OpPattern, make_call, register_relay_op
from .tensor import reshape_shape
from .type_relations import ALL, INTEGER, NUMERIC, normalize_axis, same_dtype, shapes_match, tensor_arg


def _invert_permutation_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    if data.ndim != 1:
        raise TypeInferenceError(f"invert_permutation: data {data} must be 1-D")
    return data


register_relay_op("invert_permutation", 1, _invert_permutation_rel, OpPattern.INJECTIVE, dtypes=INTEGER)


def invert_permutation(data):
    """The inverse of the permutation ``data``: ``out[data[i]] = i``."""
    return make_call("invert_permutation", [data])


def reverse_reshape_shape(in_shape, newshape) -> tuple:
    """``reshape``'s special values applied from the right (TVM's ``contrib_reverse_reshape``)."""
    return tuple(reversed(reshape_shape(tuple(reversed(in_shape)), tuple(reversed(newshape)))))


def _reverse_reshape_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    return TensorType(reverse_reshape_shape(data.shape, attrs.newshape), data.dtype)


register_relay_op("contrib_reverse_reshape", 1, _reverse_reshape_rel, OpPattern.INJECTIVE, AS.ReshapeAttrs)


def contrib_reverse_reshape(data, newshape):
    """``reshape`` whose special values (0, -1, ...) are matched from the right: ``(10, 5, 4)`` with
    ``(-1, 0)`` gives ``(50, 4)``."""
    return make_call("contrib_reverse_reshape", [data], AS.ReshapeAttrs(tuple(newshape), 0))


reverse_reshape = contrib_reverse_reshape  # TVM's relay.reverse_reshape builds the same operator


def _strided_set_rel(types, attrs):
    data, v = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "v")
    for i, name in ((2, "begin"), (3, "end"), (4, "strides")):
        t = tensor_arg(types, i, name)
        if t.shape != (data.ndim,):
            raise TypeInferenceError(f"strided_set: {name} {t} must be 1-D with one value per axis of {data}")
    if v.ndim != data.ndim:
        raise TypeInferenceError(f"strided_set: v {v} must have the rank of data {data}")
    same_dtype([data, v], "strided_set data and v")
    return data


register_relay_op("strided_set", 5, _strided_set_rel, OpPattern.INJECTIVE, dtypes=(ALL, ALL, INTEGER))


def strided_set(data, v, begin, end, strides=None):
    """``data`` with the strided slice ``begin:end:strides`` (1-D integer tensors, positive strides) replaced by
    ``v`` (of the slice's shape)."""
    if strides is None:
        strides = const(np.ones(len(begin.data.numpy()) if hasattr(begin, "data") else 1, "int64"))
    return make_call("strided_set", [data, v, begin, end, strides])


def _sparse_reshape_rel(types, attrs):
    indices, prev, new = (tensor_arg(types, i, n) for i, n in enumerate(["sparse_indices", "prev_shape",
                                                                        "new_shape"]))
    if indices.ndim != 2 or prev.shape != (indices.shape[1],) or new.ndim != 1:
        raise TypeInferenceError(f"sparse_reshape: sparse_indices {indices} must be (N, rank), prev_shape {prev} "
                                 f"(rank,) and new_shape {new} 1-D")
    return TupleType([TensorType((indices.shape[0], new.shape[0]), indices.dtype), TensorType(new.shape, new.dtype)])


register_relay_op("sparse_reshape", 3, _sparse_reshape_rel, OpPattern.INJECTIVE, dtypes=INTEGER)


def sparse_reshape(sparse_indices, prev_shape, new_shape):
    """The coordinates of a sparse tensor of ``prev_shape`` in the same tensor reshaped to ``new_shape`` (one
    ``-1`` allowed), and the new shape: index the result ``[0]`` and ``[1]``."""
    return TupleWrapper(make_call("sparse_reshape", [sparse_indices, prev_shape, new_shape]), 2)


register_relay_op("fixed_point_multiply", 1, lambda types, attrs: tensor_arg(types, 0, "data"),
                  OpPattern.ELEMWISE, A.FixedPointMultiplyAttrs, dtypes=("int32",))


def fixed_point_multiply(data, multiplier, shift):
    """``round(data * multiplier / 2**31 * 2**shift)`` in int64 arithmetic (TVM's ``q_multiply_shift``: rounding
    half up)."""
    return make_call("fixed_point_multiply", [data], A.FixedPointMultiplyAttrs(int(multiplier), int(shift)))


def _fifo_buffer_rel(types, attrs):
    data, buffer = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "buffer")
    axis = normalize_axis(attrs.axis, buffer.ndim, "nn.fifo_buffer axis")
    if data.ndim != buffer.ndim or any(d != b for k, (d, b) in enumerate(zip(data.shape, buffer.shape, strict=True))
                                       if k != axis) or data.shape[axis] > buffer.shape[axis]:
        raise TypeInferenceError(f"nn.fifo_buffer: data {data} must fit buffer {buffer} off axis {axis}")
    same_dtype([data, buffer], "nn.fifo_buffer data and buffer")
    return buffer


register_relay_op("nn.fifo_buffer", 2, _fifo_buffer_rel, OpPattern.OPAQUE, A.FIFOBufferAttrs)


def fifo_buffer(data, buffer, axis):
    """The last ``buffer.shape[axis]`` elements of ``concatenate([buffer, data], axis)``: ``data`` pushed into a
    FIFO."""
    return make_call("nn.fifo_buffer", [data, buffer], A.FIFOBufferAttrs(int(axis)))


def _multibox_prior_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    if data.ndim != 4:
        raise TypeInferenceError(f"vision.multibox_prior: data {data} must be NCHW")
    boxes = data.shape[2] * data.shape[3] * (len(attrs.sizes) + len(attrs.ratios) - 1)
    return TensorType((1, boxes, 4), data.dtype)


register_relay_op("vision.multibox_prior", 1, _multibox_prior_rel, OpPattern.OPAQUE, A.MultiBoxPriorAttrs,
                  dtypes=("float32",))


def multibox_prior(data, sizes=(1.0,), ratios=(1.0,), steps=(-1.0, -1.0), offsets=(0.5, 0.5), clip=False):
    """The SSD prior (anchor) boxes ``[x1, y1, x2, y2]`` of every pixel of the feature map ``data``, one per size
    and one per further ratio."""
    return make_call("vision.multibox_prior", [data], A.MultiBoxPriorAttrs(sizes, ratios, steps, offsets, clip))




def _sparse_dense_rel(types, attrs):
    dense, data, indices, indptr = (tensor_arg(types, i, n) for i, n in enumerate(["dense", "sparse_data",
                                                                                  "sparse_indices",
                                                                                  "sparse_indptr"]))
    if data.ndim not in (1, 3) or indices.ndim != 1 or indptr.ndim != 1 or dense.ndim != 2:
        raise TypeInferenceError(f"a CSR (1-D data) or BSR ((blocks, bs_r, bs_c) data) matrix (data {data}, indices "
                                 f"{indices}, indptr {indptr}) and a 2-D dense {dense}")
    if not shapes_match(indices.shape, data.shape[:1]):
        raise TypeInferenceError(f"sparse_indices {indices} must hold one entry per stored value or block of {data}")
    for t in (indices, indptr):
        if t.dtype not in INTEGER:
            raise TypeInferenceError(f"the sparse index arrays must be integers, got {t}")
    same_dtype([dense, data], "nn.sparse_dense dense and sparse data")
    block_rows = indptr.shape[0] - 1 if not is_any(indptr.shape[0]) else Any()
    rows = block_rows * data.shape[1] if data.ndim == 3 and not is_any(block_rows) else block_rows
    shape = (rows, dense.shape[0]) if attrs.sparse_lhs else (dense.shape[0], rows)
    return TensorType(shape, dense.dtype)


register_relay_op("nn.sparse_dense", 4, _sparse_dense_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.SparseDenseAttrs,
                  dtypes=(NUMERIC, NUMERIC, INTEGER))


def sparse_dense(dense_mat, sparse_mat, sparse_lhs=False):
    """``dense_mat @ sparse_mat.T`` (or ``sparse_mat @ dense_mat.T`` when ``sparse_lhs``) of a CSR (1-D data) or BSR
    (``(blocks, bs_r, bs_c)`` data) matrix given as ``(data, indices, indptr)`` or an object with those fields."""
    data, indices, indptr = (sparse_mat.data, sparse_mat.indices, sparse_mat.indptr) if hasattr(
        sparse_mat, "indices") else sparse_mat
    return make_call("nn.sparse_dense", [dense_mat, data, indices, indptr], A.SparseDenseAttrs(sparse_lhs))


register_relay_op("debug", 1, lambda types, attrs: tensor_arg(types, 0, "data"), OpPattern.OPAQUE, A.DebugAttrs)


def debug(expr, debug_func=None):
    """``expr`` unchanged; the reference interpreter calls ``debug_func(value)`` (if given) when it evaluates it
    (compiled code passes the value through)."""
    return make_call("debug", [expr], A.DebugAttrs(debug_func))


def _fpm_per_axis_rel(types, attrs):
    x, mult, shift = (tensor_arg(types, i, n) for i, n in enumerate(["x", "fixed_point_multiplier", "shift"]))
    want = tuple(x.shape[normalize_axis(a, x.ndim, "fixed_point_multiply_per_axis axis")] for a in attrs.axes)
    if not (shapes_match(mult.shape, want) and shapes_match(shift.shape, want)):
        raise TypeInferenceError(f"fixed_point_multiply_per_axis: multiplier {mult} and shift {shift} must have "
                                 f"shape {want} (x {x} along axes {attrs.axes})")
    return x


register_relay_op("fixed_point_multiply_per_axis", 3, _fpm_per_axis_rel, OpPattern.BROADCAST,
                  A.FixedPointMultiplyPerAxisAttrs, dtypes=("int32",))


def fixed_point_multiply_per_axis(x, fixed_point_multiplier, shift, is_lshift_required, is_rshift_required, axes):
    """:func:`fixed_point_multiply` with a multiplier and a shift per index along ``axes`` (int32 tensors)."""
    return make_call("fixed_point_multiply_per_axis", [x, fixed_point_multiplier, shift],
                     A.FixedPointMultiplyPerAxisAttrs(is_lshift_required, is_rshift_required, tuple(axes)))


def _sparse_add_rel(types, attrs):
    dense, data, indices, indptr = (tensor_arg(types, i, n) for i, n in enumerate(["dense_data", "sparse_data",
                                                                                  "sparse_indices",
                                                                                  "sparse_indptr"]))
    # sizes known only at run time are checked then (the kernel records the checks)
    if dense.ndim != 2 or data.ndim != 1 or not shapes_match(indices.shape, data.shape) \
            or not shapes_match(indptr.shape, (dense.shape[0] + 1,)):
        raise TypeInferenceError(f"nn.sparse_add: dense {dense} and a CSR matrix of its shape (data {data}, "
                                 f"indices {indices}, indptr {indptr})")
    same_dtype([dense, data], "nn.sparse_add dense and sparse data")
    return dense


register_relay_op("nn.sparse_add", 4, _sparse_add_rel, OpPattern.OPAQUE, dtypes=(NUMERIC, NUMERIC, INTEGER))


def sparse_add(dense_mat, sparse_mat):
    """``dense_mat`` plus the CSR matrix ``sparse_mat = (data, indices, indptr)`` of its shape."""
    data, indices, indptr = sparse_mat
    return make_call("nn.sparse_add", [dense_mat, data, indices, indptr])
