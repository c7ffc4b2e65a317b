"""Generic computes of the ``dyn.*`` operators (:mod:`kiln.relay.op.dyn`), merged into :data:`.generic.COMPUTES`.
Their results' ``relay.Any`` dimensions become size variables the kernel binds from its output buffer, which the VM
allocates with the shape the operator's shape function computed. ``dyn.expand_dims`` and ``dyn.squeeze`` only add or
remove size-1 axes, so their kernel is the row-major copy of ``dyn.reshape``."""

from ....error import OpNotImplemented
from ....ir.type import TupleType, is_any
from ....te import size_var
from ....tir.layout import layout as parse_layout
from ....topi import argwhere as AW
from ....topi import array as AR
from ....topi import dynamic as D
from ....topi import elemwise as EW
from ....topi import image
from ....topi import indexing as G
from ....topi import sort as SO
from ....topi import sparse as SP
from ....topi import transform as T
from ....topi.image import dyn_resize, resize_nd

__all__ = ["DYN_COMPUTES", "te_shape"]


def te_shape(ttype, name="out") -> tuple:
    """The TE shape of a result of type ``ttype``: static dimensions as they are, dynamic ones as size variables."""
    return tuple(size_var(f"{name}_dim{i}") if is_any(d) else d for i, d in enumerate(ttype.shape))


def _reshaped(attrs, inputs, out_type):
    return [T.dyn_reshape(inputs[0], te_shape(out_type))]


def _one_hot(attrs, inputs, out_type):
    ndim = len(inputs[0].shape)
    axis = attrs.axis if attrs.axis >= 0 else attrs.axis + ndim + 1
    shape = te_shape(out_type)
    return [G.one_hot(inputs[0], inputs[1](), inputs[2](), shape[axis], axis, attrs.dtype)]


def _topk(attrs, inputs, out_type):
    first = out_type.fields[0] if isinstance(out_type, TupleType) else out_type
    axis = attrs.axis % len(inputs[0].shape)
    k = te_shape(first)[axis]  # one size variable for both outputs: they have one shape
    out = SO.topk(inputs[0], k, axis, attrs.ret_type, attrs.is_ascend, attrs.dtype)
    return list(out) if isinstance(out, list | tuple) else [out]


def _resize2d(attrs, inputs, out_type):
    lay = parse_layout(attrs.layout)
    shape = te_shape(out_type)
    size = (shape[lay.index_of("H")], shape[lay.index_of("W")])
    return [image.resize2d(inputs[0], None, size, attrs.layout, attrs.method, attrs.coordinate_transformation_mode,
                           attrs.rounding_method, attrs.cubic_alpha, attrs.cubic_exclude, attrs.extrapolation_value,
                           attrs.out_dtype or out_type.dtype)]


def _resize_nd(attrs, inputs, out_type):
    return [dyn_resize.resize_nd(inputs[0], inputs[2], inputs[3], te_shape(out_type), attrs.axes, attrs.method,
                                 attrs.coordinate_transformation_mode, attrs.rounding_method, attrs.cubic_alpha,
                                 attrs.cubic_exclude, attrs.antialias, attrs.extrapolation_value)]


def _upsampling(attrs, inputs, out_type):
    return [resize_nd.upsampling(inputs[0], None, None, attrs.layout, attrs.method, attrs.align_corners,
                                 te_shape(out_type))]


def _upsampling3d(attrs, inputs, out_type):
    return [resize_nd.upsampling3d(inputs[0], None, None, None, attrs.layout, attrs.method,
                                   attrs.coordinate_transformation_mode, te_shape(out_type))]


def _prebuilt(attrs, inputs, out_type):
    raise OpNotImplemented("this operator has a loop-nest kernel of its own (FTVMPrimFunc), which the TE compiler "
                           "lowers directly; it has no TE compute")


DYN_COMPUTES = {
    "dyn.reshape": _reshaped,
    "dyn.expand_dims": _reshaped,
    "dyn.squeeze": _reshaped,
    "dyn.broadcast_to": lambda attrs, inputs, out_type: [D.broadcast_to(inputs[0], te_shape(out_type))],
    "dyn.tile": lambda attrs, inputs, out_type: [D.tile(inputs[0], te_shape(out_type))],
    "dyn.arange": lambda attrs, inputs, out_type: [AR.arange_dynamic(inputs[0], inputs[2], te_shape(out_type)[0],
                                                                     attrs.dtype)],
    "dyn.sparse_to_dense": lambda attrs, inputs, out_type: [AR.sparse_to_dense(
        inputs[0], inputs[1], inputs[2]() if not inputs[2].shape else inputs[2](0), te_shape(out_type))],
    "dyn.strided_slice": lambda attrs, inputs, out_type: [D.strided_slice(inputs[0], inputs[1], inputs[2], inputs[3],
                                                                          te_shape(out_type), attrs.slice_mode,
                                                                          attrs.axes)],
    "dyn.one_hot": _one_hot,
    "dyn.zeros": lambda attrs, inputs, out_type: [EW.zeros(te_shape(out_type), out_type.dtype)],
    "dyn.ones": lambda attrs, inputs, out_type: [EW.ones(te_shape(out_type), out_type.dtype)],
    "dyn.full": lambda attrs, inputs, out_type: [EW.full(te_shape(out_type), out_type.dtype, inputs[0]())],
    "dyn.topk": _topk,
    "dyn.nn.pad": lambda attrs, inputs, out_type: [D.pad(inputs[0], inputs[1], inputs[2](), te_shape(out_type),
                                                         attrs.pad_mode)],
    "dyn.image.resize2d": _resize2d,
    "dyn.nn.upsampling": _upsampling,
    "dyn.nn.upsampling3d": _upsampling3d,
    "dyn.image.resize_nd": _resize_nd,
    "vision.all_class_non_max_suppression": _prebuilt,
    "vision.non_max_suppression": _prebuilt,
    "vision.proposal": _prebuilt,
    "argwhere": lambda attrs, inputs, out_type: [AW.argwhere(inputs[0], te_shape(out_type)[0], attrs.dtype)],
    "sparse_fill_empty_rows": lambda attrs, inputs, out_type: SP.sparse_fill_empty_rows(
        inputs[0], inputs[1], inputs[3], te_shape(out_type.fields[0], "entries")[0],
        te_shape(out_type.fields[2], "rows")[0]),
}
"""Relay operator name -> ``FTVMCompute``."""
