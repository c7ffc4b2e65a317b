"""Attribute records of the image operators beyond ``resize2d`` (``image.resize1d image.resize3d
nn.upsampling nn.upsampling3d``), with TVM's field names, order and defaults.

:mod:`kiln.relay.op.attrs` re-exports them; validation follows its rules (OpAttributeInvalid naming the field).
"""

from dataclasses import dataclass

from ...ir.attrs import Attrs
from .attrs import _int_tuple, _layouts, _size_tuple
from .attrs_nn import padding_n, spatial

_METHODS = ("nearest_neighbor", "linear", "cubic")
_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn",
          "tf_crop_and_resize")


def _resize_post_init(attrs, n):
    _size_tuple(attrs, "size", n)
    attrs._require(len(attrs.size) == n, "size", f"must have {n} values")
    object.__setattr__(attrs, "roi", tuple(float(v) for v in attrs.roi))
    attrs._require(attrs.method in _METHODS, "method", "must be nearest_neighbor, linear or cubic")
    attrs._require(attrs.coordinate_transformation_mode in _MODES, "coordinate_transformation_mode",
                   "is not a known mode")
    _layouts(attrs, "layout")


@dataclass(frozen=True, slots=True)
class Resize1DAttrs(Attrs):
    size: tuple
    roi: tuple = (0.0, 0.0)
    layout: str = "NCW"
    method: str = "linear"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = ""
    cubic_alpha: float = -0.5
    cubic_exclude: int = 0
    extrapolation_value: float = 0.0
    out_dtype: str = ""

    def __post_init__(self):
        _resize_post_init(self, 1)


@dataclass(frozen=True, slots=True)
class Resize3DAttrs(Attrs):
    size: tuple
    roi: tuple = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    layout: str = "NCDHW"
    method: str = "linear"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = ""
    cubic_alpha: float = -0.5
    cubic_exclude: int = 0
    extrapolation_value: float = 0.0
    out_dtype: str = ""

    def __post_init__(self):
        _resize_post_init(self, 3)


@dataclass(frozen=True, slots=True)
class UpSamplingAttrs(Attrs):
    scale_h: float = 1.0
    scale_w: float = 1.0
    layout: str = "NCHW"
    method: str = "nearest_neighbor"
    align_corners: bool = False

    def __post_init__(self):
        self._require(self.method in ("nearest_neighbor", "bilinear", "bicubic"), "method",
                      "must be nearest_neighbor, bilinear or bicubic")
        self._require(self.scale_h > 0 and self.scale_w > 0, "scale_h", "scales must be positive")
        _layouts(self, "layout")


@dataclass(frozen=True, slots=True)
class UpSampling3DAttrs(Attrs):
    scale_d: float = 1.0
    scale_h: float = 1.0
    scale_w: float = 1.0
    layout: str = "NCDHW"
    method: str = "nearest_neighbor"
    coordinate_transformation_mode: str = "half_pixel"

    def __post_init__(self):
        self._require(self.method in ("nearest_neighbor", "trilinear"), "method",
                      "must be nearest_neighbor or trilinear")
        self._require(self.coordinate_transformation_mode in _MODES, "coordinate_transformation_mode",
                      "is not a known mode")
        _layouts(self, "layout")


@dataclass(frozen=True, slots=True)
class ROIAlignAttrs(Attrs):
    pooled_size: tuple = ()
    spatial_scale: float = 1.0
    sample_ratio: int = -1
    layout: str = "NCHW"
    mode: str = "avg"

    def __post_init__(self):
        _int_tuple(self, "pooled_size", 2)
        self._require(len(self.pooled_size) == 2 and min(self.pooled_size) > 0, "pooled_size",
                      "must be 2 positive ints")
        self._require(self.layout in ("NCHW", "NHWC"), "layout", "must be NCHW or NHWC")
        self._require(self.mode in ("avg", "max"), "mode", "must be avg or max")


@dataclass(frozen=True, slots=True)
class ROIPoolAttrs(Attrs):
    pooled_size: tuple = ()
    spatial_scale: float = 1.0
    layout: str = "NCHW"

    def __post_init__(self):
        _int_tuple(self, "pooled_size", 2)
        self._require(len(self.pooled_size) == 2 and min(self.pooled_size) > 0, "pooled_size",
                      "must be 2 positive ints")
        self._require(self.layout == "NCHW", "layout", "must be NCHW (the layout kiln computes it in)")


@dataclass(frozen=True, slots=True)
class CropAndResizeAttrs(Attrs):
    crop_size: tuple = ()
    layout: str = "NCHW"
    method: str = "bilinear"
    extrapolation_value: float = 0.0
    out_dtype: str = ""

    def __post_init__(self):
        _int_tuple(self, "crop_size", 2)
        self._require(len(self.crop_size) == 2 and min(self.crop_size) > 0, "crop_size", "must be 2 positive ints")
        self._require(self.method in ("bilinear", "nearest_neighbor"), "method", "must be bilinear or nearest_neighbor")
        self._require(self.layout in ("NCHW", "NHWC"), "layout", "must be NCHW or NHWC")


@dataclass(frozen=True, slots=True)
class Dilation2DAttrs(Attrs):
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilations: tuple = (1, 1)
    data_layout: str = "NCHW"
    kernel_layout: str = "IHW"
    out_dtype: str = ""

    def __post_init__(self):
        for name in ("strides", "dilations"):
            value = getattr(self, name)
            if not isinstance(value, int) and len(value) == 4:
                # TVM reads the first two of four values, TensorFlow's NHWC form the middle two: taken only when
                # both readings agree
                self._require(value[0] == value[1] == value[2], name, "4 values must read the same as TVM's first "
                              "two and TensorFlow's middle two")
                object.__setattr__(self, name, tuple(value[1:3]))
            spatial(self, name, 2)
        padding_n(self, 2)
        self._require((self.data_layout, self.kernel_layout) in (("NCHW", "IHW"), ("NHWC", "HWI")), "data_layout",
                      "must be NCHW with kernel layout IHW or NHWC with HWI")


@dataclass(frozen=True, slots=True)
class DeformableConv2DAttrs(Attrs):
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    deformable_groups: int = 1
    groups: int = 1
    channels: int | None = None
    kernel_size: tuple | None = None
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    out_layout: str = ""
    out_dtype: str = ""

    def __post_init__(self):
        spatial(self, "strides", 2)
        spatial(self, "dilation", 2)
        padding_n(self, 2)
        if self.kernel_size is not None:
            spatial(self, "kernel_size", 2)
        self._require((self.data_layout, self.kernel_layout) in (("NCHW", "OIHW"), ("NHWC", "HWIO"))
                      and self.out_layout in ("", self.data_layout), "data_layout",
                      "must be NCHW with kernel layout OIHW or NHWC with HWIO (the layouts kiln computes it in)")
        self._require(self.groups >= 1, "groups", "must be positive")
        self._require(self.deformable_groups >= 1, "deformable_groups", "must be positive")


@dataclass(frozen=True, slots=True)
class AffineGridAttrs(Attrs):
    target_shape: tuple = ()

    def __post_init__(self):
        _int_tuple(self, "target_shape", 2)
        self._require(len(self.target_shape) == 2, "target_shape", "must be (height, width)")


@dataclass(frozen=True, slots=True)
class GridSampleAttrs(Attrs):
    method: str = "bilinear"
    layout: str = "NCHW"
    padding_mode: str = "zeros"
    align_corners: bool = True

    def __post_init__(self):
        self._require(self.method in ("bilinear", "nearest", "bicubic"), "method", "must be bilinear, nearest or "
                      "bicubic")
        self._require(self.layout in ("NCHW", "NCDHW"), "layout", "must be NCHW or NCDHW")
        self._require(self.layout == "NCHW" or self.method != "bicubic", "method", "bicubic needs 2-D (NCHW) data")
        self._require(self.padding_mode in ("zeros", "border", "reflection"), "padding_mode",
                      "must be zeros, border or reflection")
        object.__setattr__(self, "align_corners", bool(self.align_corners))


@dataclass(frozen=True, slots=True)
class YoloReorgAttrs(Attrs):
    stride: int = 1


@dataclass(frozen=True, slots=True)
class CorrelationAttrs(Attrs):
    kernel_size: int = 1
    max_displacement: int = 1
    stride1: int = 1
    stride2: int = 1
    padding: int = 0
    is_multiply: bool = True
    layout: str = "NCHW"

    def __post_init__(self):
        self._require(self.layout == "NCHW", "layout", "must be NCHW")
        self._require(self.kernel_size >= 1 and self.kernel_size % 2 == 1, "kernel_size", "must be a positive odd int")
        self._require(self.stride1 >= 1 and self.stride2 >= 1, "stride1", "strides must be positive")


@dataclass(frozen=True, slots=True)
class GetValidCountsAttrs(Attrs):
    """``score_threshold`` is TVM's unset field (the threshold is the operator's second argument); it has no
    default, so the text format shows it, as TVM's does."""

    score_threshold: float | None
    id_index: int = 0
    score_index: int = 1


@dataclass(frozen=True, slots=True)
class MultiBoxTransformLocAttrs(Attrs):
    clip: bool = True
    threshold: float = 0.01
    variances: tuple = (0.1, 0.1, 0.2, 0.2)
    keep_background: bool = False

    def __post_init__(self):
        object.__setattr__(self, "variances", tuple(float(v) for v in self.variances))
        self._require(len(self.variances) == 4, "variances", "must have 4 values")


@dataclass(frozen=True, slots=True)
class RegularNonMaximumSuppressionAttrs(Attrs):
    """TFLite's detection post-processing NMS (``vision.regular_non_max_suppression``): at most
    ``max_detections_per_class`` boxes per class, ``max_detections`` in all; ``num_classes`` excludes the background
    classes at the start of the scores' last axis."""

    max_detections_per_class: int = 0
    max_detections: int = 0
    num_classes: int = 0
    iou_threshold: float = 0.5
    score_threshold: float = 0.0

    def __post_init__(self):
        for name in ("max_detections_per_class", "max_detections", "num_classes"):
            self._require(isinstance(getattr(self, name), int) and getattr(self, name) >= 0, name,
                          "must be an int, not negative")
        for name in ("iou_threshold", "score_threshold"):
            object.__setattr__(self, name, float(getattr(self, name)))


@dataclass(frozen=True, slots=True)
class NonMaximumSuppressionAttrs(Attrs):
    force_suppress: bool = False
    top_k: int = -1
    coord_start: int = 2
    score_index: int = 1
    id_index: int = 0
    return_indices: bool = True
    invalid_to_bottom: bool = False

    def __post_init__(self):
        for name in ("force_suppress", "return_indices", "invalid_to_bottom"):
            object.__setattr__(self, name, bool(getattr(self, name)))
        for name in ("top_k", "coord_start", "score_index", "id_index"):
            self._require(isinstance(getattr(self, name), int), name, "must be an int")
        self._require(self.coord_start >= 0 and self.score_index >= 0, "coord_start",
                      "coord_start and score_index must not be negative")


@dataclass(frozen=True, slots=True)
class ProposalAttrs(Attrs):
    scales: tuple = (4.0, 8.0, 16.0, 32.0)
    ratios: tuple = (0.5, 1.0, 2.0)
    feature_stride: int = 16
    threshold: float = 0.7
    rpn_pre_nms_top_n: int = 6000
    rpn_post_nms_top_n: int = 300
    rpn_min_size: int = 16
    iou_loss: bool = False

    def __post_init__(self):
        object.__setattr__(self, "scales", tuple(float(v) for v in self.scales))
        object.__setattr__(self, "ratios", tuple(float(v) for v in self.ratios))
        object.__setattr__(self, "iou_loss", bool(self.iou_loss))
        self._require(len(self.scales) > 0 and len(self.ratios) > 0, "scales", "scales and ratios must not be empty")
        self._require(self.feature_stride > 0, "feature_stride", "must be positive")
        self._require(self.rpn_post_nms_top_n > 0, "rpn_post_nms_top_n", "must be positive")
