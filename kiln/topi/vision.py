"""Region operators (TVM's ``topi.vision.rcnn``): ``roi_align`` (NCHW or NHWC) and ``roi_pool`` (NCHW), and the shared
bilinear sampler.

``roi_align`` splits each region (``[batch, x1, y1, x2, y2]`` scaled by ``spatial_scale``, at least 1 x 1) into
``pooled_size`` bins and averages (or takes the maximum of) a grid of bilinear samples per bin: ``sample_ratio``
samples per axis, or ``ceil(roi_size / pooled_size)`` when it is not positive -- a reduction whose extent is read
from the region, per output element. Samples more than one pixel outside the image are 0.
"""

from ..te.operation import compute, reduce_axis
from ..te.operation import max as _te_max
from ..te.operation import sum as _te_sum
from ..tir import intrin as _intrin
from ..tir import op as _op
from .regular_nms import regular_non_max_suppression  # TVM's topi.vision name of the TFLite NMS kernel
from .utils import get_const_tuple

__all__ = ["bilinear_sample", "bilinear_sample_nchw", "regular_non_max_suppression", "roi_align_nchw",
           "roi_pool_nchw"]


def bilinear_sample(read, y, x, height, width):
    """The bilinear interpolation at the float position ``(y, x)`` of the image ``read(row, col)`` returns pixels
    of (TVM's ``bilinear_sample_nchw``): the four neighbours weighted by their distance, a neighbour outside the
    image contributing nothing (``read`` is only called inside)."""
    work = y.dtype
    y0f, x0f = _intrin.floor(y), _intrin.floor(x)
    y0, x0 = _op.cast(y0f, "int32"), _op.cast(x0f, "int32")
    ty, tx = y - y0f, x - x0f
    one, zero = _op.const(1.0, work), _op.const(0.0, work)
    out = None
    for r, wy in ((y0, one - ty), (y0 + 1, ty)):
        for col, wx in ((x0, one - tx), (x0 + 1, tx)):
            inside = _op.all(_op.greater_equal(r, 0), _op.less(r, height), _op.greater_equal(col, 0),
                             _op.less(col, width))
            rc = _op.minimum(_op.maximum(r, _op.const(0, "int32")), _op.const(height - 1, "int32"))
            cc = _op.minimum(_op.maximum(col, _op.const(0, "int32")), _op.const(width - 1, "int32"))
            term = _op.select(inside, _op.cast(read(rc, cc), work) * wy * wx, zero)
            out = term if out is None else out + term
    return out


def bilinear_sample_nchw(data, n, c, y, x, height, width):
    """:func:`bilinear_sample` of ``data[n, c]``."""
    return bilinear_sample(lambda r, col: data(n, c, r, col), y, x, height, width)


def roi_align_nchw(data, rois, pooled_size, spatial_scale, mode="avg", sample_ratio=-1, layout="NCHW"):
    """ROI align of NCHW (or NHWC) ``data`` over ``rois`` (``(num_roi, 5)``); see the module docstring.

    Returns
    -------
    out : te.Tensor
        ``(num_roi, C, pooled_h, pooled_w)`` (or ``(num_roi, pooled_h, pooled_w, C)``), tagged ``roi_align``.
    """
    nhwc = layout == "NHWC"
    if nhwc:
        _, height, width, channels = get_const_tuple(data.shape)
    else:
        _, channels, height, width = get_const_tuple(data.shape)
    num_roi = get_const_tuple(rois.shape)[0]
    ph_n, pw_n = pooled_size
    work = rois.dtype

    def c(v):
        return _op.const(float(v), work)

    def fcompute(i, ch, ph, pw):
        batch = _op.cast(rois(i, 0), "int32")
        start_w, start_h = rois(i, 1) * c(spatial_scale), rois(i, 2) * c(spatial_scale)
        end_w, end_h = rois(i, 3) * c(spatial_scale), rois(i, 4) * c(spatial_scale)
        roi_h = _op.maximum(end_h - start_h, c(1.0))
        roi_w = _op.maximum(end_w - start_w, c(1.0))
        bin_h, bin_w = roi_h / c(ph_n), roi_w / c(pw_n)
        if sample_ratio > 0:
            grid_h = grid_w = _op.const(int(sample_ratio), "int32")
        else:
            grid_h = _op.cast(_intrin.ceil(roi_h / c(ph_n)), "int32")
            grid_w = _op.cast(_intrin.ceil(roi_w / c(pw_n)), "int32")
        rh, rw = reduce_axis((0, grid_h), name="rh"), reduce_axis((0, grid_w), name="rw")
        y = start_h + _op.cast(ph, work) * bin_h + (_op.cast(rh.var, work) + c(0.5)) * bin_h / _op.cast(grid_h, work)
        x = start_w + _op.cast(pw, work) * bin_w + (_op.cast(rw.var, work) + c(0.5)) * bin_w / _op.cast(grid_w, work)
        outside = _op.any(_op.less(y, c(-1.0)), _op.less(x, c(-1.0)), _op.greater(y, c(height)),
                          _op.greater(x, c(width)))
        yc = _op.minimum(_op.maximum(y, c(0.0)), c(height - 1))
        xc = _op.minimum(_op.maximum(x, c(0.0)), c(width - 1))
        def read(r, col):
            return data(batch, r, col, ch) if nhwc else data(batch, ch, r, col)

        value = _op.select(outside, c(0.0), bilinear_sample(read, yc, xc, height, width))
        if mode == "avg":
            return _te_sum(value / _op.cast(grid_h * grid_w, work), axis=[rh, rw])
        return _te_max(value, axis=[rh, rw])

    if nhwc:
        return compute((num_roi, ph_n, pw_n, channels), lambda i, ph, pw, ch: fcompute(i, ch, ph, pw),
                       name="T_roi_align", tag="roi_align")
    return compute((num_roi, channels, ph_n, pw_n), fcompute, name="T_roi_align", tag="roi_align")


def roi_pool_nchw(data, rois, pooled_size, spatial_scale):
    """ROI max pooling of NCHW ``data`` (TVM's ``roi_pool_nchw``): region corners rounded, each bin the maximum
    of the whole pixels it covers (0 for an empty bin).

    Returns
    -------
    out : te.Tensor
        ``(num_roi, C, pooled_h, pooled_w)``, tagged ``roi_pool``.
    """
    _, channels, height, width = get_const_tuple(data.shape)
    num_roi = get_const_tuple(rois.shape)[0]
    ph_n, pw_n = pooled_size
    work = rois.dtype

    def corner(i, k):
        from .elemwise import round_half_away

        return _op.cast(round_half_away(rois(i, k) * _op.const(float(spatial_scale), work)), "int32")

    def clamp(v, hi):
        return _op.minimum(_op.maximum(v, _op.const(0, "int32")), _op.const(hi, "int32"))

    def bounds(i, p, n, start_k, end_k, size):
        start, end = corner(i, start_k), corner(i, end_k)
        length = _op.maximum(end - start + 1, _op.const(1, "int32"))
        bin_size = _op.cast(length, work) / _op.const(float(n), work)
        lo = _op.cast(_intrin.floor(_op.cast(p, work) * bin_size), "int32")
        hi = _op.cast(_intrin.ceil(_op.cast(p + 1, work) * bin_size), "int32")
        return clamp(lo + start, size), clamp(hi + start, size)

    def fmax(i, ch, ph, pw):
        batch = _op.cast(rois(i, 0), "int32")
        hs, he = bounds(i, ph, ph_n, 2, 4, height)
        ws, we = bounds(i, pw, pw_n, 1, 3, width)
        rh = reduce_axis((0, _op.maximum(he - hs, _op.const(0, "int32"))), name="rh")
        rw = reduce_axis((0, _op.maximum(we - ws, _op.const(0, "int32"))), name="rw")
        return _te_max(data(batch, ch, hs + rh.var, ws + rw.var), axis=[rh, rw])

    pooled = compute((num_roi, channels, ph_n, pw_n), fmax, name="T_roi_pool_max", tag="roi_pool")

    def fcompute(i, ch, ph, pw):
        hs, he = bounds(i, ph, ph_n, 2, 4, height)
        ws, we = bounds(i, pw, pw_n, 1, 3, width)
        empty = _op.logical_or(_op.less_equal(he, hs), _op.less_equal(we, ws))
        return _op.select(empty, _op.const(0, data.dtype), pooled(i, ch, ph, pw))

    return compute((num_roi, channels, ph_n, pw_n), fcompute, name="T_roi_pool", tag="elemwise")
