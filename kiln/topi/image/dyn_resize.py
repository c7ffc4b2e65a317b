"""``resize_nd`` (the kernel of ``dyn.image.resize_nd``): ONNX's ``Resize`` of any axes of N-D data, with the output
sizes, the coordinate scales and the region of interest known only at run time.

ONNX resizes axis after axis (linear and cubic interpolation are separable), and the coordinate of output index
``o`` along an axis of input length ``n`` comes from the *given* scale ``s`` (not from ``out / in``: the two differ
when ``n * s`` is not whole), with the resized length ``L = s * n``:

==========================  =====================================================================
``half_pixel``              ``(o + 0.5) / s - 0.5``
``half_pixel_symmetric``    ``n / 2 * (1 - out / L) + (o + 0.5) / s - 0.5``
``pytorch_half_pixel``      like ``half_pixel``, ``-0.5`` when ``L == 1``
``align_corners``           ``o * (n - 1) / (L - 1)``, 0 when ``L == 1``
``asymmetric``              ``o / s``
``tf_half_pixel_for_nn``    ``(o + 0.5) / s``
``tf_crop_and_resize``      ``roi_start * (n - 1) + o * (roi_end - roi_start) * (n - 1) / (L - 1)``; outside the
                            image the result is ``extrapolation_value``
==========================  =====================================================================

Coordinates and weights are computed in float64, as ONNX's reference does. ``nearest`` rounds the coordinate
(``round_prefer_floor``/``round_prefer_ceil``/``floor``/``ceil``) and clamps it into the image: one gather over all
resized axes. ``linear`` and ``cubic`` take ``F`` taps ``t = floor(x) - F/2 + 1 + j`` (``F`` = 2 or 4) weighted by the
triangle or Keys' cubic kernel of the distance ``t - x``; taps past the border read the edge value. ``antialias``
stretches the kernel by ``1 / s`` when shrinking (``F = 2 * ceil(support / s)``, a loop bound read at run time) and
normalizes the weights; ``exclude_outside`` drops the taps outside the image and renormalizes. Each resized axis is
one reduction stage over its taps (stages are kept apart, so an N-D resize costs ``F`` reads per axis, not ``F**N``),
and the weight sum a normalization needs is a stage of its own, one value per output index.
"""

from ...error import OpAttributeInvalid
from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import expr as E
from ...tir import intrin as _intrin
from ...tir import op as _op
from ...tir.dtype import DataType
from .. import tag as _tag

__all__ = ["resize_nd", "COORDINATE_MODES", "ROUNDING_METHODS"]

COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                    "tf_half_pixel_for_nn", "tf_crop_and_resize")
ROUNDING_METHODS = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
_F64 = "float64"


def _f64(value):
    if isinstance(value, int | float):
        return _op.const(float(value), _F64)
    return value if value.dtype == _F64 else _op.cast(value, _F64)


def _int(value):
    return _op.cast(value, "int32")  # an int folds to a constant


class _Axis:
    """What one resized axis reads at run time: its input and output lengths, scale and crop window."""

    def __init__(self, axis, in_size, out_size, scale, start, end, mode):
        self.axis, self.in_size, self.out_size, self.mode = axis, in_size, out_size, mode
        self.n, self.m, self.s = _f64(in_size), _f64(out_size), _f64(scale)
        self.start, self.end = _f64(start), _f64(end)

    def coordinate(self, o):
        """The source coordinate of output index ``o`` (float64)."""
        x, n, s, mode = _f64(o), self.n, self.s, self.mode
        half, one, zero = _f64(0.5), _f64(1.0), _f64(0.0)
        length = s * n
        centred = (x + half) / s - half
        if mode == "half_pixel":
            return centred
        if mode == "half_pixel_symmetric":
            return n / _f64(2.0) * (one - self.m / length) + centred
        if mode == "pytorch_half_pixel":
            return E.Select(length == one, _f64(-0.5), centred)
        if mode == "align_corners":
            return E.Select(length == one, zero, x * (n - one) / (length - one))
        if mode == "asymmetric":
            return x / s
        if mode == "tf_half_pixel_for_nn":
            return (x + half) / s
        span = (self.end - self.start) * (n - one)
        crop = E.Select(length == one, span / _f64(2.0), x * span / (length - one))
        return crop + self.start * (n - one)

    def outside(self, coord):
        """Whether ``coord`` lies outside the image (only ``tf_crop_and_resize`` extrapolates)."""
        return _op.logical_or(coord < _f64(0.0), coord > self.n - _f64(1.0))

    def clamp(self, index):
        return _op.minimum(_op.maximum(index, _op.const(0, "int32")), _int(self.in_size) - 1)


def _rounded(coord, method):
    if method == "round_prefer_floor":
        return _intrin.ceil(coord - _f64(0.5))
    if method == "round_prefer_ceil":
        return _intrin.floor(coord + _f64(0.5))
    if method == "floor":
        return _intrin.floor(coord)
    return _intrin.ceil(coord)


def _kernel(d, method, alpha):
    """The interpolation weight at distance ``d`` (float64): the triangle, or Keys' cubic with parameter ``alpha``."""
    t = _op.abs(d)
    one, two, zero = _f64(1.0), _f64(2.0), _f64(0.0)
    if method == "linear":
        return _op.maximum(one - t, zero)
    a = _f64(alpha)
    near = ((a + two) * t - (a + _f64(3.0))) * t * t + one
    far = ((a * t - _f64(5.0) * a) * t + _f64(8.0) * a) * t - _f64(4.0) * a
    return E.Select(t <= one, near, E.Select(t < two, far, zero))


class _Taps:
    """The taps of one axis: their count (static, or read at run time under ``antialias``) and, per output index
    and tap, the source index and the weight."""

    def __init__(self, ax, method, alpha, exclude, antialias):
        self.ax, self.method, self.alpha, self.exclude = ax, method, alpha, exclude
        support = 1 if method == "linear" else 2
        if antialias:
            # the kernel is stretched by 1 / s when shrinking; the bound keeps a degenerate scale (0, or one giving
            # no output) from overflowing, and is never reached when the output is not empty (s >= 0.5 / n)
            self.stretch = _op.minimum(ax.s, _f64(1.0))
            half = _intrin.ceil(_f64(support) / self.stretch)
            half = _op.minimum(half, _f64(2.0 * support) * ax.n + _f64(2.0))
            self.count = _op.cast(half, "int32") * 2
        else:
            self.stretch, self.count = None, 2 * support
        self.normalized = bool(antialias or exclude)

    def at(self, o, j):
        """``(index, weight, inside)`` of tap ``j`` of output index ``o`` (weight float64, before normalizing)."""
        coord = self.ax.coordinate(o)
        base = _op.cast(_intrin.floor(coord), "int32")
        half = self.count // 2 if isinstance(self.count, int) else _op.floordiv(self.count, 2)
        tap = base - half + 1 + j
        d = _f64(tap) - coord
        if self.stretch is not None:
            d = d * self.stretch
        weight = _kernel(d, self.method, self.alpha)
        inside = _op.logical_and(tap >= 0, tap < _int(self.ax.in_size))
        if self.exclude:
            weight = E.Select(inside, weight, _f64(0.0))
        return self.ax.clamp(tap), weight, coord


def _axis_stage(x, ax, taps, work, extrapolate, fill, k):
    """``x`` interpolated along ``ax.axis`` to ``ax.out_size``: one reduction over the taps."""
    shape = list(x.shape)
    shape[ax.axis] = ax.out_size
    total = None
    if taps.normalized:
        j = reduce_axis((0, taps.count), name=f"tap_sum{k}")
        total = compute((ax.out_size,), lambda o: _te_sum(taps.at(o, j)[1], axis=j), name=f"T_resize_weights{k}",
                        tag="resize_weights")
    j = reduce_axis((0, taps.count), name=f"tap{k}")

    def fcompute(*i):
        o = i[ax.axis]
        index, weight, coord = taps.at(o, j)
        if total is not None:
            weight = weight / E.Select(total[o] == _f64(0.0), _f64(1.0), total[o])
        idx = list(i)
        idx[ax.axis] = index
        value = _op.cast(weight, work) * _op.cast(x(*idx), work)
        if extrapolate:  # tap 0 carries the fill value, the others nothing
            value = E.Select(ax.outside(coord), E.Select(j.var == 0, fill, _op.const(0.0, work)), value)
        return _te_sum(value, axis=j)

    return compute(tuple(shape), fcompute, name=f"T_resize_axis{k}", tag="resize_nd")


def _to_dtype(value, dtype):
    """``value`` (a float) in ``dtype``: integers are rounded half to even and saturated, as ONNX's reference."""
    kind = DataType.parse(dtype)
    if kind.is_float():
        return _op.cast(value, dtype)
    low, high = _op.min_value(dtype), _op.max_value(dtype)
    rounded = _intrin.round(value)
    clipped = _op.minimum(_op.maximum(rounded, _op.cast(low, value.dtype)), _op.cast(high, value.dtype))
    return _op.cast(clipped, dtype)


def resize_nd(data, scale, roi, out_shape, axes, method="nearest", coordinate_transformation_mode="half_pixel",
              rounding_method="round_prefer_floor", cubic_alpha=-0.75, cubic_exclude=0, antialias=0,
              extrapolation_value=0.0):
    """Resize ``axes`` of ``data`` to the lengths in ``out_shape`` (see the module docstring).

    Parameters
    ----------
    data : te.Tensor
        N-D data of any numeric type.
    scale : te.Tensor
        1-D float, the coordinate scale of each of ``axes``.
    roi : te.Tensor
        1-D float of ``2 * len(axes)``: the crop starts, then the ends (read by ``tf_crop_and_resize`` only).
    out_shape : tuple
        The result shape: ``data``'s, with the lengths of ``axes`` (size variables when known only at run time).
    axes : tuple of int
        The resized axes, in the order they are interpolated.
    method : str
        ``nearest``, ``linear`` or ``cubic``.
    coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude, antialias, extrapolation_value :
        ONNX's ``coordinate_transformation_mode``, ``nearest_mode``, ``cubic_coeff_a``, ``exclude_outside``,
        ``antialias`` and ``extrapolation_value``.

    Returns
    -------
    out : te.Tensor
        Of ``data``'s dtype.
    """
    if method not in ("nearest", "linear", "cubic"):
        raise OpAttributeInvalid(f"topi.resize_nd: method must be nearest, linear or cubic, got {method!r}")
    if coordinate_transformation_mode not in COORDINATE_MODES:
        raise OpAttributeInvalid(f"topi.resize_nd: unknown coordinate_transformation_mode "
                                 f"{coordinate_transformation_mode!r}")
    if method == "nearest" and rounding_method not in ROUNDING_METHODS:
        raise OpAttributeInvalid(f"topi.resize_nd: unknown rounding_method {rounding_method!r}")
    ndim = len(data.shape)
    if len(set(axes)) != len(axes) or any(not 0 <= a < ndim for a in axes):
        raise OpAttributeInvalid(f"topi.resize_nd: axes {axes} are not distinct axes of {ndim}-D data")
    count = len(axes)
    resized = [_Axis(a, data.shape[a], out_shape[a], scale[k], roi[k], roi[count + k], coordinate_transformation_mode)
               for k, a in enumerate(axes)]
    extrapolate = coordinate_transformation_mode == "tf_crop_and_resize"
    if method == "nearest":
        fill = _op.const(extrapolation_value, data.dtype)

        def gather(*i):
            idx, outside = list(i), []
            for ax in resized:
                coord = ax.coordinate(i[ax.axis])
                idx[ax.axis] = ax.clamp(_op.cast(_rounded(coord, rounding_method), "int32"))
                outside.append(ax.outside(coord))
            value = data(*idx)
            return E.Select(_op.any(*outside), fill, value) if extrapolate and outside else value

        return compute(tuple(out_shape), gather, name="T_resize_nd", tag=_tag.INJECTIVE)
    work = "float64" if data.dtype == "float64" else "float32"
    fill = _op.const(extrapolation_value, work)
    x = data
    for k, ax in enumerate(resized):
        x = _axis_stage(x, ax, _Taps(ax, method, cubic_alpha, cubic_exclude, antialias), work, extrapolate, fill, k)
    if x is data:
        return compute(tuple(out_shape), lambda *i: data(*i), name="T_resize_nd", tag=_tag.INJECTIVE)
    if x.dtype != data.dtype:
        x = compute(tuple(out_shape), lambda *i: _to_dtype(x(*i), data.dtype), name="T_resize_cast",
                    tag=_tag.INJECTIVE)
    return x
