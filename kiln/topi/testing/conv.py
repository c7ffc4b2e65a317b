"""numpy references of convolutions over 1, 2 or 3 spatial axes and their transposes (TVM's ``conv1d_ncw_python``,
``conv3d_ncdhw_python``, ``conv2d_transpose_nchw_python``...), under TVM's names and signatures.

Both are written from their definitions, apart from kiln's computes and its reference interpreter:

* a convolution sums, for every kernel tap, a strided view of the padded input times that tap's weights
  (``out[n, o, p] += x_pad[n, c, p * s + k * d] * w[o, c, k]``);
* a transposed convolution scatters every input element times the kernel into the output
  (``full[n, o, p * s + k * d] += x[n, c, p] * w[c, o, k]``), then crops ``before`` at the front, keeps the output's
  length (``output_padding`` extends it into what ``after`` would crop) and zero-fills past the scattered range.

Padding follows TVM's helpers (``get_pad_tuple1d/2d/3d``): an int pads every side, one value per axis pads both sides,
``2 * ndim`` values are every axis' before then every axis' after, and ``"SAME"`` puts the larger half of
``kernel - 1`` before.
"""

import itertools

import numpy as np

from ...error import OpAttributeInvalid

__all__ = ["pad_pairs", "conv_ncx_python", "conv_transpose_ncx_python", "conv1d_ncw_python",
           "group_conv1d_ncw_python", "conv3d_ncdhw_python", "conv3d_ndhwc_python", "conv1d_transpose_ncw_python",
           "group_conv1d_transpose_ncw_python", "conv2d_transpose_nchw_python", "conv2d_transpose_nhwc_python",
           "conv3d_transpose_ncdhw_python"]


def _per_axis(value, nd, what):
    values = (value,) * nd if isinstance(value, int | np.integer) else tuple(int(v) for v in value)
    if len(values) == 1:
        values *= nd
    if len(values) != nd:
        raise OpAttributeInvalid(f"topi.testing: {what} {value} needs 1 or {nd} values")
    return values


def pad_pairs(padding, kernel):
    """``(before, after)`` tuples, one entry per spatial axis, from TVM's padding forms (see the module docstring).

    Parameters
    ----------
    padding : int, str or sequence of int
    kernel : sequence of int
        The kernel's spatial sizes (dilated, if the convolution dilates), read by ``"SAME"``.
    """
    nd = len(kernel)
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return (0,) * nd, (0,) * nd
        if padding.upper() != "SAME":
            raise OpAttributeInvalid(f"topi.testing: padding {padding!r} is none of 'SAME', 'VALID'")
        total = [k - 1 for k in kernel]
        return tuple((t + 1) // 2 for t in total), tuple(t - (t + 1) // 2 for t in total)
    if isinstance(padding, int | np.integer):
        return (int(padding),) * nd, (int(padding),) * nd
    values = tuple(int(p) for p in padding)
    if len(values) == 2 * nd:
        return values[:nd], values[nd:]
    if len(values) in (1, nd):
        return _per_axis(values, nd, "padding"), _per_axis(values, nd, "padding")
    raise OpAttributeInvalid(f"topi.testing: padding {padding} needs 1, {nd} or {2 * nd} values")


def _work_dtype(*arrays):
    return "float64" if np.issubdtype(np.result_type(*arrays), np.floating) else "int64"


def conv_ncx_python(a_np, w_np, stride, padding, dilation=1, groups=1):
    """Convolution of ``(N, C, *S)`` data with an ``(O, C / groups, *K)`` kernel, accumulated in float64 (int64
    for integers) and returned in the operands' type.

    Parameters
    ----------
    a_np, w_np : numpy.ndarray
    stride, dilation : int or sequence of int
    padding : int, str or sequence of int
        See :func:`pad_pairs`.
    groups : int

    Returns
    -------
    b_np : numpy.ndarray
        ``(N, O, *OS)``.
    """
    nd = a_np.ndim - 2
    strides, dilation = _per_axis(stride, nd, "stride"), _per_axis(dilation, nd, "dilation")
    ksize = w_np.shape[2:]
    before, after = pad_pairs(padding, [(k - 1) * d + 1 for k, d in zip(ksize, dilation, strict=True)])
    n, c = a_np.shape[:2]
    o, cg = w_np.shape[:2]
    if c != cg * groups or o % groups:
        raise OpAttributeInvalid(f"topi.testing: data {a_np.shape} and kernel {w_np.shape} do not fit groups={groups}")
    work = _work_dtype(a_np, w_np)
    x = np.pad(a_np.astype(work), [(0, 0), (0, 0)] + list(zip(before, after, strict=True)))
    out_space = [(x.shape[2 + a] - (ksize[a] - 1) * dilation[a] - 1) // strides[a] + 1 for a in range(nd)]
    out = np.zeros((n, o, *out_space), work)
    og = o // groups
    for g in range(groups):
        xg, wg = x[:, g * cg:(g + 1) * cg], w_np[g * og:(g + 1) * og].astype(work)
        for tap in itertools.product(*(range(k) for k in ksize)):
            view = xg[(slice(None), slice(None)) + tuple(
                slice(tap[a] * dilation[a], tap[a] * dilation[a] + strides[a] * (out_space[a] - 1) + 1, strides[a])
                for a in range(nd))]
            out[:, g * og:(g + 1) * og] += np.tensordot(view, wg[(slice(None), slice(None)) + tap],
                                                        axes=([1], [1])).transpose(0, nd + 1, *range(1, nd + 1))
    return out.astype(np.result_type(a_np, w_np))


def conv_transpose_ncx_python(a_np, w_np, stride, padding, output_padding=0, dilation=1, groups=1):
    """Transposed convolution of ``(N, C, *S)`` data with a ``(C, O / groups, *K)`` kernel (the gradient of
    :func:`conv_ncx_python` with respect to its input), by scattering (see the module docstring).

    Returns
    -------
    b_np : numpy.ndarray
        ``(N, O, *OS)`` with ``OS = (S - 1) * stride + (K - 1) * dilation + 1 - before - after + output_padding``.
    """
    nd = a_np.ndim - 2
    strides, dilation = _per_axis(stride, nd, "stride"), _per_axis(dilation, nd, "dilation")
    opad = _per_axis(output_padding, nd, "output_padding")
    ksize = w_np.shape[2:]
    before, after = pad_pairs(padding, ksize)
    n, c, space = a_np.shape[0], a_np.shape[1], a_np.shape[2:]
    cin, og = w_np.shape[:2]
    if cin != c or c % groups:
        raise OpAttributeInvalid(f"topi.testing: data {a_np.shape} and kernel {w_np.shape} do not fit groups={groups}")
    cg = c // groups
    work = _work_dtype(a_np, w_np)
    full_space = [(space[a] - 1) * strides[a] + (ksize[a] - 1) * dilation[a] + 1 for a in range(nd)]
    out_space = [full_space[a] - before[a] - after[a] + opad[a] for a in range(nd)]
    # room for output_padding past the scattered range (it reads zeros there)
    full = np.zeros((n, og * groups, *[max(f, before[a] + out_space[a]) for a, f in enumerate(full_space)]), work)
    x = a_np.astype(work)
    for g in range(groups):
        xg, wg = x[:, g * cg:(g + 1) * cg], w_np[g * cg:(g + 1) * cg].astype(work)
        for tap in itertools.product(*(range(k) for k in ksize)):
            spread = np.tensordot(xg, wg[(slice(None), slice(None)) + tap], axes=([1], [0]))  # (N, *S, O/g)
            target = full[(slice(None), slice(g * og, (g + 1) * og)) + tuple(
                slice(tap[a] * dilation[a], tap[a] * dilation[a] + strides[a] * (space[a] - 1) + 1, strides[a])
                for a in range(nd))]
            target += np.moveaxis(spread, -1, 1)
    crop = full[(slice(None), slice(None)) + tuple(slice(before[a], before[a] + out_space[a]) for a in range(nd))]
    return crop.astype(np.result_type(a_np, w_np))


def conv1d_ncw_python(a_np, w_np, stride, padding, dilation):
    """1-D convolution of NCW data with an OIW kernel."""
    return conv_ncx_python(a_np, w_np, stride, padding, dilation)


def group_conv1d_ncw_python(a_np, w_np, stride, padding, dilation, groups):
    """Grouped 1-D convolution of NCW data with an ``(O, C / groups, W)`` kernel."""
    return conv_ncx_python(a_np, w_np, stride, padding, dilation, groups)


def conv3d_ncdhw_python(a_np, w_np, stride, padding, groups=1):
    """3-D convolution of NCDHW data with an OIDHW kernel."""
    return conv_ncx_python(a_np, w_np, stride, padding, 1, groups)


def conv3d_ndhwc_python(a_np, w_np, stride, padding, groups=1):
    """3-D convolution of NDHWC data with a DHWIO kernel."""
    out = conv_ncx_python(a_np.transpose(0, 4, 1, 2, 3), w_np.transpose(4, 3, 0, 1, 2), stride, padding, 1, groups)
    return out.transpose(0, 2, 3, 4, 1)


def conv1d_transpose_ncw_python(a_np, w_np, stride, padding, output_padding):
    """Transposed 1-D convolution of NCW data with an IOW kernel."""
    return conv_transpose_ncx_python(a_np, w_np, stride, padding, output_padding)


def group_conv1d_transpose_ncw_python(a_np, w_np, stride, padding, output_padding, groups=1):
    """Grouped transposed 1-D convolution of NCW data with a ``(C, O / groups, W)`` kernel."""
    return conv_transpose_ncx_python(a_np, w_np, stride, padding, output_padding, 1, groups)


def conv2d_transpose_nchw_python(a_np, w_np, stride, padding, output_padding, groups=1):
    """Transposed 2-D convolution of NCHW data with an IOHW kernel."""
    return conv_transpose_ncx_python(a_np, w_np, stride, padding, output_padding, 1, groups)


_TO_IOHW = {"HWIO": (2, 3, 0, 1), "HWOI": (3, 2, 0, 1), "OIHW": (1, 0, 2, 3), "IOHW": (0, 1, 2, 3)}


def conv2d_transpose_nhwc_python(a_nhwc, weight, weight_format, stride, padding, output_padding=(0, 0)):
    """Transposed 2-D convolution of NHWC data with a kernel in ``weight_format`` (``HWIO``, ``HWOI``, ``OIHW``
    or ``IOHW``); the result is NHWC."""
    if weight_format not in _TO_IOHW:
        raise OpAttributeInvalid(f"topi.testing: weight_format {weight_format!r} is none of {sorted(_TO_IOHW)}")
    out = conv_transpose_ncx_python(a_nhwc.transpose(0, 3, 1, 2), weight.transpose(_TO_IOHW[weight_format]), stride,
                                    padding, output_padding)
    return out.transpose(0, 2, 3, 1)


def conv3d_transpose_ncdhw_python(a_np, w_np, stride, padding, output_padding=0, groups=1):
    """Transposed 3-D convolution of NCDHW data with an IODHW kernel."""
    return conv_transpose_ncx_python(a_np, w_np, stride, padding, output_padding, 1, groups)
