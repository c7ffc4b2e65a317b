"""Convolution as a matrix product with a pre-tiled weight (TVM's ``conv2d_gemm_weight_transform`` and the
``conv2d_gemm_without_weight_transform`` compute of its Arm CPU path), in NHWC with an HWIO kernel.

The kernel is flattened to a ``K x N`` matrix ``W[(kh * KW + kw) * IC + ic, oc]`` (``K = KH * KW * IC``,
``N = OC``), padded to whole tiles (``N`` to a multiple of ``tile_N``; ``K`` to a multiple of ``4 * tile_K``, the
four tiles TVM's tensorized kernels reduce at once) and cut into ``tile_K x tile_N`` tiles, laid out tile column by
tile column::

    float:      T[x, y, z, w] = W[y * tile_K + z, x * tile_N + w]     shape (N' / tile_N, K' / tile_K, tile_K, tile_N)
    (u)int8:    T[x, y, z, w] = W[y * tile_K + w, x * tile_N + z]     shape (N' / tile_N, K' / tile_K, tile_N, tile_K)

(8-bit tiles are transposed, as the dot-product instructions read them). The convolution reads the im2col rows of
the padded input and the weight back through that layout::

    out[n, y, x, oc] = sum_k data_pad[n, y * sh + kh(k) * dh, x * sw + kw(k) * dw, ic(k)] * W[k, oc]
"""

from ...error import OpAttributeInvalid
from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import op as _op
from ..utils import get_const_tuple, known_nonpositive
from .conv2d import _acc_dtype, _finish, conv_out_size
from .pad import pad
from .utils import get_pad_tuple

__all__ = ["conv2d_gemm_weight_transform", "conv2d_gemm_without_weight_transform", "gemm_weights_padding",
           "gemm_transformed_shape", "interleaved_8bit"]


def interleaved_8bit(dtype) -> bool:
    """Whether a weight of ``dtype`` is tiled transposed (the 8-bit integers)."""
    return str(dtype) in ("int8", "uint8")


def gemm_weights_padding(n, k, tile_n, tile_k):
    """``(pad_N, pad_K)``: what makes ``N`` whole ``tile_n`` tiles and ``K`` whole groups of four ``tile_k`` tiles
    (TVM's ``arm_utils.get_conv2d_weights_padding``)."""
    pad_n = (-n) % tile_n
    pad_k = (-k) % (4 * tile_k)
    return pad_n, pad_k


def gemm_transformed_shape(kernel_shape, tile_n, tile_k, dtype):
    """The shape ``conv2d_gemm_weight_transform`` gives an HWIO kernel of ``kernel_shape``."""
    kh, kw, ic, oc = kernel_shape
    pad_n, pad_k = gemm_weights_padding(oc, kh * kw * ic, tile_n, tile_k)
    n, k = oc + pad_n, kh * kw * ic + pad_k
    inner = (tile_n, tile_k) if interleaved_8bit(dtype) else (tile_k, tile_n)
    return (n // tile_n, k // tile_k, *inner)


def conv2d_gemm_weight_transform(kernel, tile_N, tile_K):  # noqa: N803 (TVM's parameter names)
    """Tile an HWIO ``kernel`` for :func:`conv2d_gemm_without_weight_transform` (see the module docstring).

    Parameters
    ----------
    kernel : te.Tensor
        ``(KH, KW, IC, OC)``.
    tile_N, tile_K : int
        Tile sizes along ``N = OC`` and ``K = KH * KW * IC``.

    Returns
    -------
    out : te.Tensor
        4-D, the tiles of the padded ``K x N`` matrix.
    """
    if tile_N <= 0 or tile_K <= 0:
        raise OpAttributeInvalid(f"conv2d_gemm_weight_transform: tile sizes must be positive, got {tile_N}, {tile_K}")
    kh, kw, ic, oc = get_const_tuple(kernel.shape)
    kk = kh * kw * ic
    shape = gemm_transformed_shape((kh, kw, ic, oc), tile_N, tile_K, kernel.dtype)
    zero = _op.const(0, kernel.dtype)

    def flat(row, col):
        value = kernel[row // (kw * ic), (row // ic) % kw, row % ic, col]
        return _op.select(_op.all(row < kk, col < oc), value, zero)

    if interleaved_8bit(kernel.dtype):
        def fcompute(x, y, z, w):
            return flat(y * tile_K + w, x * tile_N + z)
    else:
        def fcompute(x, y, z, w):
            return flat(y * tile_K + z, x * tile_N + w)

    return compute(shape, fcompute, name="weight_block_reshape", tag="injective")


def conv2d_gemm_without_weight_transform(data, weight, strides, padding, dilation, out_dtype, kernel_size,
                                         output_channels):
    """Convolution of NHWC ``data`` with a weight tiled by :func:`conv2d_gemm_weight_transform`.

    Parameters
    ----------
    data : te.Tensor
        ``(N, H, W, IC)``.
    weight : te.Tensor
        The tiled weight; its dtype decides the tile layout (:func:`interleaved_8bit`).
    strides, padding, dilation : int or tuple
    out_dtype : str
    kernel_size : (int, int)
        The original kernel's ``(KH, KW)`` (the tiles keep no record of it).
    output_channels : int
        ``OC`` (the tiles may be padded past it).

    Returns
    -------
    out : te.Tensor
        ``(N, OH, OW, OC)``.
    """
    what = "conv2d_gemm_without_weight_transform"
    n, h, w, ic = get_const_tuple(data.shape)
    kh, kw = (int(k) for k in kernel_size)
    oc = int(output_channels)
    sh, sw = (strides, strides) if isinstance(strides, int) else (int(s) for s in strides)
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else (int(d) for d in dilation)
    top, left, bottom, right = get_pad_tuple(padding, (kh, kw))
    oh, ow = conv_out_size(h, kh, sh, dh, top, bottom), conv_out_size(w, kw, sw, dw, left, right)
    if known_nonpositive(oh, ow):
        raise OpAttributeInvalid(f"{what}: a {kh}x{kw} kernel does not fit the padded {h}x{w} input")
    wshape = get_const_tuple(weight.shape)
    if len(wshape) != 4:
        raise OpAttributeInvalid(f"{what}: the transformed weight must be 4-D, got {wshape}")
    transposed = interleaved_8bit(weight.dtype)
    tile_n, tile_k = (wshape[2], wshape[3]) if transposed else (wshape[3], wshape[2])
    kk = kh * kw * ic
    if wshape[0] * tile_n < oc or wshape[1] * tile_k < kk:
        raise OpAttributeInvalid(f"{what}: transformed weight {wshape} holds fewer than the {kk} x {oc} weights of a "
                                 f"{kh}x{kw} kernel with {ic} input and {oc} output channels")
    out_dtype = out_dtype or data.dtype
    acc = _acc_dtype(out_dtype)
    padded = pad(data, (0, top, left, 0), (0, bottom, right, 0), name="data_pad") if any(
        (top, left, bottom, right)) else data
    rk = reduce_axis((0, kk), name="rk")

    def fcompute(nn, yy, xx, co):
        a = padded[nn, yy * sh + (rk // (kw * ic)) * dh, xx * sw + ((rk // ic) % kw) * dw, rk % ic]
        if transposed:
            b = weight[co // tile_n, rk // tile_k, co % tile_n, rk % tile_k]
        else:
            b = weight[co // tile_n, rk // tile_k, rk % tile_k, co % tile_n]
        return _te_sum(_op.cast(a, acc) * _op.cast(b, acc), axis=rk)

    out = compute((n, oh, ow, oc), fcompute, name="conv2d_gemm", tag="conv2d_gemm_nhwc")
    return _finish(out, out_dtype, "conv2d_gemm")
