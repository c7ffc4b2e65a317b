"""Convolutions with a pre-transformed weight (``relay.nn.contrib_conv{2,3}d_winograd_*``,
``relay.nn.contrib_conv2d_gemm_*``): the weight transform is an operator of its own so FoldConstant can compute it
once, at compile time, and the convolution reads the transformed weight.

* ``nn.contrib_conv2d_winograd_weight_transform``: OIHW ``(CO, CI, K, K)`` -> ``(alpha, alpha, CO, CI)``,
  ``alpha = tile_size + K - 1`` (:mod:`kiln.topi.nn.conv_winograd`);
* ``nn.contrib_conv3d_winograd_weight_transform``: OIDHW -> ``(alpha, alpha, alpha, CO, CI)``, or
  ``(alpha, alpha, KD, CO, CI)`` when the depth (outside 3..7 taps) is not transformed;
* ``nn.contrib_conv{2,3}d_winograd_without_weight_transform``: the convolution of such a weight; ``kernel_size`` and
  ``channels`` say what it was (TVM's relation requires them; kiln reads them off a 2-D weight when they are
  missing). Strides, dilations and groups are 1, as in TVM's computes;
* ``nn.contrib_conv2d_gemm_weight_transform``: an HWIO kernel flattened to ``K x N`` and cut into tiles
  (:mod:`kiln.topi.nn.conv_gemm`), and ``nn.contrib_conv2d_gemm_without_weight_transform`` its convolution (data in
  any layout with the NHWC axes; TVM computes it on Arm CPUs only, kiln on any).

As in TVM, the relations of the convolutions do not derive the output from the weight's shape; kiln checks that the
weight is the one the attributes describe, since its computes read it so.
"""

from ...error import TypeInferenceError
from ...ir.type import Any, TensorType
from ...tir.layout import layout as parse_layout
from ...topi.nn.conv2d import conv_out_size
from ...topi.nn.conv_gemm import gemm_transformed_shape
from ...topi.nn.conv_winograd import depth_transformed
from . import attrs as AS
from . import attrs_nn as A
from .op import OpPattern, make_call, register_relay_op
from .type_relations import FLOAT, NUMERIC, check_dtype, nonpositive, tensor_arg

__all__ = ["contrib_conv2d_winograd_weight_transform", "contrib_conv3d_winograd_weight_transform",
           "contrib_conv2d_winograd_without_weight_transform", "contrib_conv3d_winograd_without_weight_transform",
           "contrib_conv2d_gemm_weight_transform", "contrib_conv2d_gemm_without_weight_transform"]

W2D, W3D = "nn.contrib_conv2d_winograd_weight_transform", "nn.contrib_conv3d_winograd_weight_transform"
C2D, C3D = "nn.contrib_conv2d_winograd_without_weight_transform", "nn.contrib_conv3d_winograd_without_weight_transform"
GW, GC = "nn.contrib_conv2d_gemm_weight_transform", "nn.contrib_conv2d_gemm_without_weight_transform"


def _static(shape, op, what):
    if not all(isinstance(d, int) for d in shape):
        raise TypeInferenceError(f"{op}: {what} must have a static shape, got {shape}")
    return shape


def _check_tile(op, tile_size, kernel):
    if not 1 < tile_size < 9:
        raise TypeInferenceError(f"{op}: tile_size={tile_size} is not supported (Winograd tiles are 2..8)")
    if not 2 < kernel < 8:
        raise TypeInferenceError(f"{op}: a {kernel}-tap kernel is not supported (Winograd kernels are 3..7)")


# ----------------------------------------------------------------------------------------- weight transforms
def _winograd_weight_rel(op, rank):
    def relation(types, attrs):
        weight = tensor_arg(types, 0, "weight")
        if len(weight.shape) != rank:
            raise TypeInferenceError(f"{op}: weight {weight} must be {rank}-D ({'OIHW' if rank == 4 else 'OIDHW'})")
        co, ci, *ksize = weight.shape  # the channels may be known only at run time, the kernel's taps may not
        _static(ksize, op, "weight's kernel")
        tile = attrs.tile_size
        transformed = (depth_transformed(ksize[0]), True, True) if rank == 5 else (True, True)
        sizes = {k for k, t in zip(ksize, transformed, strict=True) if t}
        if len(sizes) != 1:
            raise TypeInferenceError(f"{op}: weight {weight} must have an NxN kernel")
        _check_tile(op, tile, ksize[-1])
        alphas = tuple(tile + k - 1 for k, t in zip(ksize, transformed, strict=True) if t)
        direct = tuple(k for k, t in zip(ksize, transformed, strict=True) if not t)
        return TensorType(alphas + direct + (co, ci), weight.dtype)

    return relation


register_relay_op(W2D, 1, _winograd_weight_rel(W2D, 4), OpPattern.OUT_ELEMWISE_FUSABLE,
                  A.ConvWinogradWeightTransformAttrs, dtypes=FLOAT)
register_relay_op(W3D, 1, _winograd_weight_rel(W3D, 5), OpPattern.OUT_ELEMWISE_FUSABLE,
                  A.ConvWinogradWeightTransformAttrs, dtypes=FLOAT)


def _gemm_weight_rel(types, attrs):
    weight = tensor_arg(types, 0, "weights")
    if len(weight.shape) != 4:
        raise TypeInferenceError(f"{GW}: weights {weight} must be 4-D (HWIO)")
    kh, kw, ic, oc = weight.shape
    static = tuple(d if isinstance(d, int) else 1 for d in weight.shape)
    rows, cols, *tile = gemm_transformed_shape(static, attrs.tile_N, attrs.tile_K, weight.dtype)
    # a size known only at run time leaves the tile counts that depend on it unknown too
    rows = rows if isinstance(oc, int) else Any()
    cols = cols if all(isinstance(d, int) for d in (kh, kw, ic)) else Any()
    return TensorType((rows, cols, *tile), weight.dtype)


register_relay_op(GW, 1, _gemm_weight_rel, OpPattern.OUT_ELEMWISE_FUSABLE, A.ConvGemmWeightTransformAttrs,
                  dtypes=NUMERIC)


# --------------------------------------------------------------------------------------------- convolutions
def _primal(ttype, layout_name, axes, op, what):
    try:
        sizes = parse_layout(layout_name).shape_to_primal(ttype.shape)
    except Exception as exc:  # KilnError from the layout helper, reported as a typing error
        raise TypeInferenceError(f"{op}: {what} {ttype} does not fit layout {layout_name}: {exc}") from exc
    if set(sizes) != set(axes):
        raise TypeInferenceError(f"{op}: {what} layout {layout_name} must have the axes {axes}")
    return sizes


def _out_type(op, data, attrs, spatial, primal, channels, ksize):
    d = _primal(data, attrs.data_layout, primal, op, "data")
    n = len(spatial)
    out = {"N": d["N"], "C": channels}
    for j, a in enumerate(spatial):
        out[a] = conv_out_size(d[a], ksize[j], attrs.strides[j], attrs.dilation[j], attrs.padding[j],
                               attrs.padding[n + j])
        if nonpositive(out[a]):
            raise TypeInferenceError(f"{op}: kernel {list(ksize)} and padding {list(attrs.padding)} leave no output "
                                     f"of {data}")
    out_layout = attrs.out_layout or attrs.data_layout
    try:
        shape = parse_layout(out_layout).shape_from_primal(out)
    except Exception as exc:  # KilnError from the layout helper
        raise TypeInferenceError(f"{op}: out_layout {out_layout} does not have the axes {primal}: {exc}") from exc
    if attrs.out_dtype:
        check_dtype(attrs.out_dtype, FLOAT if op != GC else NUMERIC, "out_dtype", op)
    return TensorType(shape, attrs.out_dtype or data.dtype), d["C"]


def _kernel_axes(op, attrs, axes):
    try:
        primal = set(parse_layout(attrs.kernel_layout).primal)
    except Exception as exc:  # KilnError from the layout parser
        raise TypeInferenceError(f"{op}: kernel_layout {attrs.kernel_layout} is not a layout: {exc}") from exc
    if primal != set(axes):
        raise TypeInferenceError(f"{op}: kernel_layout {attrs.kernel_layout} must have the axes {axes}")


def _winograd_rel(op, spatial):
    rank = len(spatial) + 2

    def relation(types, attrs):
        data, weight = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "weight")
        _kernel_axes(op, attrs, "OI" + spatial)
        if len(weight.shape) != rank:
            raise TypeInferenceError(f"{op}: weight {weight} must be a {rank}-D transformed weight")
        tile = attrs.tile_size
        ksize = attrs.kernel_size
        if ksize is None and rank == 4 and isinstance(weight.shape[0], int):
            ksize = (weight.shape[0] - tile + 1,) * 2
        if ksize is None:
            raise TypeInferenceError(f"{op}: kernel_size must be given")
        channels = attrs.channels if attrs.channels is not None else weight.shape[-2]
        _check_tile(op, tile, ksize[-1])
        if any(int(v) != 1 for v in (*attrs.strides, *attrs.dilation)) or attrs.groups != 1:
            raise TypeInferenceError(f"{op}: Winograd needs strides, dilation and groups of 1, got strides="
                                     f"{list(attrs.strides)} dilation={list(attrs.dilation)} groups={attrs.groups}")
        out, in_channels = _out_type(op, data, attrs, spatial, "NC" + spatial, channels, ksize)
        transformed = (depth_transformed(ksize[0]), True, True) if rank == 5 else (True, True)
        want = tuple(tile + k - 1 for k, t in zip(ksize, transformed, strict=True) if t) + \
            tuple(k for k, t in zip(ksize, transformed, strict=True) if not t) + (channels, in_channels)
        if tuple(weight.shape) != want:
            raise TypeInferenceError(f"{op}: weight {weight} is not the transform of a {list(ksize)} kernel with "
                                     f"tile_size={tile}, {channels} output and {in_channels} input channels: expected "
                                     f"shape {list(want)}")
        if weight.dtype != data.dtype:
            raise TypeInferenceError(f"{op}: data {data} and weight {weight} differ in dtype")
        return out

    return relation


register_relay_op(C2D, 2, _winograd_rel(C2D, "HW"), OpPattern.OUT_ELEMWISE_FUSABLE, A.Conv2DWinogradAttrs,
                  dtypes=FLOAT)
register_relay_op(C3D, 2, _winograd_rel(C3D, "DHW"), OpPattern.OUT_ELEMWISE_FUSABLE, A.Conv3DWinogradAttrs,
                  dtypes=FLOAT)


def _gemm_rel(types, attrs):
    data, weight = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "weight")
    _kernel_axes(GC, attrs, "HWIO")
    if attrs.kernel_size is None or attrs.channels is None:
        raise TypeInferenceError(f"{GC}: kernel_size and channels must be given (the tiled weight does not record "
                                 f"them)")
    if attrs.groups != 1:
        raise TypeInferenceError(f"{GC}: groups must be 1, got {attrs.groups}")
    out, in_channels = _out_type(GC, data, attrs, "HW", "NHWC", attrs.channels, attrs.kernel_size)
    if len(weight.shape) != 4:
        raise TypeInferenceError(f"{GC}: weight {weight} must be the 4-D tiled weight")
    kh, kw = attrs.kernel_size
    k_rows = kh * kw * in_channels
    tiles = weight.shape
    if all(isinstance(d, int) for d in tiles) and isinstance(k_rows, int):
        n_tile, k_tile = (tiles[2], tiles[3]) if weight.dtype in ("int8", "uint8") else (tiles[3], tiles[2])
        if tiles[0] * n_tile < attrs.channels or tiles[1] * k_tile < k_rows:
            raise TypeInferenceError(f"{GC}: weight {weight} holds fewer than the {k_rows} x {attrs.channels} "
                                     f"weights of a {kh}x{kw} kernel over {in_channels} input channels")
    if not attrs.out_dtype and weight.dtype != data.dtype:
        raise TypeInferenceError(f"{GC}: data {data} and weight {weight} differ in dtype (give out_dtype)")
    return out


register_relay_op(GC, 2, _gemm_rel, OpPattern.OUT_ELEMWISE_FUSABLE, AS.Conv2DAttrs, dtypes=NUMERIC)


# --------------------------------------------------------------------------------------------------- builders
def contrib_conv2d_winograd_weight_transform(weight, tile_size):
    """Winograd weight transform of an OIHW ``weight`` for tile size ``tile_size`` (F(m x m, r x r) with
    ``m = tile_size``): ``(alpha, alpha, CO, CI)``, to feed
    :func:`contrib_conv2d_winograd_without_weight_transform`."""
    return make_call(W2D, [weight], A.ConvWinogradWeightTransformAttrs(int(tile_size)))


def contrib_conv3d_winograd_weight_transform(weight, tile_size):
    """Winograd weight transform of an OIDHW ``weight`` (the depth too when it has 3..7 taps)."""
    return make_call(W3D, [weight], A.ConvWinogradWeightTransformAttrs(int(tile_size)))


def contrib_conv2d_winograd_without_weight_transform(data, weight, tile_size, strides=(1, 1), padding=(0, 0),
                                                     dilation=(1, 1), groups=1, channels=None, kernel_size=None,
                                                     data_layout="NCHW", kernel_layout="OIHW", out_layout="",
                                                     out_dtype=""):
    """2-D Winograd convolution of ``data`` with a weight from :func:`contrib_conv2d_winograd_weight_transform`;
    the other parameters are ``nn.conv2d``'s (data layouts with the NCHW axes)."""
    return make_call(C2D, [data, weight], A.Conv2DWinogradAttrs(
        int(tile_size), strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout,
        out_layout, out_dtype))


def contrib_conv3d_winograd_without_weight_transform(data, weight, tile_size, strides=(1, 1, 1), padding=(0, 0, 0),
                                                     dilation=(1, 1, 1), groups=1, channels=None, kernel_size=None,
                                                     data_layout="NCDHW", kernel_layout="OIDHW", out_layout="",
                                                     out_dtype=""):
    """3-D Winograd convolution of ``data`` with a weight from :func:`contrib_conv3d_winograd_weight_transform`."""
    return make_call(C3D, [data, weight], A.Conv3DWinogradAttrs(
        int(tile_size), strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout,
        out_layout, out_dtype))


def contrib_conv2d_gemm_weight_transform(weights, tile_N, tile_K):  # noqa: N803 (TVM's parameter names)
    """Tile an HWIO ``weights`` for :func:`contrib_conv2d_gemm_without_weight_transform`: ``tile_N`` along the output
    channels, ``tile_K`` along kernel height x width x input channels."""
    return make_call(GW, [weights], A.ConvGemmWeightTransformAttrs(int(tile_N), int(tile_K)))


def contrib_conv2d_gemm_without_weight_transform(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                                                 groups=1, channels=None, kernel_size=None, data_layout="NCHW",
                                                 kernel_layout="OIHW", out_layout="", out_dtype=""):
    """Convolution of ``data`` with a weight tiled by :func:`contrib_conv2d_gemm_weight_transform` (``kernel_size``
    and ``channels`` are required: the tiles do not record them)."""
    return make_call(GC, [data, weight], AS.Conv2DAttrs(
        strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout, out_layout, out_dtype))
