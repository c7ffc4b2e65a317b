"""Generic computes of the array, ``*_like`` and ``variance`` operators (:mod:`kiln.relay.op.array`,
:mod:`kiln.relay.op.like`): adapters from each call's attributes to the topi computes of :mod:`kiln.topi.array`
and :mod:`kiln.topi.einsum`, merged into :data:`.generic.COMPUTES`."""

from ....tir import op as _tir_op
from ....topi import array as AR
from ....topi import array_more as AM
from ....topi import broadcast as B
from ....topi import elemwise as EW
from ....topi import signal as SG
from ....topi import transform as T
from ....topi.einsum import einsum
from ....topi.nn import sparse as SPN
from ....topi.reduction import reduce_axes
from ....topi.utils import get_const_tuple
from ..like import collapse_axes, reshape_like_shape

__all__ = ["ARRAY_COMPUTES"]


def _flat(inputs):
    out: list = []
    for x in inputs:
        out.extend(_flat(x) if isinstance(x, list | tuple) else [x])
    return out


def _collapse(attrs, inputs, out_type):
    data = inputs[0]
    shape = tuple(int(d) for d in out_type.shape)
    return [AR.collapse_sum(data, shape, collapse_axes([int(d) for d in data.shape], shape))]


def _slice_like(attrs, inputs, out_type):
    return [T.slice_like(inputs[0], list(inputs[1].shape), attrs.axes)]


def _variance(attrs, inputs, out_type):
    axes = reduce_axes(len(inputs[0].shape), attrs.axis, attrs.exclude)
    return [AR.variance(inputs[0], inputs[1], axes, attrs.keepdims, attrs.unbiased)]


def _arange(attrs, inputs, out_type):
    return [AR.arange(attrs.start, attrs.step, int(out_type.shape[0]), attrs.dtype)]


ARRAY_COMPUTES = {
    "nn.sparse_add": lambda attrs, inputs, out_type: [AM.sparse_add(inputs[0], inputs[1], inputs[2], inputs[3])],
    "fixed_point_multiply_per_axis": lambda attrs, inputs, out_type: [AM.fixed_point_multiply_per_axis(
        inputs[0], inputs[1], inputs[2], attrs.axes)],
    "nn.sparse_dense": lambda attrs, inputs, out_type: [SPN.sparse_dense(inputs[0], inputs[1], inputs[2], inputs[3],
                                                                        attrs.sparse_lhs)],
    "debug": lambda attrs, inputs, out_type: [EW.identity(inputs[0])],
    "annotation.stop_fusion": lambda attrs, inputs, out_type: [EW.identity(inputs[0])],
    "annotation.cast_hint": lambda attrs, inputs, out_type: [EW.identity(inputs[0])],
    # a region boundary PartitionGraph did not remove (a region of kiln's own "default" target) is the identity
    "annotation.compiler_begin": lambda attrs, inputs, out_type: [EW.identity(inputs[0])],
    "annotation.compiler_end": lambda attrs, inputs, out_type: [EW.identity(inputs[0])],
    # kiln runs every kernel on the host: an annotation of a device, or a copy between devices, is the identity
    "on_device": lambda attrs, inputs, out_type: [EW.identity(inputs[0])],
    "device_copy": lambda attrs, inputs, out_type: [EW.identity(inputs[0])],
    "invert_permutation": lambda attrs, inputs, out_type: [AM.invert_permutation(inputs[0])],
    "contrib_reverse_reshape": lambda attrs, inputs, out_type: [T.reshape(inputs[0], out_type.shape)],
    "strided_set": lambda attrs, inputs, out_type: [AM.strided_set(*inputs[:5])],
    "sparse_reshape": lambda attrs, inputs, out_type: AM.sparse_reshape(inputs[0], inputs[1], inputs[2]),
    "fixed_point_multiply": lambda attrs, inputs, out_type: [AM.fixed_point_multiply(inputs[0], attrs.multiplier,
                                                                                     attrs.shift)],
    "nn.fifo_buffer": lambda attrs, inputs, out_type: [AM.fifo_buffer(inputs[0], inputs[1], attrs.axis)],
    "vision.multibox_prior": lambda attrs, inputs, out_type: [AM.multibox_prior(
        inputs[0], attrs.sizes, attrs.ratios, attrs.steps, attrs.offsets, attrs.clip)],
    "adv_index": lambda attrs, inputs, out_type: [AR.adv_index(_flat(inputs)[0], _flat(inputs)[1:])],
    "matrix_set_diag": lambda attrs, inputs, out_type: [AR.matrix_set_diag(
        inputs[0], inputs[1], attrs.k1, attrs.k2, attrs.super_diag_right_align, attrs.sub_diag_right_align)],
    "stft": lambda attrs, inputs, out_type: [SG.stft(inputs[0], attrs.n_fft, attrs.hop_length, attrs.win_length,
                                                     inputs[1], attrs.normalized, attrs.onesided)],
    "dft": lambda attrs, inputs, out_type: SG.dft(inputs[0], inputs[1], attrs.inverse),
    "sliding_window": lambda attrs, inputs, out_type: [SG.sliding_window(inputs[0], attrs.axis, attrs.window_shape,
                                                                         attrs.strides)],
    "fast_exp": lambda attrs, inputs, out_type: [EW.exp(inputs[0])],
    "fast_tanh": lambda attrs, inputs, out_type: [EW.tanh(inputs[0])],
    "fast_erf": lambda attrs, inputs, out_type: [EW.erf(inputs[0])],
    "copy": lambda attrs, inputs, out_type: [EW.identity(inputs[0])],
    "annotation.checkpoint": lambda attrs, inputs, out_type: [EW.identity(inputs[0])],
    "annotation.bitpack_start": lambda attrs, inputs, out_type: [EW.identity(inputs[0])],
    "annotation.bitpack_end": lambda attrs, inputs, out_type: [EW.identity(inputs[0])],
    "reinterpret": lambda attrs, inputs, out_type: [EW.elemwise(
        inputs[0], lambda v: _tir_op.reinterpret(attrs.dtype, v), "T_reinterpret")],
    "zeros_like": lambda attrs, inputs, out_type: [EW.full_like(inputs[0], 0)],
    "ones_like": lambda attrs, inputs, out_type: [EW.full_like(inputs[0], 1)],
    "full_like": lambda attrs, inputs, out_type: [EW.full_like(inputs[0], inputs[1]())],
    "cast_like": lambda attrs, inputs, out_type: [EW.cast(inputs[0], inputs[1].dtype)],
    "reshape_like": lambda attrs, inputs, out_type: [T.reshape(inputs[0], reshape_like_shape(
        get_const_tuple(inputs[0].shape), get_const_tuple(inputs[1].shape), attrs))],  # sizes known at run time too
    "broadcast_to_like": lambda attrs, inputs, out_type: [B.broadcast_to(inputs[0], inputs[1].shape)],
    "collapse_sum_like": _collapse,
    "collapse_sum_to": _collapse,
    "slice_like": _slice_like,
    "variance": _variance,
    "stack": lambda attrs, inputs, out_type: [AR.stack(_flat(inputs), attrs.axis)],
    "arange": _arange,
    "meshgrid": lambda attrs, inputs, out_type: AR.meshgrid(_flat(inputs), attrs.indexing),
    "trilu": lambda attrs, inputs, out_type: [AR.trilu(inputs[0], inputs[1](), attrs.upper)],
    "unravel_index": lambda attrs, inputs, out_type: [AR.unravel_index(inputs[0], inputs[1])],
    "sequence_mask": lambda attrs, inputs, out_type: [AR.sequence_mask(inputs[0], inputs[1], attrs.mask_value,
                                                                       attrs.axis)],
    "reverse_sequence": lambda attrs, inputs, out_type: [AR.reverse_sequence(inputs[0], inputs[1], attrs.seq_axis,
                                                                             attrs.batch_axis)],
    "ndarray_size": lambda attrs, inputs, out_type: [AR.ndarray_size(inputs[0], attrs.dtype)],
    "searchsorted": lambda attrs, inputs, out_type: [AR.searchsorted(inputs[0], inputs[1], attrs.right,
                                                                     attrs.dtype)],
    "sparse_to_dense": lambda attrs, inputs, out_type: [AR.sparse_to_dense(inputs[0], inputs[1], inputs[2](),
                                                                           attrs.output_shape)],
    "einsum": lambda attrs, inputs, out_type: [einsum(attrs.equation, *_flat(inputs))],
}
"""Relay operator name -> ``FTVMCompute`` of the operators this module covers."""
