"""Resizing in numpy: ``resize1d_python``, ``resize2d_python``, ``resize3d_python`` and ``crop_and_resize_python``
under TVM's names, and :func:`resize`, the one implementation of the ``image.resize*`` and ``image.crop_and_resize``
semantics that the reference interpreter registers too.

Resizing is separable: each spatial axis (W first, then H, then D, the order TVM's computes blend in) maps output
position ``i`` to a source coordinate and blends the input along that axis:

* the coordinate comes from the ``coordinate_transformation_mode``, with ``scale = in / out``: ``half_pixel``
  ``(i + 0.5) * scale - 0.5``, ``align_corners`` ``i * (in - 1) / (out - 1)``, ``asymmetric`` ``i * scale``,
  ``pytorch_half_pixel`` like ``half_pixel`` but 0 when the output has one position, ``tf_half_pixel_for_nn``
  ``(i + 0.5) * scale``, ``tf_crop_and_resize`` ``start * (in - 1) + i * (end - start) * (in - 1) / (out - 1)``
  (the ``roi`` gives ``start`` and ``end``; the centre for a single position). As in TVM these are float32
  computations (float64 for float64 data), and source indices are clamped into the input;
* ``nearest_neighbor`` rounds the coordinate with ``rounding_method`` (default ``round`` for ``align_corners``,
  else ``floor``; ``floor``/``ceil`` nudge by 1e-5 as TVM does, ``round`` ties away from zero); ``asymmetric`` with
  an integer upscale factor divides integers (``i // factor``) instead, as TVM does;
* ``linear`` blends the two neighbours of ``floor(coord)``: ``a + (b - a) * t``;
* ``cubic`` blends four neighbours with Keys' weights for ``cubic_alpha``; ``cubic_exclude`` zeroes the weights of
  taps outside the input and renormalizes the rest.

With ``tf_crop_and_resize``, outputs whose coordinate on some axis falls outside ``[0, in - 1]`` are
``extrapolation_value``. The result is cast to ``out_dtype``, truncating for integers as TVM's cast does; an integer
result of ``linear`` or ``cubic`` is computed in float64 and snapped to a whole number within ``INTEGER_SNAP`` first
(see :mod:`kiln.topi.image.resize`).
"""

import numpy as np

from ...error import OpAttributeInvalid
from ...tir.layout import layout as parse_layout
from ..image.resize import INTEGER_SNAP
from .common import round_half_away

__all__ = ["resize", "resize1d_python", "resize2d_python", "resize3d_python", "crop_and_resize_python"]

_METHODS = ("nearest_neighbor", "linear", "cubic")
_ROUNDING = ("round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def source_coords(out_size, in_size, mode, dtype, start=0.0, end=1.0):
    """The source coordinate of every output position along one axis (an array of ``dtype``)."""
    f = dtype.type
    pos = np.arange(out_size, dtype=dtype)
    scale = f(in_size) / f(out_size)
    half = f(0.5)
    if mode == "half_pixel":
        return (pos + half) * scale - half
    if mode in ("align_corners", "pytorch_half_pixel", "tf_crop_and_resize") and out_size == 1:
        # TVM divides by zero for align_corners; a single output reads position 0 (the roi's centre for crops)
        centre = half * (f(start) + f(end)) * f(in_size - 1) if mode == "tf_crop_and_resize" else f(0)
        return np.full(1, centre, dtype)
    if mode == "align_corners":
        return f(in_size - 1) / f(out_size - 1) * pos
    if mode == "asymmetric":
        return scale * pos
    if mode == "pytorch_half_pixel":
        return (pos + half) * scale - half
    if mode == "tf_half_pixel_for_nn":
        return (pos + half) * scale
    if mode == "tf_crop_and_resize":
        return f(start) * f(in_size - 1) + pos * (f(end) - f(start)) * f(in_size - 1) / f(out_size - 1)
    raise OpAttributeInvalid(f"resize: unknown coordinate_transformation_mode {mode!r}")


def int_upscale_factor(in_size, out_size):
    """TVM's ``can_convert_multiply_to_intdiv``: the integer upscale factor ``out / in``, or None."""
    if out_size % in_size:
        return None
    factor = out_size // in_size
    return factor if factor <= 1 / (1e-5 * in_size + 1e-5) else None


def nearest_index(coords, method):
    """``coords`` rounded to int64 by a ``rounding_method``."""
    f = coords.dtype.type
    if method == "round":
        rounded = round_half_away(coords)
    elif method == "round_prefer_floor":
        rounded = np.ceil(coords - f(0.5))
    elif method == "round_prefer_ceil":
        rounded = np.floor(coords + f(0.5))
    elif method == "floor":
        rounded = np.floor(coords + f(1e-5))
    elif method == "ceil":
        rounded = np.ceil(coords - f(1e-5))
    else:
        raise OpAttributeInvalid(f"resize: unknown rounding_method {method!r}")
    return rounded.astype("int64")


def cubic_weights(t, alpha):
    """Keys' cubic convolution weights of the taps at offsets -1, 0, 1, 2 for the fractions ``t``."""
    a = t.dtype.type(alpha)
    t2, t3 = t * t, t * t * t
    return [a * (t3 - 2 * t2 + t), (a + 2) * t3 - (3 + a) * t2 + 1,
            -(a + 2) * t3 + (3 + 2 * a) * t2 - a * t, -a * t3 + a * t2]


def _taps(coords, size, method, alpha, exclude):
    """Per output position: the source indices (clamped) and the weights the blend along one axis uses (for
    ``linear``, the fraction ``t`` that weighs the second tap)."""
    base_f = np.floor(coords)
    frac = coords - base_f
    base = base_f.astype("int64")
    if method == "linear":
        return [np.clip(base + k, 0, size - 1) for k in range(2)], frac
    weights = cubic_weights(frac, alpha)
    if exclude:
        zero = coords.dtype.type(0)
        weights = [np.where((base - 1 + k < 0) | (base + k > size), zero, w) for k, w in enumerate(weights)]
        total = weights[0] + weights[1] + weights[2] + weights[3]
        weights = [w / total for w in weights]
    return [np.clip(base - 1 + k, 0, size - 1) for k in range(4)], weights


def _along(x, axis, coords, method, rounding, alpha, exclude, int_factor):
    """``x`` resampled along ``axis`` at ``coords``."""
    size = x.shape[axis]
    if method == "nearest_neighbor":
        index = np.arange(len(coords)) // int_factor if int_factor else nearest_index(coords, rounding)
        return np.take(x, np.clip(index, 0, size - 1), axis=axis)
    taps, weights = _taps(coords, size, method, alpha, exclude)
    shape = [1] * x.ndim
    shape[axis] = len(coords)
    if method == "linear":
        a, b = (np.take(x, tap, axis=axis) for tap in taps)
        return a + (b - a) * weights.reshape(shape)
    out = None
    for tap, weight in zip(taps, weights, strict=True):
        term = np.take(x, tap, axis=axis) * weight.reshape(shape)
        out = term if out is None else out + term
    return out


def resize(data, size, layout, method="linear", coordinate_transformation_mode="half_pixel", rounding_method="",
           cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, roi=None, out_dtype=None):
    """Resize the spatial axes of ``data`` (``W``; ``H, W``; or ``D, H, W`` of ``layout``, unsplit) to ``size``.

    Parameters
    ----------
    data : numpy.ndarray
    size : tuple of int
        The output length of each spatial axis, in the order D, H, W.
    layout : str
        ``data``'s layout (``NCW``, ``NHWC``, ``NCDHW``, ``NCHW4c``...).
    method, coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude, extrapolation_value :
        As Relay's ``image.resize2d`` (see the module docstring).
    roi : tuple of float, optional
        For ``tf_crop_and_resize``: the starts of the spatial axes, then their ends (normalized); default all
        of each axis.
    out_dtype : str, optional
        The result dtype (``data``'s when None).

    Returns
    -------
    numpy.ndarray
    """
    lay = parse_layout(layout)
    names = "DHW"[3 - len(size):]
    axes = [lay.index_of(a) for a in names]
    if len(size) not in (1, 2, 3) or min(axes) < 0 or lay.ndim != data.ndim:
        raise OpAttributeInvalid(f"resize: data of shape {data.shape} and size {tuple(size)} do not fit layout "
                                 f"{layout!r}")
    if method not in _METHODS:
        raise OpAttributeInvalid(f"resize: method must be one of {_METHODS}, got {method!r}")
    mode = coordinate_transformation_mode
    roi = tuple(roi) if roi is not None and len(roi) else (0.0,) * len(size) + (1.0,) * len(size)
    rounding = rounding_method or ("round" if mode == "align_corners" else "floor")
    out_dtype = np.dtype(out_dtype or data.dtype)
    integer_blend = method != "nearest_neighbor" and out_dtype.kind != "f"
    work = np.dtype("float64") if data.dtype == np.float64 or integer_blend else np.dtype("float32")
    x = data if method == "nearest_neighbor" else data.astype(work)
    outside = np.zeros((), bool)
    for k in reversed(range(len(size))):  # W first, as TVM's computes blend
        axis, in_size, out_size = axes[k], data.shape[axes[k]], int(size[k])
        coords = source_coords(out_size, in_size, mode, work, roi[k], roi[len(size) + k])
        factor = int_upscale_factor(in_size, out_size) if mode == "asymmetric" else None
        x = _along(x, axis, coords, method, rounding, cubic_alpha, cubic_exclude, factor)
        if mode == "tf_crop_and_resize":
            shape = [1] * data.ndim
            shape[axis] = out_size
            outside = outside | ((coords < 0) | (coords > in_size - 1)).reshape(shape)
    if mode == "tf_crop_and_resize":
        x = np.where(outside, np.asarray(extrapolation_value, work), x)
    if integer_blend:
        whole = np.floor(x + 0.5)
        x = np.where(np.abs(x - whole) < INTEGER_SNAP, whole, x)
    return np.asarray(x).astype(out_dtype, copy=False)


def _scaled(shape, scale):
    return tuple(int(round(n * s)) for n, s in zip(shape, scale, strict=True))


def _spatial_shape(data, layout, names):
    lay = parse_layout(layout)
    return tuple(data.shape[lay.index_of(a)] for a in names)


def resize1d_python(data, scale, layout="NCW", method="nearest_neighbor",
                    coordinate_transformation_mode="align_corners", **options):
    """``data`` (``NCW`` or ``NWC``) resized along W by ``scale[0]`` (the length rounded); ``options`` are the
    other keywords of :func:`resize`."""
    return resize(data, _scaled(_spatial_shape(data, layout, "W"), scale), layout, method,
                  coordinate_transformation_mode, **options)


def resize2d_python(data, scale, layout="NCHW", method="nearest_neighbor",
                    coordinate_transformation_mode="align_corners", **options):
    """``data`` (``NCHW``, ``NHWC`` or a packed ``NCHW[x]n[y]c``) resized along H and W by ``scale`` (lengths
    rounded); ``options`` are the other keywords of :func:`resize`."""
    return resize(data, _scaled(_spatial_shape(data, layout, "HW"), scale), layout, method,
                  coordinate_transformation_mode, **options)


def resize3d_python(data, scale, layout="NCDHW", method="nearest_neighbor",
                    coordinate_transformation_mode="align_corners", **options):
    """``data`` (``NCDHW`` or ``NDHWC``) resized along D, H and W by ``scale`` (lengths rounded); ``options`` are
    the other keywords of :func:`resize`."""
    return resize(data, _scaled(_spatial_shape(data, layout, "DHW"), scale), layout, method,
                  coordinate_transformation_mode, **options)


def crop_and_resize_python(image, boxes, box_indices, crop_size, layout, method="bilinear", extrapolation_value=0,
                           out_dtype=None):
    """TensorFlow's ``crop_and_resize``: each box ``[y1, x1, y2, x2]`` (normalized) of image ``box_indices[i]``
    resized to ``crop_size`` by :func:`resize` in ``tf_crop_and_resize`` mode (``bilinear``, or
    ``nearest_neighbor`` rounding half away from zero); ``extrapolation_value`` outside the image."""
    if layout not in ("NCHW", "NHWC"):
        raise OpAttributeInvalid(f"crop_and_resize_python: layout must be NCHW or NHWC, got {layout!r}")
    if method not in ("bilinear", "nearest_neighbor"):
        raise OpAttributeInvalid(f"crop_and_resize_python: method must be bilinear or nearest_neighbor, got {method!r}")
    crops = [resize(image[int(index)][None], tuple(int(s) for s in crop_size), layout,
                    "linear" if method == "bilinear" else "nearest_neighbor", "tf_crop_and_resize", "round",
                    extrapolation_value=extrapolation_value, roi=tuple(box), out_dtype=out_dtype)
             for box, index in zip(boxes, box_indices, strict=True)]
    if not crops:
        channels = image.shape[layout.index("C")]
        shape = (0, channels, *crop_size) if layout == "NCHW" else (0, *crop_size, channels)
        return np.zeros(shape, out_dtype or image.dtype)
    return np.concatenate(crops)
