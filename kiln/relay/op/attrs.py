"""Attribute records of Relay operators, with TVM's field names, order and defaults.

The printer shows the fields whose values differ from the default, in declaration order, as TVM does. Each record
normalizes lists to tuples and validates values on construction, raising OpAttributeInvalid naming the field.
"""

from dataclasses import dataclass, field

from ...error import OpAttributeInvalid
from ...ir.attrs import Attrs
from ...tir.layout import layout as parse_layout
from ...topi.nn.conv2d import pad_tuple


def _positive(attrs, *names):
    for name in names:
        values = getattr(attrs, name)
        attrs._require(all(isinstance(v, int) and v > 0 for v in values), name, "must be positive ints")


def _layouts(attrs, *names):
    for name in names:
        value = getattr(attrs, name)
        if value:
            try:
                parse_layout(value)
            except Exception as exc:  # KilnError from the layout parser, re-raised as an attribute error
                attrs._require(False, name, f"is not a valid layout ({exc})")


def _pad4(attrs):
    """Normalize ``padding`` to ``(top, left, bottom, right)`` (TVM's rule, shared with topi)."""
    try:
        object.__setattr__(attrs, "padding", pad_tuple(attrs.padding))
    except (OpAttributeInvalid, TypeError, ValueError):
        attrs._require(False, "padding", "must be 1, 2 or 4 non-negative ints")


def _int_tuple(attrs, name, size=None):
    value = getattr(attrs, name)
    if isinstance(value, int):
        value = (value,) * (size or 1)
    attrs._require(isinstance(value, tuple | list), name, "must be an int or a sequence of ints")
    try:
        ints = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        ints = None
    attrs._require(ints is not None, name, "must be an int or a sequence of ints")
    object.__setattr__(attrs, name, ints)


def _size_tuple(attrs, name, size):
    """``attrs.name`` as ``size`` output lengths: ints, or symbolic ``tir`` expressions (``te.var``; TVM's sizes are
    ``IndexExpr``), which the type relations carry into the result's shape."""
    from ...tir.expr import PrimExpr

    value = getattr(attrs, name)
    value = (value,) * size if isinstance(value, int | PrimExpr) else value
    attrs._require(isinstance(value, tuple | list), name, "must be an int or a sequence of ints")
    object.__setattr__(attrs, name, tuple(v if isinstance(v, PrimExpr) and not hasattr(v, "value") else int(v)
                                          for v in value))


@dataclass(frozen=True, slots=True)
class CastAttrs(Attrs):
    dtype: str

    def __post_init__(self):
        object.__setattr__(self, "dtype", str(self.dtype))


@dataclass(frozen=True, slots=True)
class ShapeOfAttrs(Attrs):
    dtype: str = "int32"

    def __post_init__(self):
        object.__setattr__(self, "dtype", str(self.dtype))


@dataclass(frozen=True, slots=True)
class ClipAttrs(Attrs):
    a_min: float
    a_max: float

    def __post_init__(self):
        object.__setattr__(self, "a_min", float(self.a_min))
        object.__setattr__(self, "a_max", float(self.a_max))
        self._require(self.a_min <= self.a_max, "a_max", f"must not be below a_min={self.a_min}")


@dataclass(frozen=True, slots=True)
class ReshapeAttrs(Attrs):
    newshape: tuple
    allowzero: int = 0

    def __post_init__(self):
        _int_tuple(self, "newshape")
        self._require(all(v >= -4 for v in self.newshape), "newshape", "entries must be >= -4")


@dataclass(frozen=True, slots=True)
class TransposeAttrs(Attrs):
    axes: tuple | None = field(default=None, metadata={"always_printed": True})  # TVM prints axes=None too

    def __post_init__(self):
        if self.axes is not None:
            _int_tuple(self, "axes")


@dataclass(frozen=True, slots=True)
class SqueezeAttrs(Attrs):
    axis: tuple | None = None

    def __post_init__(self):
        if self.axis is not None:
            _int_tuple(self, "axis")


@dataclass(frozen=True, slots=True)
class ExpandDimsAttrs(Attrs):
    axis: int
    num_newaxis: int = 1

    def __post_init__(self):
        self._require(isinstance(self.num_newaxis, int) and self.num_newaxis >= 0, "num_newaxis", "must be >= 0")


@dataclass(frozen=True, slots=True)
class ConcatenateAttrs(Attrs):
    axis: int = 0


@dataclass(frozen=True, slots=True)
class SplitAttrs(Attrs):
    indices_or_sections: object
    axis: int = 0

    def __post_init__(self):
        if not isinstance(self.indices_or_sections, int):
            _int_tuple(self, "indices_or_sections")
        else:
            self._require(self.indices_or_sections > 0, "indices_or_sections", "must be a positive number of sections")


@dataclass(frozen=True, slots=True)
class TakeAttrs(Attrs):
    batch_dims: int = 0
    axis: int | None = None
    mode: str = "clip"

    def __post_init__(self):
        self._require(self.mode in ("clip", "wrap", "fast"), "mode", "must be clip, wrap or fast")


@dataclass(frozen=True, slots=True)
class StridedSliceAttrs(Attrs):
    begin: tuple
    end: tuple
    strides: tuple | None = None
    axes: tuple | None = None
    slice_mode: str = "end"

    def __post_init__(self):
        _int_tuple(self, "begin")
        _int_tuple(self, "end")
        if self.strides is not None:
            _int_tuple(self, "strides")
            self._require(0 not in self.strides, "strides", "must not contain 0")
        if self.axes is not None:
            _int_tuple(self, "axes")
        self._require(self.slice_mode in ("end", "size"), "slice_mode", "must be 'end' or 'size'")


@dataclass(frozen=True, slots=True)
class ReduceAttrs(Attrs):
    axis: tuple | None = None
    keepdims: bool = False
    exclude: bool = False

    def __post_init__(self):
        if self.axis is not None:
            _int_tuple(self, "axis")
        object.__setattr__(self, "keepdims", bool(self.keepdims))
        object.__setattr__(self, "exclude", bool(self.exclude))


@dataclass(frozen=True, slots=True)
class ArgReduceAttrs(Attrs):
    axis: tuple | None = None
    keepdims: bool = False
    select_last_index: bool = False
    exclude: bool = False

    def __post_init__(self):
        if self.axis is not None:
            _int_tuple(self, "axis")
        for name in ("keepdims", "select_last_index", "exclude"):
            object.__setattr__(self, name, bool(getattr(self, name)))


@dataclass(frozen=True, slots=True)
class InitOpAttrs(Attrs):
    shape: tuple
    dtype: str = "float32"

    def __post_init__(self):
        _int_tuple(self, "shape")
        self._require(all(d >= 0 for d in self.shape), "shape", "must not contain negative sizes")


@dataclass(frozen=True, slots=True)
class LayoutTransformAttrs(Attrs):
    src_layout: str
    dst_layout: str

    def __post_init__(self):
        _layouts(self, "src_layout", "dst_layout")


@dataclass(frozen=True, slots=True)
class Conv2DAttrs(Attrs):
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    channels: int | None = None
    kernel_size: tuple | None = None
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    out_layout: str = ""
    out_dtype: str = ""

    def __post_init__(self):
        _int_tuple(self, "strides", 2)
        _int_tuple(self, "dilation", 2)
        _pad4(self)
        self._require(min(self.padding) >= 0, "padding", "must be 1, 2 or 4 non-negative ints")
        self._require(len(self.strides) == 2, "strides", "must have 2 values")
        self._require(len(self.dilation) == 2, "dilation", "must have 2 values")
        _positive(self, "strides", "dilation")
        self._require(isinstance(self.groups, int) and self.groups >= 1, "groups", "must be a positive int")
        if self.kernel_size is not None:
            _int_tuple(self, "kernel_size", 2)
            self._require(len(self.kernel_size) == 2, "kernel_size", "must have 2 values")
        if self.channels is not None:
            object.__setattr__(self, "channels", int(self.channels))
        _layouts(self, "data_layout", "kernel_layout", "out_layout")


@dataclass(frozen=True, slots=True)
class BiasAddAttrs(Attrs):
    axis: int = 1


@dataclass(frozen=True, slots=True)
class LeakyReluAttrs(Attrs):
    alpha: float = 0.01

    def __post_init__(self):
        object.__setattr__(self, "alpha", float(self.alpha))


@dataclass(frozen=True, slots=True)
class MaxPool2DAttrs(Attrs):
    pool_size: tuple
    strides: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    layout: str = "NCHW"
    out_layout: str = ""
    ceil_mode: bool = False

    def __post_init__(self):
        _pool_post_init(self)


@dataclass(frozen=True, slots=True)
class AvgPool2DAttrs(Attrs):
    pool_size: tuple
    strides: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    layout: str = "NCHW"
    out_layout: str = ""
    ceil_mode: bool = False
    count_include_pad: bool = False

    def __post_init__(self):
        _pool_post_init(self)
        object.__setattr__(self, "count_include_pad", bool(self.count_include_pad))


def _pool_post_init(attrs):
    _int_tuple(attrs, "pool_size", 2)
    _int_tuple(attrs, "strides", 2)
    _int_tuple(attrs, "dilation", 2)
    _pad4(attrs)
    for name in ("pool_size", "strides", "dilation"):
        attrs._require(len(getattr(attrs, name)) == 2, name, "must have 2 values")
    attrs._require(min(attrs.padding) >= 0, "padding", "must be 1, 2 or 4 non-negative ints")
    _positive(attrs, "pool_size", "strides", "dilation")
    object.__setattr__(attrs, "ceil_mode", bool(attrs.ceil_mode))
    _layouts(attrs, "layout", "out_layout")


@dataclass(frozen=True, slots=True)
class GlobalPool2DAttrs(Attrs):
    layout: str = "NCHW"
    out_layout: str = ""

    def __post_init__(self):
        _layouts(self, "layout", "out_layout")


@dataclass(frozen=True, slots=True)
class DenseAttrs(Attrs):
    units: int | None = None
    out_dtype: str = ""


@dataclass(frozen=True, slots=True)
class DensePackAttrs(Attrs):
    units: int | None = None
    out_dtype: str = ""
    weight_layout: str = "NC"

    def __post_init__(self):
        _layouts(self, "weight_layout")


@dataclass(frozen=True, slots=True)
class MatmulAttrs(Attrs):
    units: int | None = None
    out_dtype: str = ""
    transpose_a: bool = False
    transpose_b: bool = False


@dataclass(frozen=True, slots=True)
class BatchMatmulAttrs(Attrs):
    out_dtype: str = ""
    transpose_a: bool = False
    transpose_b: bool = True


@dataclass(frozen=True, slots=True)
class BatchNormAttrs(Attrs):
    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True

    def __post_init__(self):
        object.__setattr__(self, "epsilon", float(self.epsilon))


@dataclass(frozen=True, slots=True)
class LayerNormAttrs(Attrs):
    axis: int = -1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True

    def __post_init__(self):
        object.__setattr__(self, "epsilon", float(self.epsilon))


@dataclass(frozen=True, slots=True)
class SoftmaxAttrs(Attrs):
    axis: int = -1


@dataclass(frozen=True, slots=True)
class DropoutAttrs(Attrs):
    rate: float = 0.5

    def __post_init__(self):
        object.__setattr__(self, "rate", float(self.rate))
        self._require(0.0 <= self.rate < 1.0, "rate", "must be in [0, 1)")


@dataclass(frozen=True, slots=True)
class PadAttrs(Attrs):
    pad_width: tuple
    pad_mode: str = "constant"

    def __post_init__(self):
        object.__setattr__(self, "pad_width", tuple(tuple(int(v) for v in pair) for pair in self.pad_width))
        self._require(all(len(p) == 2 for p in self.pad_width), "pad_width", "must hold (before, after) per axis")
        self._require(self.pad_mode in ("constant", "edge", "reflect"), "pad_mode", "must be constant, edge or reflect")


@dataclass(frozen=True, slots=True)
class LRNAttrs(Attrs):
    size: int = 5
    axis: int = 1
    bias: float = 2.0
    alpha: float = 1e-5
    beta: float = 0.75

    def __post_init__(self):
        for name in ("bias", "alpha", "beta"):
            object.__setattr__(self, name, float(getattr(self, name)))
        self._require(self.size > 0, "size", "must be positive")


@dataclass(frozen=True, slots=True)
class Resize2DAttrs(Attrs):
    size: tuple
    roi: tuple = (0.0, 0.0, 0.0, 0.0)
    layout: str = "NCHW"
    method: str = "linear"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = ""
    cubic_alpha: float = -0.5
    cubic_exclude: int = 0
    extrapolation_value: float = 0.0
    out_dtype: str = ""

    def __post_init__(self):
        _size_tuple(self, "size", 2)
        object.__setattr__(self, "roi", tuple(float(v) for v in self.roi))
        self._require(len(self.size) == 2, "size", "must have 2 values")
        self._require(self.method in ("nearest_neighbor", "linear", "cubic"), "method",
                      "must be nearest_neighbor, linear or cubic")
        self._require(
            self.coordinate_transformation_mode in ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                                                    "tf_half_pixel_for_nn", "tf_crop_and_resize"),
            "coordinate_transformation_mode", "is not a known mode")
        _layouts(self, "layout")


# the records of the data-movement and sorting operators live in their own module (re-exported here)
from .attrs_array import (  # noqa: E402, F401
    ArangeAttrs,
    CollapseSumToAttrs,
    EinsumAttrs,
    MeshgridAttrs,
    NdarraySizeAttrs,
    ReshapeLikeAttrs,
    ReverseSequenceAttrs,
    SearchSortedAttrs,
    SequenceMaskAttrs,
    SliceLikeAttrs,
    SparseToDenseAttrs,
    StackAttrs,
    TriluAttrs,
    VarianceAttrs,
)
from .attrs_image import Resize1DAttrs, Resize3DAttrs, UpSampling3DAttrs, UpSamplingAttrs  # noqa: E402, F401
from .attrs_random import MultinomialAttrs, NormalAttrs, ThreefryGenerateAttrs, UniformAttrs  # noqa: E402, F401
from .attrs_transform import (  # noqa: E402, F401
    ArgsortAttrs,
    GatherAttrs,
    GatherNDAttrs,
    OneHotAttrs,
    RepeatAttrs,
    ReverseAttrs,
    ScanopAttrs,
    ScatterElementsAttrs,
    ScatterNDAttrs,
    TileAttrs,
    TopKAttrs,
    UniqueAttrs,
)
