"""ONNX's ``Resize`` in numpy: the interpolation matrix of one axis (the static ONNX converter builds its Relay form
from it) and ``dyn.image.resize_nd``, which applies one such matrix per resized axis.

ONNX resizing is separable: each resized axis is interpolated on its own. :func:`axis_weights` computes, from the
ONNX definition, the source coordinate of every output index from ``coordinate_transformation_mode`` and the axis
scale (:func:`source_coordinates`), then the taps and weights of nearest, linear or cubic interpolation (edge values
repeat past the borders; ``exclude_outside`` drops outside taps; ``antialias`` stretches the linear/cubic kernel by
``1 / scale`` when shrinking; ``tf_crop_and_resize`` fills positions outside the crop with ``extrapolation_value``).
The weights are float64, as in ONNX's reference, and integer results are rounded half to even and saturated.
"""

import math

import numpy as np

from ...error import KilnError, OpNotImplemented
from .common import register

__all__ = ["source_coordinates", "axis_weights", "resize_nd"]


def source_coordinates(out_size, in_size, scale, mode, roi=(0.0, 1.0)):
    """The source coordinate of every output index along one axis (ONNX's coordinate transformations; the
    resized length in the formulas is ``scale * in_size``, as in ONNX's reference, which differs from
    ``out_size`` only for scales that do not give a whole size)."""
    x = np.arange(out_size, dtype="float64")
    length = scale * in_size
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        return in_size / 2 * (1 - out_size / length) + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if length != 1 else np.full(out_size, -0.5)
    if mode == "align_corners":
        return x * (in_size - 1) / (length - 1) if length != 1 else np.zeros(out_size)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    if mode == "tf_crop_and_resize":
        start, end = roi
        if length == 1:
            return np.full(out_size, 0.5 * (start + end) * (in_size - 1))
        return start * (in_size - 1) + x * (end - start) * (in_size - 1) / (length - 1)
    raise OpNotImplemented(f"coordinate_transformation_mode {mode!r} is not supported")


def _nearest(coords, rounding):
    if rounding == "round_prefer_floor":
        return np.ceil(coords - 0.5)
    if rounding == "round_prefer_ceil":
        return np.floor(coords + 0.5)
    if rounding == "floor":
        return np.floor(coords)
    if rounding == "ceil":
        return np.ceil(coords)
    raise OpNotImplemented(f"nearest_mode {rounding!r} is not supported")


def _cubic(t, a):
    """Keys' cubic convolution kernel with parameter ``a`` at distances ``t``."""
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def axis_weights(in_size, out_size, scale, attrs, roi=(0.0, 1.0)):
    """The ``(out_size, in_size)`` interpolation matrix of one axis and the mask of output positions that take
    ``extrapolation_value`` instead (``tf_crop_and_resize`` outside the crop). ``attrs`` holds ONNX's attribute
    names (``mode``, ``coordinate_transformation_mode``, ``nearest_mode``, ``cubic_coeff_a``, ``exclude_outside``,
    ``antialias``)."""
    mode = attrs["mode"]
    coords = source_coordinates(out_size, in_size, scale, attrs["coordinate_transformation_mode"], roi)
    outside = np.zeros(out_size, bool)
    if attrs["coordinate_transformation_mode"] == "tf_crop_and_resize":
        outside = (coords < 0) | (coords > in_size - 1)
    weights = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    if mode == "nearest":
        index = np.clip(_nearest(coords, attrs["nearest_mode"]), 0, in_size - 1).astype("int64")
        weights[rows, index] = 1.0
    else:
        stretch = 1.0 / scale if attrs.get("antialias") and scale < 1 else 1.0
        support = (1 if mode == "linear" else 2) * stretch
        base = np.floor(coords)
        exclude = bool(attrs.get("exclude_outside"))
        total = np.zeros(out_size)
        for offset in range(-math.ceil(support) + 1, math.ceil(support) + 1):
            tap = base + offset
            dist = (coords - tap) / stretch
            w = np.maximum(0.0, 1 - np.abs(dist)) if mode == "linear" else _cubic(dist, attrs["cubic_coeff_a"])
            if exclude:
                w = np.where((tap >= 0) & (tap <= in_size - 1), w, 0.0)
            total += w
            # taps past the border read the edge value
            np.add.at(weights, (rows, np.clip(tap, 0, in_size - 1).astype("int64")), w)
        if exclude or stretch != 1.0:
            weights /= np.where(total == 0, 1, total)[:, None]
    weights[outside] = 0.0
    return weights, outside


@register("dyn.image.resize_nd")
def resize_nd(attrs, data, size, scale, roi):
    """Resize each of ``attrs.axes`` of ``data`` in turn: the axis interpolation matrix applied along it."""
    size = [int(v) for v in np.asarray(size).reshape(-1)]
    scale = [float(v) for v in np.asarray(scale).reshape(-1)]
    roi = [float(v) for v in np.asarray(roi).reshape(-1)]
    if any(v < 0 for v in size):
        raise KilnError(f"dyn.image.resize_nd: size {size} has a negative entry")
    onnx_attrs = {"mode": attrs.method, "coordinate_transformation_mode": attrs.coordinate_transformation_mode,
                  "nearest_mode": attrs.rounding_method, "cubic_coeff_a": attrs.cubic_alpha,
                  "exclude_outside": attrs.cubic_exclude, "antialias": attrs.antialias}
    count = len(attrs.axes)
    nearest = attrs.method == "nearest"
    x = np.asarray(data) if nearest else np.asarray(data, "float64")
    for k, axis in enumerate(attrs.axes):
        weights, outside = axis_weights(x.shape[axis], size[k], scale[k], onnx_attrs, (roi[k], roi[count + k]))
        if nearest:  # a gather, so values that are not finite (or int64 beyond float64) pass unchanged
            x = np.take(x, weights.argmax(1), axis=axis)
        else:
            x = np.moveaxis(np.tensordot(weights, x, axes=([1], [axis])), 0, axis)
        if outside.any():
            shape = [1] * x.ndim
            shape[axis] = -1
            x = np.where(outside.reshape(shape), attrs.extrapolation_value, x)
    dtype = np.asarray(data).dtype
    if np.issubdtype(dtype, np.integer) and not nearest:
        info = np.iinfo(dtype)
        return np.clip(np.rint(x), info.min, info.max).astype(dtype)
    return x.astype(dtype)
