"""Neural-network operators (``relay.nn``): convolution, pooling, dense/matmul, normalization, softmax, padding.

Convolution and pooling accept any layout whose primal axes are those of NCHW (``NCHW``, ``NHWC``, ``NCHW16c``...):
the relation converts shapes to the primal axes, computes there, and converts back.
"""

from ...error import TypeInferenceError
from ...ir.op import register_op_attr
from ...ir.type import TensorType, TupleType
from ...tir.layout import layout as parse_layout
from ...topi.nn.conv2d import conv_out_size
from ...topi.nn.pooling import pool_out_size
from ..expr import TupleWrapper, const
from . import attrs as A
from .nn_conv import conv_weight_types
from .op import OpPattern, make_call, register_relay_op
from .type_relations import (
    ALL,
    FLOAT,
    NUMERIC,
    broadcast_shapes,
    channel_vector_types,
    check_dtype,
    dims_match,
    identity_rel,
    nonpositive,
    normalize_axis,
    same_dtype,
    shapes_match,
    tensor_arg,
)


def _primal(ttype, layout_name, what):
    try:
        return parse_layout(layout_name).shape_to_primal(ttype.shape)
    except Exception as exc:  # KilnError from the layout helper, reported as a typing error
        raise TypeInferenceError(f"{what} {ttype} does not fit layout {layout_name}: {exc}") from exc


def _from_primal(sizes, layout_name, dtype):
    return TensorType(parse_layout(layout_name).shape_from_primal(sizes), dtype)


def _conv2d_rel(types, attrs):
    data, weight = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "weight")
    d = _primal(data, attrs.data_layout, "data")
    w = _primal(weight, attrs.kernel_layout, "weight")
    if set(d) != set("NCHW") or set(w) != set("OIHW"):
        raise TypeInferenceError(
            f"conv2d: data layout {attrs.data_layout} must have axes NCHW and kernel layout {attrs.kernel_layout} OIHW"
        )
    if not dims_match(d["C"], w["I"] * attrs.groups):
        raise TypeInferenceError(
            f"conv2d: data has {d['C']} input channels, weight {weight} expects {w['I']} x groups={attrs.groups} = "
            f"{w['I'] * attrs.groups}"
        )
    if w["O"] % attrs.groups:
        raise TypeInferenceError(f"conv2d: {w['O']} output channels are not divisible by groups={attrs.groups}")
    if attrs.channels is not None and attrs.channels != w["O"]:
        raise TypeInferenceError(f"conv2d: channels={attrs.channels} but weight {weight} has {w['O']} output channels")
    if attrs.kernel_size is not None and tuple(attrs.kernel_size) != (w["H"], w["W"]):
        raise TypeInferenceError(
            f"conv2d: kernel_size={list(attrs.kernel_size)} but weight {weight} has a {w['H']}x{w['W']} kernel"
        )
    if attrs.out_dtype:
        check_dtype(attrs.out_dtype, NUMERIC, "out_dtype", "conv2d")
    else:
        same_dtype([data, weight], "conv2d data and weight")
    top, left, bottom, right = attrs.padding
    oh = conv_out_size(d["H"], w["H"], attrs.strides[0], attrs.dilation[0], top, bottom)
    ow = conv_out_size(d["W"], w["W"], attrs.strides[1], attrs.dilation[1], left, right)
    if nonpositive(oh, ow):
        raise TypeInferenceError(f"conv2d: the kernel of weight {weight} is larger than the padded input {data}")
    out = {"N": d["N"], "C": w["O"], "H": oh, "W": ow}
    return _from_primal(out, attrs.out_layout or attrs.data_layout, attrs.out_dtype or data.dtype)


register_relay_op("nn.conv2d", 2, _conv2d_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.Conv2DAttrs, dtypes=NUMERIC)
register_op_attr("nn.conv2d", "FInferArgTypes", conv_weight_types("nn.conv2d", "HW", False))


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, channels=None,
           kernel_size=None, data_layout="NCHW", kernel_layout="OIHW", out_layout="", out_dtype=""):
    """2-D convolution (TVM's signature); ``padding`` is an int, ``(h, w)`` or ``(top, left, bottom, right)``."""
    return make_call("nn.conv2d", [data, weight], A.Conv2DAttrs(
        strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout, out_layout, out_dtype))


def per_channel_rel(what, vector):
    """The relation of ``op(data, vector)`` with ``vector`` holding one value per index of ``data`` along
    ``attrs.axis`` (bias_add's bias, prelu's alpha): the result has ``data``'s type."""
    def relation(types, attrs):
        data, values = tensor_arg(types, 0, "data"), tensor_arg(types, 1, vector)
        if data.ndim == 0:
            raise TypeInferenceError(f"{what}: data {data} is a scalar; it needs an axis to add the {vector} along")
        axis = normalize_axis(attrs.axis, data.ndim, f"{what} axis")
        if not shapes_match(values.shape, (data.shape[axis],)):
            raise TypeInferenceError(f"{what}: {vector} must be Tensor[({data.shape[axis]},)] for axis {axis} of "
                                     f"{data}, got {values}")
        same_dtype([data, values], f"{what} data and {vector}")
        return data

    return relation


register_relay_op("nn.bias_add", 2, per_channel_rel("bias_add", "bias"), OpPattern.BROADCAST, A.BiasAddAttrs,
                  dtypes=NUMERIC)
register_op_attr("nn.bias_add", "FInferArgTypes", channel_vector_types(1))


def bias_add(data, bias, axis=1):
    """Add the 1-D ``bias`` along ``axis`` of ``data``."""
    return make_call("nn.bias_add", [data, bias], A.BiasAddAttrs(int(axis)))


register_relay_op("nn.relu", 1, identity_rel, OpPattern.ELEMWISE, dtypes=NUMERIC)
register_relay_op("nn.leaky_relu", 1, identity_rel, OpPattern.ELEMWISE, A.LeakyReluAttrs, dtypes=FLOAT)


def relu(data):
    """``max(data, 0)``."""
    return make_call("nn.relu", [data])


def leaky_relu(data, alpha=0.01):
    """``data`` where positive, ``alpha * data`` elsewhere."""
    return make_call("nn.leaky_relu", [data], A.LeakyReluAttrs(alpha))


def _pool2d_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    d = _primal(data, attrs.layout, "data")
    if "H" not in d or "W" not in d:
        raise TypeInferenceError(f"pool2d: layout {attrs.layout} has no H and W axes")
    top, left, bottom, right = attrs.padding
    out = dict(d)
    out["H"] = pool_out_size(d["H"], attrs.pool_size[0], attrs.strides[0], attrs.dilation[0], top, bottom,
                                attrs.ceil_mode)
    out["W"] = pool_out_size(d["W"], attrs.pool_size[1], attrs.strides[1], attrs.dilation[1], left, right,
                                attrs.ceil_mode)
    if nonpositive(out["H"], out["W"]):
        raise TypeInferenceError(f"pool2d: pool_size {list(attrs.pool_size)} is larger than the padded input {data}")
    return _from_primal(out, attrs.out_layout or attrs.layout, data.dtype)


register_relay_op("nn.max_pool2d", 1, _pool2d_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.MaxPool2DAttrs, dtypes=NUMERIC)
register_relay_op("nn.avg_pool2d", 1, _pool2d_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.AvgPool2DAttrs, dtypes=NUMERIC)


def max_pool2d(data, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0), layout="NCHW",
               out_layout="", ceil_mode=False):
    """2-D max pooling."""
    return make_call("nn.max_pool2d", [data], A.MaxPool2DAttrs(
        pool_size, strides, dilation, padding, layout, out_layout, ceil_mode))


def avg_pool2d(data, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0), layout="NCHW",
               out_layout="", ceil_mode=False, count_include_pad=False):
    """2-D average pooling; padded cells count in the divisor only when ``count_include_pad``."""
    return make_call("nn.avg_pool2d", [data], A.AvgPool2DAttrs(
        pool_size, strides, dilation, padding, layout, out_layout, ceil_mode, count_include_pad))


def _global_pool2d_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    d = _primal(data, attrs.layout, "data")
    if "H" not in d or "W" not in d:
        raise TypeInferenceError(f"global_avg_pool2d: layout {attrs.layout} has no H and W axes")
    return _from_primal({**d, "H": 1, "W": 1}, attrs.out_layout or attrs.layout, data.dtype)


register_relay_op("nn.global_avg_pool2d", 1, _global_pool2d_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.GlobalPool2DAttrs,
                  dtypes=NUMERIC)
register_relay_op("nn.global_max_pool2d", 1, _global_pool2d_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.GlobalPool2DAttrs,
                  dtypes=NUMERIC)


def global_avg_pool2d(data, layout="NCHW", out_layout=""):
    """Average over the whole H x W plane."""
    return make_call("nn.global_avg_pool2d", [data], A.GlobalPool2DAttrs(layout, out_layout))


def global_max_pool2d(data, layout="NCHW", out_layout=""):
    """Maximum over the whole H x W plane."""
    return make_call("nn.global_max_pool2d", [data], A.GlobalPool2DAttrs(layout, out_layout))


def _dense_rel(types, attrs):
    data, weight = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "weight")
    if weight.ndim != 2 or data.ndim < 1 or not dims_match(data.shape[-1], weight.shape[1]):
        raise TypeInferenceError(f"dense: data {data} and weight {weight} must be (..., K) and (units, K)")
    if attrs.units is not None and not dims_match(attrs.units, weight.shape[0]):
        raise TypeInferenceError(f"dense: units={attrs.units} but weight {weight} has {weight.shape[0]} rows")
    if attrs.out_dtype:
        check_dtype(attrs.out_dtype, NUMERIC, "out_dtype", "dense")
    else:
        same_dtype([data, weight], "dense data and weight")
    return TensorType(data.shape[:-1] + (weight.shape[0],), attrs.out_dtype or data.dtype)


register_relay_op("nn.dense", 2, _dense_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.DenseAttrs, dtypes=NUMERIC)


def _matmul_weight_types(types, attrs):
    """An untyped weight of ``nn.dense`` / ``nn.matmul`` is ``(units, K)`` (``(K, units)`` for a matmul without
    ``transpose_b``), as TVM's relations infer it."""
    data = tensor_arg(types, 0, "data")
    if types[1] is not None:
        return types
    if attrs.units is None:
        raise TypeInferenceError("an untyped weight needs units= to be inferred")
    k = data.shape[-2] if getattr(attrs, "transpose_a", False) else data.shape[-1]
    shape = (attrs.units, k) if getattr(attrs, "transpose_b", True) else (k, attrs.units)
    return [data, TensorType(shape, data.dtype)]


register_op_attr("nn.dense", "FInferArgTypes", _matmul_weight_types)


def dense(data, weight, units=None, out_dtype=""):
    """``data @ weight.T`` with ``data`` (..., K) and ``weight`` (units, K)."""
    return make_call("nn.dense", [data, weight], A.DenseAttrs(units, out_dtype))


def _dense_pack_rel(types, attrs):
    data, weight = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "weight")
    block = weight.shape[2] if weight.ndim == 3 else None
    if weight.ndim != 3 or data.ndim < 1 or not dims_match(data.shape[-1], weight.shape[1]):
        raise TypeInferenceError(f"contrib_dense_pack: data {data} and weight {weight} must be (..., K) and "
                                 "(units / block, K, block)")
    if attrs.weight_layout != f"NC{block}n":
        raise TypeInferenceError(f"contrib_dense_pack: weight_layout {attrs.weight_layout!r} does not describe the "
                                 f"weight {weight} (expected 'NC{block}n')")
    packed = weight.shape[0] * block
    units = packed if attrs.units is None else attrs.units
    if not packed - block < units <= packed:
        raise TypeInferenceError(f"contrib_dense_pack: units={attrs.units} but weight {weight} holds "
                                 f"{packed - block + 1} to {packed} columns")
    if attrs.out_dtype:
        check_dtype(attrs.out_dtype, NUMERIC, "out_dtype", "contrib_dense_pack")
    else:
        same_dtype([data, weight], "contrib_dense_pack data and weight")
    return TensorType(data.shape[:-1] + (units,), attrs.out_dtype or data.dtype)


register_relay_op("nn.contrib_dense_pack", 2, _dense_pack_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.DensePackAttrs,
                  dtypes=NUMERIC)


def contrib_dense_pack(data, weight, weight_layout="NC", units=None, out_dtype=""):
    """``data @ unpack(weight).T`` with ``data`` (..., K) and the weight packed in column blocks,
    ``(ceil(units / b), K, b)`` with ``weight_layout="NC{b}n"`` (what AlterOpLayout makes of ``nn.dense`` on CPUs).
    Unlike TVM, ``units`` may be less than the packed columns: the output leaves out the last block's padding."""
    return make_call("nn.contrib_dense_pack", [data, weight], A.DensePackAttrs(units, out_dtype, weight_layout))


def _matmul_rel(types, attrs):
    a, b = tensor_arg(types, 0, "tensor_a"), tensor_arg(types, 1, "tensor_b")
    if a.ndim < 1 or b.ndim != 2:
        raise TypeInferenceError(f"matmul: tensor_a {a} must have rank >= 1 and tensor_b {b} rank 2")
    k_a = a.shape[-2] if attrs.transpose_a else a.shape[-1]
    k_b, n = (b.shape[1], b.shape[0]) if attrs.transpose_b else b.shape
    if not dims_match(k_a, k_b):
        raise TypeInferenceError(f"matmul: reduction sizes differ, {a} gives {k_a} and {b} gives {k_b}")
    if attrs.out_dtype:
        check_dtype(attrs.out_dtype, NUMERIC, "out_dtype", "matmul")
    else:
        same_dtype([a, b], "matmul operands")
    rows = a.shape[:-2] + (a.shape[-1],) if attrs.transpose_a else a.shape[:-1]
    return TensorType(rows + (n,), attrs.out_dtype or a.dtype)


register_relay_op("nn.matmul", 2, _matmul_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.MatmulAttrs, dtypes=NUMERIC)
register_op_attr("nn.matmul", "FInferArgTypes", _matmul_weight_types)


def matmul(tensor_a, tensor_b, units=None, out_dtype="", transpose_a=False, transpose_b=False):
    """``tensor_a @ tensor_b`` with optional transposes (2-D ``tensor_b``)."""
    return make_call("nn.matmul", [tensor_a, tensor_b], A.MatmulAttrs(units, out_dtype, transpose_a, transpose_b))


def _batch_matmul_rel(types, attrs):
    x, y = tensor_arg(types, 0, "x"), tensor_arg(types, 1, "y")
    if x.ndim != 3 or y.ndim != 3:
        raise TypeInferenceError(f"batch_matmul: operands must have rank 3, got {x} and {y}")
    bx, m, kx = (x.shape[0], x.shape[2], x.shape[1]) if attrs.transpose_a else x.shape
    by, n, ky = y.shape if attrs.transpose_b else (y.shape[0], y.shape[2], y.shape[1])
    if not dims_match(kx, ky):
        raise TypeInferenceError(f"batch_matmul: reduction sizes differ, {x} gives {kx} and {y} gives {ky}")
    try:
        (batch,) = broadcast_shapes((bx,), (by,))
    except TypeInferenceError:
        raise TypeInferenceError(f"batch_matmul: batch sizes {bx} and {by} cannot be broadcast") from None
    if attrs.out_dtype:
        check_dtype(attrs.out_dtype, NUMERIC, "out_dtype", "batch_matmul")
    else:
        same_dtype([x, y], "batch_matmul operands")
    return TensorType((batch, m, n), attrs.out_dtype or x.dtype)


register_relay_op("nn.batch_matmul", 2, _batch_matmul_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.BatchMatmulAttrs,
                  dtypes=NUMERIC)


def batch_matmul(x, y, out_dtype="", transpose_a=False, transpose_b=True):
    """Batched ``x @ y`` (``y`` transposed by default, as in TVM): (B, M, K) x (B, N, K) -> (B, M, N)."""
    return make_call("nn.batch_matmul", [x, y], A.BatchMatmulAttrs(out_dtype, transpose_a, transpose_b))


def _channel_params(types, data, axis, names, what):
    for i, name in enumerate(names, start=1):
        t = tensor_arg(types, i, name)
        if not shapes_match(t.shape, (data.shape[axis],)):
            raise TypeInferenceError(f"{what}: {name} must be Tensor[({data.shape[axis]},)] for axis {axis} of "
                                     f"{data}, got {t}")


def _batch_norm_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    axis = normalize_axis(attrs.axis, data.ndim, "batch_norm axis")
    _channel_params(types, data, axis, ["gamma", "beta", "moving_mean", "moving_var"], "batch_norm")
    vec = TensorType((data.shape[axis],), data.dtype)
    return TupleType([data, vec, vec])


register_relay_op("nn.batch_norm", 5, _batch_norm_rel, OpPattern.OPAQUE, A.BatchNormAttrs, dtypes=FLOAT)
register_op_attr("nn.batch_norm", "FInferArgTypes", channel_vector_types(1, 2, 3, 4))


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, center=True, scale=True):
    """Inference batch normalization; returns three outputs (normalized data, mean, var): use ``[0]``."""
    call = make_call("nn.batch_norm", [data, gamma, beta, moving_mean, moving_var],
                     A.BatchNormAttrs(axis, epsilon, center, scale))
    return TupleWrapper(call, 3)


def _layer_norm_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    axis = normalize_axis(attrs.axis, data.ndim, "layer_norm axis")
    _channel_params(types, data, axis, ["gamma", "beta"], "layer_norm")
    return data


register_relay_op("nn.layer_norm", 3, _layer_norm_rel, OpPattern.OPAQUE, A.LayerNormAttrs, dtypes=FLOAT)
register_op_attr("nn.layer_norm", "FInferArgTypes", channel_vector_types(1, 2))


def layer_norm(data, gamma, beta, axis=-1, epsilon=1e-5, center=True, scale=True):
    """Normalize over ``axis`` to zero mean and unit variance, then scale by ``gamma`` and shift by ``beta``."""
    return make_call("nn.layer_norm", [data, gamma, beta], A.LayerNormAttrs(axis, epsilon, center, scale))


def _softmax_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    normalize_axis(attrs.axis, data.ndim, "softmax axis")
    return data


register_relay_op("nn.softmax", 1, _softmax_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.SoftmaxAttrs, dtypes=FLOAT)
register_relay_op("nn.log_softmax", 1, _softmax_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.SoftmaxAttrs, dtypes=FLOAT)


def softmax(data, axis=-1):
    """Softmax along ``axis``."""
    return make_call("nn.softmax", [data], A.SoftmaxAttrs(int(axis)))


def log_softmax(data, axis=-1):
    """Log of the softmax along ``axis``."""
    return make_call("nn.log_softmax", [data], A.SoftmaxAttrs(int(axis)))


def _batch_flatten_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    if data.ndim < 1:
        raise TypeInferenceError(f"batch_flatten needs rank >= 1, got {data}")
    rest = 1
    for d in data.shape[1:]:
        rest *= d
    return TensorType((data.shape[0], rest), data.dtype)


register_relay_op("nn.batch_flatten", 1, _batch_flatten_rel, OpPattern.INJECTIVE, dtypes=ALL)


def batch_flatten(data):
    """Flatten every axis but the first."""
    return make_call("nn.batch_flatten", [data])


def _dropout_rel(types, attrs):
    data = tensor_arg(types, 0, "data")
    return TupleType([data, data])


register_relay_op("nn.dropout", 1, _dropout_rel, OpPattern.OPAQUE, A.DropoutAttrs, dtypes=FLOAT)
# random at training time, as in TVM: FoldConstant and CSE leave it alone (SimplifyInference removes it for inference)
register_op_attr("nn.dropout", "TOpIsStateful", True)


def dropout_raw(data, rate=0.5):
    """Dropout with both outputs (result, mask) as a tuple-valued call."""
    return make_call("nn.dropout", [data], A.DropoutAttrs(rate))


def dropout(data, rate=0.5):
    """Dropout; at inference the identity (``SimplifyInference`` removes it)."""
    return TupleWrapper(dropout_raw(data, rate), 2)[0]


def _pad_rel(types, attrs):
    data, pad_value = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "pad_value")
    if len(attrs.pad_width) != data.ndim:
        raise TypeInferenceError(f"pad: pad_width has {len(attrs.pad_width)} entries for {data}")
    if pad_value.shape:
        raise TypeInferenceError(f"pad: pad_value must be a scalar, got {pad_value}")
    # a negative width crops that side (TVM's semantics), as long as something of the axis is left
    shape = tuple(d + b + a for d, (b, a) in zip(data.shape, attrs.pad_width, strict=True))
    if any(isinstance(d, int) and d < 0 for d in shape):
        raise TypeInferenceError(f"pad: pad_width {attrs.pad_width} crops more than {data} holds")
    return TensorType(shape, data.dtype)


register_relay_op("nn.pad", 2, _pad_rel, OpPattern.INJECTIVE, A.PadAttrs, dtypes=ALL)


def pad(data, pad_width, pad_value=0, pad_mode="constant"):
    """Pad each axis by ``(before, after)`` (a negative width crops that side); ``pad_value`` (a scalar or scalar
    expression) fills constant padding.
    ``pad_width`` a non-constant Relay expression (an ``(ndim, 2)`` integer tensor) makes ``dyn.nn.pad``."""
    from ...ir.expr import RelayExpr
    from .dispatch import dyn_ops, is_dynamic

    if not isinstance(pad_value, RelayExpr):
        pad_value = const(float(pad_value), "float32")
    if is_dynamic(pad_width):
        return dyn_ops().nn.pad(data, pad_width, pad_value, pad_mode)
    if isinstance(pad_width, RelayExpr):
        pad_width = pad_width.data.numpy().tolist()
    return make_call("nn.pad", [data, pad_value], A.PadAttrs(tuple(tuple(p) for p in pad_width), pad_mode))


from .array_more import fifo_buffer, sparse_add, sparse_dense  # noqa: E402, F401  (other families of relay.nn)
from .nn_bitserial import bitpack, bitserial_conv2d, bitserial_dense  # noqa: E402, F401
from .nn_conv import (  # noqa: E402, F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool3d,
    contrib_conv2d_nchwc,
    contrib_depthwise_conv2d_nchwc,
    conv1d,
    conv1d_transpose,
    conv2d_transpose,
    conv3d,
    conv3d_transpose,
    deformable_conv2d,
    global_avg_pool1d,
    global_avg_pool3d,
    global_max_pool1d,
    global_max_pool3d,
    max_pool1d,
    max_pool3d,
)
from .nn_extra import (  # noqa: E402, F401
    avg_pool2d_grad,
    batch_to_space_nd,
    conv2d_backward_weight,
    cross_entropy,
    cross_entropy_with_logits,
    depth_to_space,
    dilate,
    fast_softmax,
    group_norm,
    instance_norm,
    l2_normalize,
    lrn,
    max_pool2d_grad,
    mirror_pad,
    nll_loss,
    prelu,
    space_to_batch_nd,
    space_to_depth,
    upsampling,
    upsampling3d,
)
from .nn_winograd import *  # noqa: E402, F401, F403
from .sparse import sparse_conv2d, sparse_transpose  # noqa: E402, F401
from .vision import correlation  # noqa: E402, F401
