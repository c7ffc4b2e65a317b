"""Generic strategies (TVM's ``relay/op/strategy/generic.py``): the ``FTVMCompute`` of every Relay operator, an
adapter from a call's ``(attrs, inputs, out_type)`` to a topi compute, and the default strategy that pairs it with
the schedule of the group's anchor tag.

An adapter reads the call's attribute record (the classes of :mod:`kiln.relay.op.attrs`) and passes topi plain
values; ``out_type`` gives what the type relation already resolved (``reshape``'s target shape). Each adapter
returns a list of tensors: one per output, so ``split``, ``nn.batch_norm`` and ``nn.dropout`` return several. A 0-d
tensor argument holding a scalar (``full``'s fill value, ``nn.pad``'s pad value) is read as ``t()``. The element-wise
and broadcasting operators need no adapter of their own: topi's tables (``topi.elemwise.UNARY``,
``topi.broadcast.BINARY``) list their computes by operator name.
"""

import math

from ....error import OpNotImplemented
from ....ir.op import has_op
from ....ir.type import is_any
from ....topi import broadcast as B
from ....topi import elemwise as EW
from ....topi import image, nn, x86
from ....topi import indexing as G
from ....topi import reduction as R
from ....topi import scan as SC
from ....topi import scatter as SCT
from ....topi import sort as SO
from ....topi import transform as T
from ....topi.utils import get_const_tuple, prod
from .base import OpStrategy
from .generic_array import ARRAY_COMPUTES
from .generic_dyn import DYN_COMPUTES
from .generic_nn import NN_COMPUTES
from .generic_random import RANDOM_COMPUTES

__all__ = ["COMPUTES", "tensors_of", "default_strategy", "fschedule_by_tag"]


def tensors_of(inputs) -> list:
    """The tensors of a call's inputs, flattening a nested list (a tuple argument given as a list)."""
    out = []
    for x in inputs:
        out.extend(tensors_of(x) if isinstance(x, list | tuple) else [x])
    return out


def reshaped_shape(data, out_type) -> tuple:
    """The TE shape of ``data`` reshaped to ``out_type``: its static dimensions, and a dynamic one as what the
    elements of ``data`` leave for it (a reshape has at most one dimension the others do not determine)."""
    dynamic = [i for i, d in enumerate(out_type.shape) if is_any(d)]
    if not dynamic:
        return out_type.shape
    if len(dynamic) > 1:
        raise OpNotImplemented(f"reshape of {data.shape} to {out_type}: more than one dimension known only at run "
                               f"time; the reshape's newshape gives them (see symbolic_reshape)")
    static = math.prod(d for d in out_type.shape if not is_any(d))
    shape = list(out_type.shape)
    shape[dynamic[0]] = prod(data.shape) // static
    return tuple(shape)


def symbolic_reshape(data, newshape, allowzero=False) -> tuple:
    """The TE shape of ``data`` reshaped by ``newshape`` with TVM's special values (``0`` copies, ``-1`` infers,
    ``-2`` copies the rest, ``-3`` merges two, ``-4`` splits one), as expressions of ``data``'s size variables: what
    a reshape whose result has several dimensions known only at run time computes (the type relation checked the
    values; the kernel's size check compares the element counts at run time)."""
    in_shape = get_const_tuple(data.shape)
    out: list = []
    infer_at, src, i = None, 0, 0
    while i < len(newshape):
        v = int(newshape[i])
        if v > 0 or (v == 0 and allowzero):
            out.append(v)
            src += 1
        elif v == 0:
            out.append(in_shape[src])
            src += 1
        elif v == -1:
            infer_at = len(out)
            out.append(1)
            src += 1
        elif v == -2:
            out.extend(in_shape[src:])
            src = len(in_shape)
        elif v == -3:
            out.append(in_shape[src] * in_shape[src + 1])
            src += 2
        else:  # -4: split in_shape[src] into the next two values, one of which may be -1
            d0, d1 = int(newshape[i + 1]), int(newshape[i + 2])
            whole = in_shape[src]
            out.extend([whole // d1 if d0 == -1 else d0, whole // d0 if d1 == -1 else d1])
            src, i = src + 1, i + 2
        i += 1
    if infer_at is not None:
        out[infer_at] = prod(in_shape) // prod(d for j, d in enumerate(out) if j != infer_at)
    return tuple(out)


def _reshape(attrs, inputs, out_type):
    if sum(map(is_any, out_type.shape)) > 1:
        return [T.reshape(inputs[0], symbolic_reshape(inputs[0], attrs.newshape, attrs.allowzero))]
    return [T.reshape(inputs[0], reshaped_shape(inputs[0], out_type))]


def _unary(fn):
    return lambda attrs, inputs, out_type: [fn(inputs[0])]


def _binary(fn):
    return lambda attrs, inputs, out_type: [fn(inputs[0], inputs[1])]


def _out_dtype(attrs, out_type):
    return getattr(attrs, "out_dtype", "") or _first_type(out_type).dtype


def _first_type(out_type):
    return out_type if hasattr(out_type, "dtype") else out_type.fields[0]


def _reduce(fn):
    return lambda attrs, inputs, out_type: [fn(inputs[0], attrs.axis, attrs.keepdims, attrs.exclude)]


def _arg_reduce(fn):
    return lambda attrs, inputs, out_type: [fn(inputs[0], attrs.axis, attrs.keepdims, attrs.select_last_index,
                                               attrs.exclude)]


def _full(attrs, inputs, out_type):
    return [EW.full(attrs.shape, attrs.dtype or out_type.dtype, inputs[0]())]


def _concatenate(attrs, inputs, out_type):
    return [T.concatenate(tensors_of(inputs), attrs.axis)]


def _conv2d(attrs, inputs, out_type):
    return [nn.conv2d(inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.dilation, attrs.data_layout,
                      attrs.kernel_layout, _out_dtype(attrs, out_type), groups=attrs.groups,
                      out_layout=attrs.out_layout)]


def _pool(pool_type):
    def fcompute(attrs, inputs, out_type):
        return [nn.pool2d(inputs[0], attrs.pool_size, attrs.strides, attrs.dilation, attrs.padding, pool_type,
                          attrs.ceil_mode, attrs.layout, getattr(attrs, "count_include_pad", False),
                          attrs.out_layout)]

    return fcompute


def _global_pool(pool_type):
    return lambda attrs, inputs, out_type: [nn.global_pool(inputs[0], pool_type, attrs.layout, attrs.out_layout)]


def _dense(attrs, inputs, out_type):
    return [nn.dense(inputs[0], inputs[1], None, _out_dtype(attrs, out_type))]


def _dense_pack(attrs, inputs, out_type):
    return [nn.dense_pack(inputs[0], inputs[1], attrs.units, _out_dtype(attrs, out_type))]


def _matmul(attrs, inputs, out_type):
    return [nn.matmul(inputs[0], inputs[1], None, _out_dtype(attrs, out_type), attrs.transpose_a, attrs.transpose_b)]


def _batch_matmul(attrs, inputs, out_type):
    return [nn.batch_matmul(inputs[0], inputs[1], None, _out_dtype(attrs, out_type), attrs.transpose_a,
                            attrs.transpose_b)]


def _batch_norm(attrs, inputs, out_type):
    data, gamma, beta, mean, var = inputs[:5]
    return nn.batch_norm(data, gamma, beta, mean, var, attrs.axis, attrs.epsilon, attrs.center, attrs.scale)


def _layer_norm(attrs, inputs, out_type):
    data, gamma, beta = inputs[:3]
    return [nn.layer_norm(data, gamma, beta, attrs.axis, attrs.epsilon, attrs.center, attrs.scale)]


def _pad(attrs, inputs, out_type):
    before = [p[0] for p in attrs.pad_width]
    after = [p[1] for p in attrs.pad_width]
    return [nn.pad(inputs[0], before, after, inputs[1](), name="T_pad", pad_mode=attrs.pad_mode)]


def _resize2d(attrs, inputs, out_type):
    return [image.resize2d(inputs[0], attrs.roi, attrs.size, attrs.layout, attrs.method,
                           attrs.coordinate_transformation_mode, attrs.rounding_method, attrs.cubic_alpha,
                           attrs.cubic_exclude, attrs.extrapolation_value, _out_dtype(attrs, out_type))]


def _one_hot(attrs, inputs, out_type):
    return [G.one_hot(inputs[0], inputs[1](), inputs[2](), attrs.depth, attrs.axis, attrs.dtype)]


def _scan(fn):
    return lambda attrs, inputs, out_type: [fn(inputs[0], attrs.axis, attrs.dtype or None, attrs.exclusive)]


def _topk(attrs, inputs, out_type):
    out = SO.topk(inputs[0], attrs.k, attrs.axis, attrs.ret_type, attrs.is_ascend, attrs.dtype)
    return list(out) if isinstance(out, list | tuple) else [out]


COMPUTES = {
    **{name: _unary(fn) for name, fn in EW.UNARY.items() if has_op(name)},
    **{name: _binary(fn) for name, fn in B.BINARY.items() if has_op(name)},
    "clip": lambda attrs, inputs, out_type: [EW.clip(inputs[0], attrs.a_min, attrs.a_max)],
    "cast": lambda attrs, inputs, out_type: [EW.cast(inputs[0], attrs.dtype)],
    "where": lambda attrs, inputs, out_type: [B.where(inputs[0], inputs[1], inputs[2])],
    "zeros": lambda attrs, inputs, out_type: [EW.zeros(attrs.shape, attrs.dtype)],
    "ones": lambda attrs, inputs, out_type: [EW.ones(attrs.shape, attrs.dtype)],
    "full": _full,
    "reshape": _reshape,
    "transpose": lambda attrs, inputs, out_type: [T.transpose(inputs[0], attrs.axes)],
    "squeeze": lambda attrs, inputs, out_type: [T.squeeze(inputs[0], attrs.axis)],
    "expand_dims": lambda attrs, inputs, out_type: [T.expand_dims(inputs[0], attrs.axis, attrs.num_newaxis)],
    "concatenate": _concatenate,
    "split": lambda attrs, inputs, out_type: T.split(inputs[0], attrs.indices_or_sections, attrs.axis),
    "take": lambda attrs, inputs, out_type: [T.take(inputs[0], inputs[1], attrs.axis, attrs.batch_dims,
                                                    attrs.mode)],
    "strided_slice": lambda attrs, inputs, out_type: [T.strided_slice(inputs[0], attrs.begin, attrs.end,
                                                                      attrs.strides, attrs.axes, attrs.slice_mode)],
    "layout_transform": lambda attrs, inputs, out_type: [T.layout_transform(inputs[0], attrs.src_layout,
                                                                            attrs.dst_layout)],
    "shape_of": lambda attrs, inputs, out_type: [T.shape_of(inputs[0], attrs.dtype)],
    "sum": _reduce(R.sum),
    "mean": _reduce(R.mean),
    "max": _reduce(R.max),
    "min": _reduce(R.min),
    "prod": _reduce(R.prod_reduce),
    "all": _reduce(R.all),
    "any": _reduce(R.any),
    "argmax": _arg_reduce(R.argmax),
    "argmin": _arg_reduce(R.argmin),
    "nn.conv2d": _conv2d,
    "nn.bias_add": lambda attrs, inputs, out_type: [nn.bias_add(inputs[0], inputs[1], attrs.axis)],
    "nn.relu": _unary(nn.relu),
    "nn.leaky_relu": lambda attrs, inputs, out_type: [nn.leaky_relu(inputs[0], attrs.alpha)],
    "nn.max_pool2d": _pool("max"),
    "nn.avg_pool2d": _pool("avg"),
    "nn.global_avg_pool2d": _global_pool("avg"),
    "nn.global_max_pool2d": _global_pool("max"),
    "nn.dense": _dense,
    "nn.contrib_dense_pack": _dense_pack,
    "nn.matmul": _matmul,
    "nn.batch_matmul": _batch_matmul,
    "nn.batch_norm": _batch_norm,
    "nn.layer_norm": _layer_norm,
    "nn.softmax": lambda attrs, inputs, out_type: [nn.softmax(inputs[0], attrs.axis)],
    "nn.log_softmax": lambda attrs, inputs, out_type: [nn.log_softmax(inputs[0], attrs.axis)],
    "nn.batch_flatten": _unary(nn.batch_flatten),
    "nn.dropout": lambda attrs, inputs, out_type: nn.dropout(inputs[0], attrs.rate),
    "nn.pad": _pad,
    "nn.lrn": lambda attrs, inputs, out_type: [nn.lrn(inputs[0], attrs.size, attrs.axis, attrs.alpha, attrs.beta,
                                                      attrs.bias)],
    "image.resize2d": _resize2d,
    "broadcast_to": lambda attrs, inputs, out_type: [B.broadcast_to(inputs[0], attrs.shape)],
    "tile": lambda attrs, inputs, out_type: [T.tile(inputs[0], attrs.reps)],
    "repeat": lambda attrs, inputs, out_type: [T.repeat(inputs[0], attrs.repeats, attrs.axis)],
    "reverse": lambda attrs, inputs, out_type: [T.reverse(inputs[0], attrs.axis)],
    "gather": lambda attrs, inputs, out_type: [G.gather(inputs[0], attrs.axis, inputs[1])],
    "gather_nd": lambda attrs, inputs, out_type: [G.gather_nd(inputs[0], inputs[1], attrs.batch_dims)],
    "one_hot": _one_hot,
    "cumsum": _scan(SC.cumsum),
    "cumprod": _scan(SC.cumprod),
    "topk": _topk,
    "unique": lambda attrs, inputs, out_type: SO.unique(inputs[0], attrs.sorted, attrs.return_counts),
    "argsort": lambda attrs, inputs, out_type: [SO.argsort(inputs[0], axis=attrs.axis, is_ascend=attrs.is_ascend,
                                                           dtype=attrs.dtype)],
    "scatter_elements": lambda attrs, inputs, out_type: [SCT.scatter_elements(inputs[0], inputs[1], inputs[2],
                                                                              attrs.axis, attrs.reduction)],
    "scatter_nd": lambda attrs, inputs, out_type: [SCT.scatter_nd(inputs[0], inputs[1], inputs[2], attrs.mode)],
}
"""Relay operator name -> ``FTVMCompute``."""

COMPUTES.update(ARRAY_COMPUTES)
COMPUTES.update(NN_COMPUTES)
COMPUTES.update(DYN_COMPUTES)
COMPUTES.update(RANDOM_COMPUTES)


def fschedule_by_tag(attrs, outs, target):
    """The generic fallback schedule: the x86 schedule of the group's anchor tag (:func:`kiln.topi.x86.schedule_auto`),
    for operators whose strategy names no schedule of its own."""
    return x86.schedule_auto(outs, target)


def default_strategy(name):
    """The strategy of operator ``name`` with only its generic compute and the tag-dispatched schedule."""
    fcompute = COMPUTES[name]

    def fstrategy(attrs, inputs, out_type, target):
        return OpStrategy().add_implementation(fcompute, fschedule_by_tag, f"{name}.generic", 10)

    return fstrategy
