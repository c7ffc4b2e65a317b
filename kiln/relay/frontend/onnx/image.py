"""Converters of ONNX Resize and Upsample.

ONNX resizing is separable: each resized axis is interpolated on its own. When the scales (or sizes) and the shape
are known while converting, the sampling positions and weights along an axis are numbers computed here from the
ONNX definition (:func:`~kiln.relay.reference.resize_onnx.axis_weights`, with the axis scale: the given ``scales``,
or ``out / in`` for ``sizes``, or the common ratio of ``keep_aspect_ratio_policy``), and the Relay form is chosen per
case:

* nearest: a ``take`` of the source indices along each resized axis (exact for every rounding mode and dtype);
* linear and cubic on the H and W axes of NCHW data, when ``image.resize2d`` computes exactly these positions
  (coordinate modes it knows, scale ``out / in``, no antialias): ``image.resize2d``;
* otherwise a constant interpolation matrix per axis applied with ``nn.dense``.

When ``scales``, ``sizes`` or ``roi`` is known only at run time, the node is ``dyn.image.resize_nd`` of the
resized axes, given the output lengths (ONNX's ``floor(in * scale)``, or the sizes, rounded by
``keep_aspect_ratio_policy``) and the coordinate scales, both computed in the graph (:meth:`Resize._dynamic`).

Nearest-neighbour ``Upsample`` by whole factors is ``repeat`` along each axis.
"""

import math

import numpy as np

from ....error import OpNotImplemented
from ....ir.type import is_any
from ... import op as _op
from ...op import image as _image
from ...op import nn as _nn
from ...reference.resize_onnx import axis_weights
from . import dynamic
from .common import OnnxOpConverter, const, register

_RESIZE2D_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn")


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
_V10_DEFAULTS = dict(_RESIZE_DEFAULTS, coordinate_transformation_mode="asymmetric", nearest_mode="floor")


def _given(inputs, index, ctx):
    """``inputs[index]`` when that optional input is present and not empty, else None."""
    if len(inputs) <= index or inputs[index] is None or 0 in ctx.shape(inputs[index]):
        return None
    return inputs[index]


def _crops(attrs) -> bool:
    """Whether the resize reads its region of interest (``tf_crop_and_resize``)."""
    return attrs["coordinate_transformation_mode"] == "tf_crop_and_resize"


@register("Resize")
class Resize(OnnxOpConverter):
    """Nearest, linear or cubic resizing (see the module docstring)."""

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        return cls._convert(inputs[0], None, inputs[1], None, None, _resize_attrs(attr, _V10_DEFAULTS), ctx)

    @classmethod
    def _impl_v11(cls, inputs, attr, ctx):
        x = inputs[0]
        ndim = ctx.ndim(x)
        attrs = _resize_attrs(attr, _RESIZE_DEFAULTS)
        attrs["keep_aspect_ratio_policy"] = attr.get("keep_aspect_ratio_policy", "stretch")
        axes = [ctx.axis(a, ndim, "axes") for a in attr.get("axes", range(ndim))]
        roi = _given(inputs, 1, ctx) if _crops(attrs) else None
        return cls._convert(x, roi, _given(inputs, 2, ctx), _given(inputs, 3, ctx), axes, attrs, ctx)

    @classmethod
    def _convert(cls, x, roi, scales, sizes, axes, attrs, ctx):
        """Resize ``axes`` (all when None) of ``x`` by ``scales`` or to ``sizes`` (Relay expressions, one of them
        None): with constant weights when the values and the resized lengths are known, else
        :meth:`_dynamic`."""
        shape = ctx.shape(x)
        ndim = len(shape)
        axes = list(range(ndim)) if axes is None else axes
        if scales is None and sizes is None:
            raise ctx.error("needs scales or sizes")
        values = [None if e is None else ctx.value_or_none(e, what)
                  for e, what in ((roi, "roi"), (scales, "scales"), (sizes, "sizes"))]
        if any(e is not None and v is None for e, v in zip((roi, scales, sizes), values, strict=True)):
            return cls._dynamic(x, roi, scales, sizes, axes, attrs, ctx)
        roi_in, scales_in, sizes_in = values
        factors, out = [1.0] * ndim, list(shape)
        if sizes_in is not None:
            sizes = [int(s) for s in _per_axis(sizes_in.reshape(-1), len(axes), "sizes", ctx)]
            if any(is_any(shape[a]) for a in axes):  # the ratios need the input lengths
                return cls._dynamic(x, roi, None, const(sizes, "int64"), axes, attrs, ctx)
            ratios = [s / shape[a] for s, a in zip(sizes, axes, strict=True)]
            policy = attrs.get("keep_aspect_ratio_policy", "stretch")
            if policy != "stretch":
                ratio = min(ratios) if policy == "not_larger" else max(ratios)
                ratios = [ratio] * len(axes)
                sizes = [int(math.floor(shape[a] * ratio + 0.5)) for a in axes]
            for a, s, r in zip(axes, sizes, ratios, strict=True):
                out[a], factors[a] = s, r
        else:
            scaled = [float(s) for s in _per_axis(scales_in.reshape(-1), len(axes), "scales", ctx)]
            if any(is_any(shape[a]) and s != 1.0 for a, s in zip(axes, scaled, strict=True)):
                return cls._dynamic(x, roi, scales, None, axes, attrs, ctx)
            for a, s in zip(axes, scaled, strict=True):
                factors[a] = s
                out[a] = shape[a] if is_any(shape[a]) else int(math.floor(shape[a] * s))
        full_roi = None
        if roi_in is not None:
            flat = _per_axis(roi_in.reshape(-1), 2 * len(axes), "roi", ctx)
            full_roi = [0.0] * ndim + [1.0] * ndim
            for i, a in enumerate(axes):
                full_roi[a], full_roi[ndim + a] = flat[i], flat[len(axes) + i]
        return resize(x, out, factors, attrs, ctx, full_roi)

    @staticmethod
    def _dynamic(x, roi, scales, sizes, axes, attrs, ctx):
        """``dyn.image.resize_nd`` of ``axes``, for scales, sizes or a region of interest known only at run time
        (or lengths of ``x`` that are): the output lengths and coordinate scales computed in the graph as ONNX
        defines them (``floor(in * scale)`` for scales; for sizes the scale ``size / in``, or with
        ``keep_aspect_ratio_policy`` the smallest (``not_larger``) or largest (``not_smaller``) of them for every
        axis and lengths ``round(in * scale)``), in float64 as ONNX's reference computes them."""
        resize_nd = ctx.dynamic_op("dyn.image.resize_nd", "sizes" if sizes is not None else "scales")
        count = len(axes)
        lengths = _op.cast(_op.take(_op.shape_of(x, "int64"), const(axes, "int64")), "float64")
        if sizes is not None:
            size, n = dynamic.vector(sizes, ctx, "sizes")
            _per_axis(range(n), count, "sizes", ctx)
            scale = _op.divide(_op.cast(size, "float64"), lengths)
            policy = attrs.get("keep_aspect_ratio_policy", "stretch")
            if policy not in ("stretch", "not_larger", "not_smaller"):
                raise ctx.error(f"unknown keep_aspect_ratio_policy {policy!r}")
            if policy != "stretch":
                ratio = _op.min(scale) if policy == "not_larger" else _op.max(scale)
                scale = _op.multiply(ratio, const(np.ones(count), "float64"))
                size = _op.cast(_op.floor(_op.add(_op.multiply(scale, lengths), const(0.5, "float64"))), "int64")
        else:
            _per_axis(range(int(np.prod(ctx.shape(scales)))), count, "scales", ctx)
            scale = _op.cast(_op.reshape(scales, (count,)), "float64")
            size = _op.cast(_op.floor(_op.multiply(scale, lengths)), "int64")
        if roi is not None:
            _per_axis(range(int(np.prod(ctx.shape(roi)))), 2 * count, "roi", ctx)
            roi = _op.cast(_op.reshape(roi, (2 * count,)), "float64")
        elif _crops(attrs):
            roi = const([0.0] * count + [1.0] * count, "float64")
        return resize_nd(x, size, scale, axes, roi, method=attrs["mode"],
                         coordinate_transformation_mode=attrs["coordinate_transformation_mode"],
                         rounding_method=attrs["nearest_mode"], cubic_alpha=attrs["cubic_coeff_a"],
                         cubic_exclude=attrs["exclude_outside"], antialias=attrs["antialias"],
                         extrapolation_value=attrs["extrapolation_value"])


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
            return Resize._convert(inputs[0], None, inputs[1], None, None, dict(_V10_DEFAULTS, mode=mode), ctx)
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
        return Resize._convert(x, None, const(scales, "float32"), None, None, dict(_V10_DEFAULTS, mode=mode), ctx)


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


@register("AffineGrid")
class AffineGrid(OnnxOpConverter):
    """The sampling grid of affine matrices ``theta`` (``(N, 2, 3)`` or ``(N, 3, 4)``) over an output of ``size``
    (``[N, C, H, W]`` or ``[N, C, D, H, W]``): the homogeneous coordinates ``(x, [y, [z]], 1)`` of every output
    position, each axis spanning ``[-1, 1]`` (cell centres without ``align_corners``), times ``theta``. ``size``
    known while converting gives the coordinates as a constant; known only at run time (it decides the output
    shape), they are computed from it: a run-time ``arange`` per axis, broadcast against each other, and a
    ``dyn.reshape`` to ``(N, ..., 2 or 3)``."""

    @classmethod
    def _impl_v20(cls, inputs, attr, ctx):
        theta, size = inputs[0], inputs[1]
        align = bool(attr.get("align_corners", 0))
        dtype, count = ctx.dtype(theta), int(np.prod(ctx.shape(size)))
        if count not in (4, 5) or ctx.ndim(theta) != 3:
            raise ctx.error(f"size must hold 4 or 5 values and theta be (N, 2, 3) or (N, 3, 4), got {count} values "
                            f"and theta {ctx.shape(theta)}")
        spatial = count - 2
        value = ctx.value_or_none(size, "size")
        if value is not None:
            sizes = [int(v) for v in value.reshape(-1)]
            axes = [_grid_axis(n, align) for n in sizes[2:]]
            mesh = np.meshgrid(*axes, indexing="ij")
            base = np.stack([*mesh[::-1], np.ones_like(mesh[0])], -1).reshape(-1, spatial + 1)
            points = const(base.astype(dtype), dtype)
            shape = [sizes[0], *sizes[2:], spatial]
        else:
            points, shape = cls._run_time_points(size, spatial, align, dtype, ctx)
        # each position's coordinates times each batch's matrix: (N, positions, spatial)
        return _op.reshape(_op.einsum([points, theta], "pk,njk->npj"), shape)

    @staticmethod
    def _run_time_points(size, spatial, align, dtype, ctx):
        """The ``(positions, spatial + 1)`` homogeneous coordinates for a ``size`` known only at run time, and the
        result's shape as an int64 tensor."""
        flat, _ = dynamic.vector(size, ctx, "size")
        lengths = [_op.reshape(_op.strided_slice(flat, [k], [k + 1]), ()) for k in range(2, 2 + spatial)]
        coords = []
        for k, n in enumerate(lengths):
            nf = _op.cast(n, dtype)
            i = dynamic.arange(const(0.0, dtype), nf, const(1.0, dtype), dtype, ctx)
            one, two = const(1.0, dtype), const(2.0, dtype)
            if align:  # -1 + 2i / (n - 1); a single position is -1
                c = _op.where(_op.equal(n, const(1, "int64")), _op.multiply(i, const(0.0, dtype)),
                              _op.divide(_op.multiply(two, i), _op.subtract(nf, one)))
            else:  # -1 + (2i + 1) / n: the cell centres
                c = _op.divide(_op.add(_op.multiply(two, i), one), nf)
            shape = [1] * spatial
            shape[k] = -1
            coords.append(_op.reshape(_op.subtract(c, one), shape))
        zero = coords[0]
        for c in coords[1:]:
            zero = _op.add(_op.multiply(zero, const(0.0, dtype)), _op.multiply(c, const(0.0, dtype)))
        grids = [_op.add(c, zero) for c in coords]
        ones = _op.add(zero, const(1.0, dtype))
        points = _op.reshape(_op.stack([*grids[::-1], ones], spatial), (-1, spatial + 1))
        shape = _op.concatenate([_op.strided_slice(flat, [0], [1]), _op.strided_slice(flat, [2], [2 + spatial]),
                                 const([spatial], "int64")], 0)
        return points, shape


def _grid_axis(n, align):
    """ONNX's coordinates of ``n`` positions along one axis of the grid."""
    i = np.arange(n, dtype="float64")
    if align:
        return np.full(n, -1.0) if n == 1 else -1 + 2 * i / (n - 1)
    return -1 + (2 * i + 1) / n
