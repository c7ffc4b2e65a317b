"""Winograd convolutions (TVM's ``conv2d_winograd_*``, ``conv3d_winograd_weight_transform``): the weight transform
and the convolution of a transformed weight, in 2-D (NCHW or NHWC) and 3-D (NCDHW).

One N-D formulation serves all: each spatial axis is either *transformed* (Winograd F(m, r) along it, see
:mod:`.winograd`) or *direct* (a 3-D kernel whose depth is outside 3..7 keeps depth as a plain convolution axis, as
TVM's ``conv3d_winograd_weight_transform`` does). The transformed weight is::

    U[alpha_t..., k_d..., co, ci] = sum_{r_t} g[co, ci, r...] * prod_t G[alpha_t, r_t]

(transformed axes first, in spatial order, then the direct axes' kernel taps). The convolution tiles the padded
input into ``alpha``-wide windows ``m`` apart along each transformed axis and runs four stages::

    V[eps..., n, ci, tile..., x_d...] = sum_{r_t} d[n, ci, tile * m + r, x_d] * prod_t B[r_t, eps_t]
    M[eps..., n, co, tile..., o_d...] = sum_{ci, k_d} V[eps..., n, ci, tile..., o_d + k_d] * U[eps..., k_d..., co, ci]
    Y[n, co, tile..., v..., o_d...]   = sum_{r_t} M[r..., n, co, tile..., o_d] * prod_t A[r_t, v_t]
    out[n, co, o...]                  = Y[n, co, o_t // m, o_t % m, o_d]

The products over the transformed axes are separable: ``V`` and ``Y`` are computed one axis per stage
(``data_pack0``, ``data_pack``; ``inverse0``, ``inverse``), ``alpha^(t+1)`` terms per tile instead of ``alpha^2t``.

Strides and dilations are 1 and groups 1 (TVM's Winograd computes assert the same). Integer data is refused: the
matrices hold fractions.
"""

from ...error import OpAttributeInvalid
from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import op as _op
from ...tir.layout import layout as parse_layout
from ..transform import layout_transform
from ..utils import get_const_tuple, known_nonpositive
from .conv2d import _acc_dtype, _finish
from .pad import pad
from .utils import get_pad_tuple, get_pad_tuple3d
from .winograd import winograd_transform_matrices

__all__ = ["conv2d_winograd_weight_transform", "conv3d_winograd_weight_transform", "winograd_weight_transform",
           "winograd_conv", "conv2d_winograd_nchw", "conv2d_winograd_nhwc",
           "conv2d_winograd_nchw_without_weight_transform", "conv2d_winograd_nhwc_without_weight_transform",
           "conv3d_winograd_without_weight_transform", "depth_transformed"]


def depth_transformed(kernel_depth) -> bool:
    """Whether a 3-D Winograd transform covers the depth axis too (TVM's rule: a depth of 3..7 taps)."""
    return 2 < kernel_depth < 8


def _check_float(tensor, what):
    if not str(tensor.dtype).startswith("float"):
        raise OpAttributeInvalid(f"{what}: Winograd needs a float dtype, got {tensor.dtype}")


def winograd_weight_transform(kernel, tile_size, transformed, what="winograd_weight_transform"):
    """The transformed weight ``U`` of an ``(CO, CI, K...)`` kernel (see the module docstring).

    Parameters
    ----------
    kernel : te.Tensor
        ``(CO, CI, *K)``.
    tile_size : int
    transformed : sequence of bool
        Per spatial axis, whether the axis is transformed; the transformed axes share one kernel size.
    what : str
        The operator named in errors.

    Returns
    -------
    out : te.Tensor
        ``(alpha,) * t + (k_direct...) + (CO, CI)``.
    """
    _check_float(kernel, what)
    co, ci, *ksize = get_const_tuple(kernel.shape)
    sizes = {k for k, t in zip(ksize, transformed, strict=True) if t}
    if len(sizes) != 1:
        raise OpAttributeInvalid(f"{what}: the transformed kernel axes {ksize} must be equal (an NxN kernel)")
    r = sizes.pop()
    alpha = tile_size + r - 1
    acc = _acc_dtype(kernel.dtype)
    _, _, g_mat = winograd_transform_matrices(tile_size, r, acc)
    t_axes = [j for j, t in enumerate(transformed) if t]
    d_axes = [j for j, t in enumerate(transformed) if not t]
    reds = [reduce_axis((0, r), name=f"r_k{j}") for j in t_axes]
    shape = (alpha,) * len(t_axes) + tuple(ksize[j] for j in d_axes) + (co, ci)

    def fcompute(*idx):
        eps, kd, (o, i) = idx[:len(t_axes)], idx[len(t_axes):-2], idx[-2:]
        taps = [None] * len(ksize)
        for j, red in zip(t_axes, reds, strict=True):
            taps[j] = red
        for j, k in zip(d_axes, kd, strict=True):
            taps[j] = k
        value = _op.cast(kernel[(o, i, *taps)], acc)
        for e, red in zip(eps, reds, strict=True):
            value = value * g_mat[e, red]
        return _te_sum(value, axis=reds)

    return _finish(compute(shape, fcompute, name="transform_weight", tag="winograd_weight_transform"),
                   kernel.dtype, "transform_weight")


def conv2d_winograd_weight_transform(kernel, tile_size):
    """Winograd weight transform of an OIHW ``kernel``: ``(alpha, alpha, CO, CI)`` (TVM's signature)."""
    return winograd_weight_transform(kernel, tile_size, (True, True), "conv2d_winograd_weight_transform")


def conv3d_winograd_weight_transform(kernel, tile_size):
    """Winograd weight transform of an OIDHW ``kernel``: ``(alpha, alpha, alpha, CO, CI)``, or
    ``(alpha, alpha, KD, CO, CI)`` when the depth is not transformed (:func:`depth_transformed`)."""
    kd = get_const_tuple(kernel.shape)[2]
    return winograd_weight_transform(kernel, tile_size, (depth_transformed(kd), True, True),
                                     "conv3d_winograd_weight_transform")


def winograd_conv(data, packed, tile_size, ksize, transformed, padding, out_dtype=None, what="winograd_conv"):
    """Convolution of ``(N, CI, *S)`` data with a transformed weight (see the module docstring).

    Parameters
    ----------
    data : te.Tensor
        ``(N, CI, *S)``.
    packed : te.Tensor
        ``(alpha,) * t + (k_direct...) + (CO, CI)``.
    tile_size : int
    ksize : sequence of int
        The original kernel's spatial sizes.
    transformed : sequence of bool
        Per spatial axis, whether it is transformed.
    padding : sequence of int
        Before on each spatial axis, then after.
    out_dtype : str, optional
    what : str
        The operator named in errors.

    Returns
    -------
    out : te.Tensor
        ``(N, CO, *O)``.
    """
    _check_float(data, what)
    out_dtype = out_dtype or data.dtype
    acc = _acc_dtype(out_dtype)
    n, ci, *space = get_const_tuple(data.shape)
    nd, m = len(space), tile_size
    t_axes = [j for j, t in enumerate(transformed) if t]
    d_axes = [j for j, t in enumerate(transformed) if not t]
    r = ksize[t_axes[0]]
    alpha = m + r - 1
    want = (alpha,) * len(t_axes) + tuple(ksize[j] for j in d_axes)
    pshape = get_const_tuple(packed.shape)
    if tuple(pshape[:-2]) != want or pshape[-1] != ci:
        raise OpAttributeInvalid(f"{what}: transformed weight {pshape} does not fit tile_size={tile_size}, kernel "
                                 f"{list(ksize)} and {ci} input channels (expected {want + ('CO', ci)})")
    co = pshape[-2]
    before, after = padding[:nd], padding[nd:]
    out = [space[j] + before[j] + after[j] - ksize[j] + 1 for j in range(nd)]
    if known_nonpositive(*out):
        raise OpAttributeInvalid(f"{what}: a {list(ksize)} kernel does not fit the padded {space} input")
    tiles = {j: (out[j] + m - 1) // m for j in t_axes}
    # the last tile reads alpha points from (tiles - 1) * m: tiles * m - out points past the padded input (0..m-1,
    # an expression when the size is known only at run time)
    extra = [tiles[j] * m - out[j] if j in tiles else 0 for j in range(nd)]
    padded = pad(data, (0, 0, *before), (0, 0, *(a + e for a, e in zip(after, extra, strict=True))),
                 name="data_pad")
    a_mat, b_mat, _ = winograd_transform_matrices(m, r, acc)
    nt = len(t_axes)
    in_direct = [space[j] + before[j] + after[j] for j in d_axes]

    def split(idx):
        """(eps..., n, c, tile..., direct...) -> its parts."""
        return idx[:nt], idx[nt], idx[nt + 1], idx[nt + 2:2 * nt + 2], idx[2 * nt + 2:]

    tile_shape = tuple(tiles[j] for j in t_axes)
    v_pack = padded
    for k in range(nt):  # B applied along one transformed axis per stage (alpha^(t+1) terms per tile, not alpha^2t)
        v_pack = _data_pack_stage(v_pack, k, nt, b_mat, acc, m, alpha, tile_shape, t_axes, d_axes, in_direct)
    rc = reduce_axis((0, ci), name="rc")
    rk = [reduce_axis((0, ksize[j]), name=f"r_k{j}") for j in d_axes]

    def bgemm(*idx):
        eps, nn, oc, tile_part, direct_part = split(idx)
        shifted = [o + k for o, k in zip(direct_part, rk, strict=True)]
        return _te_sum(v_pack[(*eps, nn, rc, *tile_part, *shifted)] * _op.cast(packed[(*eps, *rk, oc, rc)], acc),
                       axis=[rc, *rk])

    out_direct = tuple(out[j] for j in d_axes)
    gemm = compute((alpha,) * nt + (n, co) + tile_shape + out_direct, bgemm, name="bgemm", tag="winograd_bgemm",
                   attrs={"transformed_axes": nt})
    inv = gemm
    for k in range(nt):  # A applied along one transformed axis per stage
        inv = _inverse_stage(inv, k, nt, a_mat, m, alpha)

    def output(nn, oc, *pos):
        return inv[(nn, oc, *(pos[j] // m for j in t_axes), *(pos[j] % m for j in t_axes),
                    *(pos[j] for j in d_axes))]

    res = compute((n, co, *out), output, name="conv_winograd", tag="injective")
    return _finish(res, out_dtype, "conv_winograd")


def _unit(values, what, name):
    values = (values,) * 2 if isinstance(values, int) else tuple(values)
    if any(int(v) != 1 for v in values):
        raise OpAttributeInvalid(f"{what}: Winograd supports only {name} 1, got {list(values)}")


def _conv2d(data, weight, strides, padding, dilation, out_dtype, tile_size, pre_computed, layout):
    what = f"conv2d_winograd_{layout.lower()}"
    _unit(strides, what, "strides")
    _unit(dilation, what, "dilation")
    if layout == "NHWC":
        data = layout_transform(data, "NHWC", "NCHW")
    if pre_computed:
        ksize = (get_const_tuple(weight.shape)[0] - tile_size + 1,) * 2
        packed = weight
    else:
        kernel = weight if layout == "NCHW" else layout_transform(weight, "HWIO", "OIHW")
        ksize = tuple(get_const_tuple(kernel.shape)[2:])
        packed = conv2d_winograd_weight_transform(kernel, tile_size)
    top, left, bottom, right = get_pad_tuple(padding, ksize)
    out = winograd_conv(data, packed, tile_size, ksize, (True, True), (top, left, bottom, right), out_dtype, what)
    return out if layout == "NCHW" else layout_transform(out, "NCHW", "NHWC")


def conv2d_winograd_nchw(data, weight, strides, padding, dilation, out_dtype, pre_computed=False, tile_size=4):
    """Winograd convolution of NCHW data (TVM's ``topi.nn.conv2d_winograd_nchw``): ``weight`` is OIHW, or already
    transformed, ``(alpha, alpha, CO, CI)``, with ``pre_computed``. Output NCHW."""
    return _conv2d(data, weight, strides, padding, dilation, out_dtype, tile_size, pre_computed, "NCHW")


def conv2d_winograd_nhwc(data, weight, strides, padding, dilation, out_dtype, pre_computed=False, tile_size=4,
                         **_auto_scheduler_options):
    """Winograd convolution of NHWC data (TVM's ``topi.nn.conv2d_winograd_nhwc``): ``weight`` is HWIO, or already
    transformed, ``(alpha, alpha, CO, CI)``, with ``pre_computed``. Output NHWC."""
    return _conv2d(data, weight, strides, padding, dilation, out_dtype, tile_size, pre_computed, "NHWC")


def conv2d_winograd_nchw_without_weight_transform(data, weight, strides, padding, dilation, out_dtype, tile_size=4):
    """:func:`conv2d_winograd_nchw` of a transformed weight."""
    return conv2d_winograd_nchw(data, weight, strides, padding, dilation, out_dtype, True, tile_size)


def conv2d_winograd_nhwc_without_weight_transform(data, weight, strides, padding, dilation, out_dtype, tile_size=4,
                                                  **_auto_scheduler_options):
    """:func:`conv2d_winograd_nhwc` of a transformed weight."""
    return conv2d_winograd_nhwc(data, weight, strides, padding, dilation, out_dtype, True, tile_size)


def conv3d_winograd_without_weight_transform(data, weight, strides, padding, dilation, out_dtype, tile_size,
                                             kernel_size, data_layout="NCDHW"):
    """3-D Winograd convolution of data in a layout with the NCDHW axes and a weight transformed by
    :func:`conv3d_winograd_weight_transform` from a kernel of ``kernel_size`` ``(KD, KH, KW)``."""
    what = "conv3d_winograd"
    _unit(strides, what, "strides")
    _unit(dilation, what, "dilation")
    primal = "NCDHW"
    x = data if data_layout == primal else layout_transform(data, data_layout, primal)
    ksize = tuple(int(k) for k in kernel_size)
    pads = get_pad_tuple3d(padding, ksize)
    out = winograd_conv(x, weight, tile_size, ksize, (depth_transformed(ksize[0]), True, True), pads, out_dtype,
                        what)
    return out if data_layout == primal or not parse_layout(data_layout) else layout_transform(out, primal,
                                                                                                 data_layout)


def _data_pack_stage(prev, k, nt, b_mat, acc, m, alpha, tile_shape, t_axes, d_axes, in_direct):
    """Stage ``k`` of the input transform: ``B`` along transformed axis ``k``. Its axes are the transform points
    done so far (``k + 1``), ``n, c``, every tile index, the window offsets of the axes still to transform, then
    the direct axes; stage 0 reads the padded input (``n, c, *spatial``) directly."""
    red = reduce_axis((0, alpha), name=f"r_a{k}")
    rest = nt - k - 1

    def body(*idx):
        eps, (nn, cc) = idx[:k + 1], idx[k + 1:k + 3]
        tile_part = idx[k + 3:k + 3 + nt]
        window, direct = idx[k + 3 + nt:k + 3 + nt + rest], idx[k + 3 + nt + rest:]
        if k == 0:
            pos = [None] * (nt + len(d_axes))
            offsets = (red, *window)
            for i, j in enumerate(t_axes):
                pos[j] = tile_part[i] * m + offsets[i]
            for j, x in zip(d_axes, direct, strict=True):
                pos[j] = x
            value = _op.cast(prev[(nn, cc, *pos)], acc)
        else:
            value = prev[(*eps[:k], nn, cc, *tile_part, red, *window, *direct)]
        return _te_sum(value * b_mat[red, eps[k]], axis=red)

    n, c = (prev.shape[k], prev.shape[k + 1]) if k else prev.shape[:2]
    shape = (alpha,) * (k + 1) + (n, c) + tile_shape + (alpha,) * rest + tuple(in_direct)
    return compute(shape, body, name=f"data_pack{k}" if k < nt - 1 else "data_pack", tag="winograd_data_pack",
                   attrs={"transformed_axes": nt, "stage": k})


def _inverse_stage(prev, k, nt, a_mat, m, alpha):
    """Stage ``k`` of the output transform: ``A`` along transformed axis ``k``. ``prev`` leads with the transform
    points still to invert (``nt - k``); the result has one fewer and one more output position (``v``)."""
    red = reduce_axis((0, alpha), name=f"r_b{k}")
    rest = nt - k - 1
    shape = tuple(prev.shape[1:nt - k]) + tuple(prev.shape[nt - k:nt - k + 2 + nt + k]) + (m,) + \
        tuple(prev.shape[nt - k + 2 + nt + k:])

    def body(*idx):
        eps = idx[:rest]
        nn, oc = idx[rest], idx[rest + 1]
        tile_part = idx[rest + 2:rest + 2 + nt]
        vv = idx[rest + 2 + nt:rest + 2 + nt + k + 1]
        direct = idx[rest + 2 + nt + k + 1:]
        return _te_sum(prev[(red, *eps, nn, oc, *tile_part, *vv[:k], *direct)] * a_mat[red, vv[k]], axis=red)

    return compute(shape, body, name=f"inverse{k}" if k < nt - 1 else "inverse", tag="winograd_inverse",
                   attrs={"transformed_axes": nt, "stage": k})
