"""2-D pooling (TVM's ``topi/nn/pooling.py``): ``pool2d`` (max/avg) and ``global_pool`` in any layout whose H and W
axes are not split (NCHW, NHWC, NCHW16c ...); other axes are independent.

The input is padded (:func:`kiln.topi.nn.pad`, inlined by schedules) by ``padding`` plus, with ``ceil_mode``, the
cells the last window reaches past it. Max pooling pads with the dtype's lowest finite value (TVM's ``min_value``)
and reduces with ``te.max`` (tag ``pool_max``). Average pooling sums (tag ``pool_sum``; integers in int64, float16 in
float32) and divides in an element-wise stage by the number of cells the window covers inside the data, or inside
data plus padding with ``count_include_pad`` (never the ceil_mode cells): per axis that count is the number of taps
``k`` with ``lo <= start + k * dilation < hi``, a closed form in integer arithmetic, and the divisor is the product
of the two axes' counts. Integer averages truncate, as the reference does.
"""

from ...error import OpAttributeInvalid
from ...te.operation import compute, reduce_axis
from ...te.operation import max as _te_max
from ...te.operation import sum as _te_sum
from ...tir import dtype as _dt
from ...tir import op as _op
from ...tir.layout import layout as parse_layout
from .. import tag as _tag
from ..transform import layout_transform
from ..utils import get_const_tuple, known_nonpositive
from .conv2d import pad_tuple
from .pad import has_padding, pad

__all__ = ["pool2d", "global_pool", "pool_out_size", "ceil_mode_extra"]


def pool_out_size(size, kernel, stride, dilation, before, after, ceil_mode) -> int:
    """The output length of pooling along one axis (TVM's rule for ``ceil_mode``)."""
    span = size + before + after - dilation * (kernel - 1) - 1
    return (span + stride - 1) // stride + 1 if ceil_mode else span // stride + 1


def ceil_mode_extra(size, out, kernel, stride, dilation, before, after) -> int:
    """Cells past the end padding that the last window reaches when ``ceil_mode`` makes one more output (0 else;
    an expression of the symbolic sizes when the input's length is known only at run time)."""
    extra = (out - 1) * stride + dilation * (kernel - 1) + 1 - (size + before + after)
    return max(0, extra) if isinstance(extra, int) else _op.maximum(extra, _op.const(0, extra.dtype))


def _hw(layout_name, what):
    lay = parse_layout(layout_name)
    h, w = lay.index_of("H"), lay.index_of("W")
    if h < 0 or w < 0 or lay.factor_of("H") != 1 or lay.factor_of("W") != 1:
        raise OpAttributeInvalid(f"{what}: Unsupported layout {layout_name} (it needs unsplit H and W axes)")
    return lay, h, w


def _acc_dtype(dtype):
    if dtype == "float16":
        return "float32"
    return "int64" if _dt.is_integer(dtype) else dtype


def _tap_count(start, kernel, dilation, lo, hi):
    """How many ``k`` in ``[0, kernel)`` satisfy ``lo <= start + k * dilation < hi`` (an int32 expression)."""
    k_min = _op.maximum(_op.const(0, "int32"), _op.const(0, "int32") - _op.floordiv(start - lo, dilation))
    k_max = _op.minimum(_op.const(kernel - 1, "int32"), _op.floordiv(hi - 1 - start, dilation))
    return _op.maximum(k_max - k_min + 1, _op.const(0, "int32"))


def pool2d(data, kernel, stride, dilation, padding, pool_type, ceil_mode=False, layout="NCHW",
           count_include_pad=True, out_layout=""):
    """Max or average pooling over the H and W axes of ``layout``.

    Parameters
    ----------
    data : te.Tensor
    kernel, stride, dilation : pair of int
    padding : int or sequence
        ``(top, left, bottom, right)`` (or 1 or 2 values).
    pool_type : str
        ``max`` or ``avg``.
    ceil_mode : bool
        Round the output size up.
    layout : str
        The data layout (H and W unsplit).
    count_include_pad : bool
        Whether padding cells count in the average's divisor.
    out_layout : str
        The result layout (``layout`` when empty).

    Returns
    -------
    out : te.Tensor
    """
    if pool_type not in ("max", "avg"):
        raise OpAttributeInvalid(f"topi.pool2d: pool_type must be max or avg, got {pool_type!r}")
    lay, h_axis, w_axis = _hw(layout, "topi.pool2d")
    shape = get_const_tuple(data.shape)
    (kh, kw), (sh, sw), (dh, dw) = (tuple(int(v) for v in x) for x in (kernel, stride, dilation))
    top, left, bottom, right = pad_tuple(padding)
    h, w = shape[h_axis], shape[w_axis]
    oh = pool_out_size(h, kh, sh, dh, top, bottom, ceil_mode)
    ow = pool_out_size(w, kw, sw, dw, left, right, ceil_mode)
    if known_nonpositive(oh, ow):
        raise OpAttributeInvalid(f"topi.pool2d: a {kh}x{kw} window does not fit the padded {h}x{w} input")
    extra_h = ceil_mode_extra(h, oh, kh, sh, dh, top, bottom) if ceil_mode else 0
    extra_w = ceil_mode_extra(w, ow, kw, sw, dw, left, right) if ceil_mode else 0
    before, after = [0] * len(shape), [0] * len(shape)
    before[h_axis], before[w_axis] = top, left
    after[h_axis], after[w_axis] = bottom + extra_h, right + extra_w
    out_shape = list(shape)
    out_shape[h_axis], out_shape[w_axis] = oh, ow
    ry, rx = reduce_axis((0, kh), name="rv_h"), reduce_axis((0, kw), name="rv_w")

    def window(i):
        idx = list(i)
        idx[h_axis] = i[h_axis] * sh + ry * dh
        idx[w_axis] = i[w_axis] * sw + rx * dw
        return idx

    if pool_type == "max":
        lowest = _op.min_value(data.dtype)
        padded = pad(data, before, after, pad_value=lowest, name="pad_temp") if has_padding(before + after) else data
        out = compute(out_shape, lambda *i: _te_max(padded(*window(i)), axis=[ry, rx]), name="pool_max",
                      tag="pool_max", attrs={"layout": layout})
    else:
        acc = _acc_dtype(data.dtype)
        padded = pad(data, before, after, pad_value=0, name="pad_temp") if has_padding(before + after) else data
        total = compute(out_shape, lambda *i: _te_sum(_op.cast(padded(*window(i)), acc), axis=[ry, rx]),
                        name="pool_sum", tag="pool_sum", attrs={"layout": layout})
        lo_h, hi_h = (0, h + top + bottom) if count_include_pad else (top, top + h)
        lo_w, hi_w = (0, w + left + right) if count_include_pad else (left, left + w)

        def average(*i):
            count = (_tap_count(i[h_axis] * sh, kh, dh, lo_h, hi_h)
                     * _tap_count(i[w_axis] * sw, kw, dw, lo_w, hi_w))
            count = _op.maximum(count, _op.const(1, "int32"))
            if _dt.is_float(acc):
                return _op.cast(_op.div(total(*i), _op.cast(count, acc)), data.dtype)
            return _op.cast(_op.truncdiv(total(*i), _op.cast(count, acc)), data.dtype)

        out = compute(out_shape, average, name="pool_avg", tag=_tag.ELEMWISE)
    out_layout = out_layout or layout
    return layout_transform(out, layout, out_layout) if out_layout != layout else out


def global_pool(data, pool_type, layout="NCHW", out_layout=""):
    """Max or average over the whole H x W plane, keeping H and W as size 1.

    Returns
    -------
    out : te.Tensor
    """
    if pool_type not in ("max", "avg"):
        raise OpAttributeInvalid(f"topi.global_pool: pool_type must be max or avg, got {pool_type!r}")
    lay, h_axis, w_axis = _hw(layout, "topi.global_pool")
    shape = get_const_tuple(data.shape)
    h, w = shape[h_axis], shape[w_axis]
    out_shape = list(shape)
    out_shape[h_axis] = out_shape[w_axis] = 1
    ry, rx = reduce_axis((0, h), name="rv_h"), reduce_axis((0, w), name="rv_w")

    def plane(i):
        idx = list(i)
        idx[h_axis], idx[w_axis] = ry, rx
        return idx

    if pool_type == "max":
        out = compute(out_shape, lambda *i: _te_max(data(*plane(i)), axis=[ry, rx]), name="global_pool_max",
                      tag="global_pool_max")
    else:
        acc = _acc_dtype(data.dtype) if not _dt.is_float(data.dtype) or data.dtype == "float16" else data.dtype
        total = compute(out_shape, lambda *i: _te_sum(_op.cast(data(*plane(i)), acc), axis=[ry, rx]),
                        name="global_pool_sum", tag="global_pool_sum")
        if isinstance(h, int) and isinstance(w, int):
            count = _op.const(float(max(h * w, 1)) if _dt.is_float(acc) else max(h * w, 1), acc)
        else:  # a plane known only at run time
            count = _op.cast(_op.maximum(h * w, 1), acc)

        def average(*i):
            if _dt.is_float(acc):
                return _op.cast(_op.div(total(*i), count), data.dtype)
            return _op.cast(_op.truncdiv(total(*i), count), data.dtype)

        out = compute(out_shape, average, name="global_pool_avg", tag=_tag.ELEMWISE)
    out_layout = out_layout or layout
    return layout_transform(out, layout, out_layout) if out_layout != layout else out
