"""Converters of ONNX Resize and Upsample.

ONNX resizing is separable: each resized axis is interpolated on its own, and because shapes are static the
sampling positions and weights along an axis are numbers known while converting. They are computed here from the
ONNX definition (:func:`axis_weights`): the source coordinate of every output index from
``coordinate_transformation_mode`` and the axis scale (the given ``scales``, or ``out / in`` for ``sizes``, or the
common ratio of ``keep_aspect_ratio_policy``), then the taps and weights of nearest, linear or cubic interpolation
(edge values repeat past the borders; ``exclude_outside`` drops outside taps; ``antialias`` stretches the
linear/cubic kernel by ``1 / scale`` when shrinking; ``tf_crop_and_resize`` fills positions outside the crop with
``extrapolation_value``).

The Relay form is then chosen per case:

* nearest: a ``take`` of the source indices along each resized axis (exact for every rounding mode and dtype);
* linear and cubic on the H and W axes of NCHW data, when ``image.resize2d`` computes exactly these positions
  (coordinate modes it knows, scale ``out / in``, no antialias): ``image.resize2d``;
* otherwise a constant interpolation matrix per axis applied with ``nn.dense``.

Nearest-neighbour ``Upsample`` by whole factors is ``repeat`` along each axis.
"""

import math

import numpy as np

from ....error import OpNotImplemented
from ....ir.type import is_any
from ... import op as _op
from ...op import image as _image
from ...op import nn as _nn
from . import dynamic
from .common import OnnxOpConverter, const, register

_RESIZE2D_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn")


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
    ``extrapolation_value`` instead (``tf_crop_and_resize`` outside the crop)."""
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


def _along(vector, ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return vector.reshape(shape)


def _apply_axis(x, axis, weights, outside, attrs, ctx):
    """Interpolate ``x`` along ``axis`` with ``weights`` (see the module docstring)."""
    dtype, ndim = ctx.dtype(x), ctx.ndim(x)
    if attrs["mode"] == "nearest":
        out = _op.take(x, const(weights.argmax(1), "int64"), axis=axis)
    else:
        work = dtype if dtype.startswith("float") else "float32"
        moved = x if axis == ndim - 1 else _op.transpose(x, [a for a in range(ndim) if a != axis] + [axis])
        moved = moved if work == dtype else _op.cast(moved, work)
        out = _nn.dense(moved, const(weights, work))
        if axis != ndim - 1:
            out = _op.transpose(out, list(range(axis)) + [ndim - 1] + list(range(axis, ndim - 1)))
        if work != dtype:
            out = _op.cast(_op.floor(_op.add(out, const(0.5, work))), dtype)
    if outside.any():
        fill = const(attrs["extrapolation_value"], dtype)
        out = _op.where(const(_along(outside, ndim, axis), "bool"), fill, out)
    return out


def resize(x, out_shape, scales, attrs, ctx, roi=None):
    """Resize ``x`` to ``out_shape``; ``scales`` gives the coordinate scale of each axis."""
    shape = ctx.shape(x)
    if attrs["mode"] not in ("nearest", "linear", "cubic"):
        raise ctx.error(f"unknown mode {attrs['mode']!r}")
    axes = [a for a in range(len(shape)) if out_shape[a] != shape[a] or (
        scales[a] != 1.0 or attrs["coordinate_transformation_mode"] == "tf_crop_and_resize")]
    if not axes:
        return x
    if _fits_resize2d(shape, out_shape, scales, axes, attrs):
        return _image.resize2d(
            x, out_shape[2:], layout="NCHW", method=attrs["mode"],
            coordinate_transformation_mode=attrs["coordinate_transformation_mode"], cubic_alpha=attrs["cubic_coeff_a"],
            cubic_exclude=attrs["exclude_outside"])
    for axis in axes:
        span = (0.0, 1.0) if roi is None else (float(roi[axis]), float(roi[len(shape) + axis]))
        weights, outside = axis_weights(shape[axis], out_shape[axis], scales[axis], attrs, span)
        x = _apply_axis(x, axis, weights, outside, attrs, ctx)
    return x


def _fits_resize2d(shape, out_shape, scales, axes, attrs):
    """Whether ``image.resize2d`` computes exactly ONNX's linear/cubic result."""
    return (attrs["mode"] != "nearest" and len(shape) == 4 and set(axes) <= {2, 3}
            and attrs["coordinate_transformation_mode"] in _RESIZE2D_MODES and not attrs.get("antialias")
            and all(scales[a] == out_shape[a] / shape[a] for a in (2, 3)))


def _scaled(size, scale, ctx):
    """``floor(size * scale)``; a size known only at run time (``relay.Any``) stays one when its scale is 1."""
    if is_any(size):
        if scale != 1.0:
            raise ctx.error(f"resizing a dimension known only at run time by {scale} is not supported",
                            OpNotImplemented)
        return size
    return int(math.floor(size * scale))


def _per_axis(values, count, what, ctx):
    """``values`` as a list, checked to hold ``count`` of them (one per resized axis)."""
    values = list(values)
    if len(values) != count:
        raise ctx.error(f"{what} has {len(values)} values for {count} axes")
    return values


def _resize_attrs(attr, defaults):
    attrs = dict(defaults)
    attrs.update({k: v for k, v in attr.items() if k in defaults})
    return attrs


_RESIZE_DEFAULTS = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel", "cubic_coeff_a": -0.75,
                    "exclude_outside": 0, "extrapolation_value": 0.0, "nearest_mode": "round_prefer_floor",
                    "antialias": 0}


@register("Resize")
class Resize(OnnxOpConverter):
    """Nearest, linear or cubic resizing (see the module docstring)."""

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        x = inputs[0]
        scales = [float(s) for s in _per_axis(ctx.value(inputs[1], "scales").reshape(-1), len(ctx.shape(x)),
                                              "scales", ctx)]
        attrs = _resize_attrs(attr, dict(_RESIZE_DEFAULTS, coordinate_transformation_mode="asymmetric",
                                         nearest_mode="floor"))
        out = [_scaled(d, s, ctx) for d, s in zip(ctx.shape(x), scales, strict=True)]
        return resize(x, out, scales, attrs, ctx)

    @classmethod
    def _impl_v11(cls, inputs, attr, ctx):
        x = inputs[0]
        shape = ctx.shape(x)
        ndim = len(shape)
        attrs = _resize_attrs(attr, _RESIZE_DEFAULTS)
        axes = [ctx.axis(a, ndim, "axes") for a in attr.get("axes", range(ndim))]
        run_time = [i for i in (2, 3) if len(inputs) > i and inputs[i] is not None and 0 not in ctx.shape(inputs[i])
                    and ctx.value_or_none(inputs[i], "scales" if i == 2 else "sizes") is None]
        if run_time:
            if attr.get("keep_aspect_ratio_policy", "stretch") != "stretch":
                raise ctx.error("sizes known only at run time with keep_aspect_ratio_policy "
                                f"{attr['keep_aspect_ratio_policy']!r} are not supported", OpNotImplemented)
            return cls._dynamic(x, inputs[run_time[0]], run_time[0] == 3, axes, attrs, ctx)
        roi = ctx.optional_value(inputs, 1, "roi")
        scales_in = ctx.optional_value(inputs, 2, "scales")
        sizes_in = ctx.optional_value(inputs, 3, "sizes")
        scales, out = [1.0] * ndim, list(shape)
        if sizes_in is not None and sizes_in.size:
            sizes = [int(s) for s in _per_axis(sizes_in.reshape(-1), len(axes), "sizes", ctx)]
            policy = attr.get("keep_aspect_ratio_policy", "stretch")
            ratios = [s / shape[a] for s, a in zip(sizes, axes, strict=True)]
            if policy != "stretch":
                ratio = min(ratios) if policy == "not_larger" else max(ratios)
                ratios = [ratio] * len(axes)
                sizes = [int(math.floor(shape[a] * ratio + 0.5)) for a in axes]
            for a, s, r in zip(axes, sizes, ratios, strict=True):
                out[a], scales[a] = s, r
        elif scales_in is not None and scales_in.size:
            for a, s in zip(axes, _per_axis(scales_in.reshape(-1), len(axes), "scales", ctx), strict=True):
                scales[a], out[a] = float(s), _scaled(shape[a], float(s), ctx)
        else:
            raise ctx.error("needs scales or sizes")
        if roi is not None and roi.size:
            full = [0.0] * ndim + [1.0] * ndim
            for i, a in enumerate(axes):
                full[a], full[ndim + a] = roi.reshape(-1)[i], roi.reshape(-1)[len(axes) + i]
            roi = full
        else:
            roi = None
        return resize(x, out, scales, attrs, ctx, roi)


    @staticmethod
    def _dynamic(x, given, is_sizes, axes, attrs, ctx):
        """Resize to sizes (or by scales) known only at run time: ``dyn.image.resize2d`` of the H x W plane of an
        NCHW tensor."""
        what = "sizes" if is_sizes else "scales"
        ndim = ctx.ndim(x)
        if ndim != 4 or attrs.get("antialias") or attr_roi_mode(attrs):
            raise ctx.error(f"{what} known only at run time are supported for 4-D NCHW data without antialias or "
                            f"tf_crop_and_resize", OpNotImplemented)
        resize2d = ctx.dynamic_op("dyn.image.resize2d", what)
        values, count = dynamic.vector(given, ctx, what) if is_sizes else (given, int(np.prod(ctx.shape(given))))
        if count != len(axes):
            raise ctx.error(f"{what} has {count} values for {len(axes)} axes")
        if axes != list(range(ndim)):
            if sorted(axes) != [2, 3]:
                raise ctx.error(f"{what} known only at run time must resize axes 2 and 3", OpNotImplemented)
            start = 0
        else:
            start = 2
        flat = values if is_sizes else _op.cast(_op.reshape(given, (count,)), "float32")
        pair = _op.strided_slice(flat, [start], [start + 2])
        if axes == [3, 2]:
            pair = _op.reverse(pair, 0)
        if is_sizes:
            size = pair
        else:
            plane = _op.cast(_op.strided_slice(_op.shape_of(x, "int64"), [2], [4]), "float32")
            size = _op.cast(_op.floor(_op.multiply(plane, pair)), "int64")
        method = {"nearest": "nearest_neighbor"}.get(attrs["mode"], attrs["mode"])
        return resize2d(x, size, layout="NCHW", method=method,
                        coordinate_transformation_mode=attrs["coordinate_transformation_mode"],
                        rounding_method=attrs["nearest_mode"], cubic_alpha=attrs["cubic_coeff_a"],
                        cubic_exclude=attrs["exclude_outside"], extrapolation_value=attrs["extrapolation_value"])


def attr_roi_mode(attrs) -> bool:
    """Whether the resize reads its region of interest (``tf_crop_and_resize``)."""
    return attrs["coordinate_transformation_mode"] == "tf_crop_and_resize"


@register("Upsample")
class Upsample(OnnxOpConverter):
    """Upsampling by ``scales`` (attribute in opset 7, input from 9) with asymmetric coordinates: ``repeat`` for
    whole nearest factors."""

    @classmethod
    def _impl_v7(cls, inputs, attr, ctx):
        return cls._upsample(inputs[0], attr["scales"], attr, ctx)

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        scales = ctx.value_or_none(inputs[1], "scales")
        if scales is None:  # known only at run time: Resize's dynamic form
            mode = {"bilinear": "linear"}.get(attr.get("mode", "nearest"), attr.get("mode", "nearest"))
            attrs = dict(_RESIZE_DEFAULTS, mode=mode, coordinate_transformation_mode="asymmetric",
                         nearest_mode="floor")
            return Resize._dynamic(inputs[0], inputs[1], False, list(range(ctx.ndim(inputs[0]))), attrs, ctx)
        return cls._upsample(inputs[0], scales.reshape(-1), attr, ctx)

    @staticmethod
    def _upsample(x, scales, attr, ctx):
        mode = {"bilinear": "linear"}.get(attr.get("mode", "nearest"), attr.get("mode", "nearest"))
        scales = [float(s) for s in _per_axis(scales, len(ctx.shape(x)), "scales", ctx)]
        if mode == "nearest" and all(s == int(s) and s >= 1 for s in scales):
            for axis, s in enumerate(scales):
                if s != 1:
                    x = _op.repeat(x, int(s), axis)
            return x
        attrs = dict(_RESIZE_DEFAULTS, mode=mode, coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        out = [_scaled(d, s, ctx) for d, s in zip(ctx.shape(x), scales, strict=True)]
        return resize(x, out, scales, attrs, ctx)


@register("RoiAlign")
class RoiAlign(OnnxOpConverter):
    """Average of bilinear samples over each output bin of each region: ``vision.roi_align`` of the regions with
    their batch indices prepended (``half_pixel`` shifts them by half a pixel). ONNX's ``max`` mode takes the
    maximum of the four weighted corners of each sample, which ``vision.roi_align`` does not compute."""

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        return cls._convert(inputs, attr, ctx, "output_half_pixel")

    @classmethod
    def _impl_v16(cls, inputs, attr, ctx):
        return cls._convert(inputs, attr, ctx, attr.get("coordinate_transformation_mode", "half_pixel"))

    @classmethod
    def _convert(cls, inputs, attr, ctx, mode):
        x, rois, batch = inputs[0], inputs[1], inputs[2]
        if attr.get("mode", "avg") != "avg":
            raise ctx.error("RoiAlign mode max (ONNX's maximum of weighted corners) is not supported",
                            OpNotImplemented)
        scale = float(attr.get("spatial_scale", 1.0))
        dtype = ctx.dtype(x)
        if mode == "half_pixel":
            rois = _op.subtract(rois, const(0.5 / scale, dtype))
        boxes = _op.concatenate([_op.expand_dims(_op.cast(batch, dtype), 1), rois], 1)
        size = (int(attr.get("output_height", 1)), int(attr.get("output_width", 1)))
        return _op.vision.roi_align(x, boxes, size, scale, int(attr.get("sampling_ratio", 0)))


@register("GridSample")
class GridSample(OnnxOpConverter):
    """Sample the images at the normalized positions of a grid ``(N, H, W, 2)``: ``image.grid_sample`` of the grid
    moved to ``(N, 2, H, W)`` (2-D images; linear or nearest)."""

    @classmethod
    def _impl_v16(cls, inputs, attr, ctx):
        x, grid = inputs[0], inputs[1]
        mode = {"linear": "bilinear", "cubic": "bicubic"}.get(attr.get("mode", "bilinear"), attr.get("mode",
                                                                                                    "bilinear"))
        if ctx.ndim(x) != 4 or mode not in ("bilinear", "nearest"):
            raise ctx.error(f"GridSample of {ctx.ndim(x)}-D data in mode {mode} is not supported (2-D images, "
                            "bilinear or nearest)", OpNotImplemented)
        return _image.grid_sample(x, _op.transpose(grid, (0, 3, 1, 2)), "bilinear" if mode == "bilinear" else
                                  "nearest", "NCHW", attr.get("padding_mode", "zeros"),
                                  bool(attr.get("align_corners", 0)))


@register("NonMaxSuppression")
class NonMaxSuppression(OnnxOpConverter):
    """The ``(batch, class, box)`` int64 indices of the boxes kept per batch and class, as TVM's frontend builds
    them: ``vision.all_class_non_max_suppression`` (ONNX output format) gives the indices padded and their count,
    which a run-time slice keeps (``center_point_box=1`` boxes are converted to corners first)."""

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        nms = ctx.dynamic_op("vision.all_class_non_max_suppression", "the number of boxes kept")
        boxes, scores = inputs[0], inputs[1]
        if attr.get("center_point_box", 0):
            center, size = _op.split(boxes, [2], axis=2)
            half = _op.divide(size, const(2, ctx.dtype(boxes)))
            boxes = _op.concatenate([_op.subtract(center, half), _op.add(center, half)], 2)
            # ONNX's corners are (y1, x1, y2, x2); a center box is (x, y, w, h)
            boxes = _op.take(boxes, const([1, 0, 3, 2], "int64"), axis=2)
        optional = [inputs[i] if len(inputs) > i and inputs[i] is not None else None for i in (2, 3, 4)]
        count = const(0, "int64") if optional[0] is None else _op.reshape(_op.cast(optional[0], "int64"), ())
        iou = const(0.0, "float32") if optional[1] is None else _op.reshape(optional[1], ())
        floor = const(float(np.finfo("float32").min), "float32") if optional[2] is None else \
            _op.reshape(optional[2], ())
        selected, total = nms(boxes, scores, count, iou, floor, output_format="onnx")
        return dynamic.strided_slice(selected, const([0], "int64"), _op.reshape(_op.cast(total, "int64"), (1,)),
                                     np.array([0]), None, ctx)
