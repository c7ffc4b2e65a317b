"""Attribute records of the 1-D/3-D convolutions and poolings, the transposed convolutions and adaptive poolings of
:mod:`kiln.relay.op.nn_conv` and :mod:`kiln.relay.op.nn_pool`, with TVM's field names, order and defaults.

``padding`` is normalized to ``before + after`` (``2 * n`` values for ``n`` spatial axes) from one value (every side),
``n`` values (each axis on both sides) or ``2 * n``; ``strides``, ``dilation`` and ``pool_size`` to ``n`` values.
"""

from dataclasses import dataclass

from ...ir.attrs import Attrs
from .attrs import _layouts


def spatial(attrs, name, n, what="must be an int or {n} ints"):
    """Normalize ``attrs.name`` to ``n`` ints."""
    value = getattr(attrs, name)
    if isinstance(value, int):
        value = (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1 and n > 1:
        value = value * n
    attrs._require(len(value) == n, name, what.format(n=n))
    object.__setattr__(attrs, name, value)


def padding_n(attrs, n, name="padding"):
    """Normalize ``attrs.padding`` to ``2 * n`` ints: before on each axis, then after."""
    value = getattr(attrs, name)
    if isinstance(value, int):
        value = (value,)
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        value = value * (2 * n)
    elif len(value) == n:
        value = value * 2
    attrs._require(len(value) == 2 * n and all(v >= 0 for v in value), name,
                   f"must be 1, {n} or {2 * n} non-negative ints")
    object.__setattr__(attrs, name, value)


def _conv_post_init(attrs, n, transpose=False):
    spatial(attrs, "strides", n)
    spatial(attrs, "dilation", n)
    padding_n(attrs, n)
    if transpose:
        # TVM's relations and topi read only the first n entries (its tests pass (0, 0) to conv1d_transpose)
        value = attrs.output_padding
        if isinstance(value, tuple | list) and len(value) > n:
            object.__setattr__(attrs, "output_padding", tuple(value[:n]))
        spatial(attrs, "output_padding", n)
    if attrs.kernel_size is not None:
        spatial(attrs, "kernel_size", n)
    _layouts(attrs, "data_layout", "kernel_layout", "out_layout")
    attrs._require(all(s > 0 for s in attrs.strides), "strides", "must be positive")
    attrs._require(all(d > 0 for d in attrs.dilation), "dilation", "must be positive")
    attrs._require(isinstance(attrs.groups, int) and attrs.groups >= 1, "groups", "must be a positive int")


@dataclass(frozen=True, slots=True)
class Conv1DAttrs(Attrs):
    strides: tuple = (1,)
    padding: tuple = (0, 0)
    dilation: tuple = (1,)
    groups: int = 1
    channels: int | None = None
    kernel_size: tuple | None = None
    data_layout: str = "NCW"
    kernel_layout: str = "OIW"
    out_layout: str = ""
    out_dtype: str = ""

    def __post_init__(self):
        _conv_post_init(self, 1)


@dataclass(frozen=True, slots=True)
class Conv3DAttrs(Attrs):
    strides: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0, 0, 0, 0)
    dilation: tuple = (1, 1, 1)
    groups: int = 1
    channels: int | None = None
    kernel_size: tuple | None = None
    data_layout: str = "NCDHW"
    kernel_layout: str = "OIDHW"
    out_layout: str = ""
    out_dtype: str = ""

    def __post_init__(self):
        _conv_post_init(self, 3)


@dataclass(frozen=True, slots=True)
class Conv1DTransposeAttrs(Attrs):
    channels: int | None = None
    kernel_size: tuple | None = None
    strides: tuple = (1,)
    padding: tuple = (0, 0)
    output_padding: tuple = (0,)
    dilation: tuple = (1,)
    groups: int = 1
    data_layout: str = "NCW"
    kernel_layout: str = "IOW"
    out_layout: str = ""
    out_dtype: str = ""

    def __post_init__(self):
        _conv_post_init(self, 1, transpose=True)


@dataclass(frozen=True, slots=True)
class Conv2DTransposeAttrs(Attrs):
    channels: int | None = None
    kernel_size: tuple | None = None
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    output_padding: tuple = (0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    data_layout: str = "NCHW"
    kernel_layout: str = "IOHW"
    out_layout: str = ""
    out_dtype: str = ""

    def __post_init__(self):
        _conv_post_init(self, 2, transpose=True)


@dataclass(frozen=True, slots=True)
class Conv3DTransposeAttrs(Attrs):
    channels: int | None = None
    kernel_size: tuple | None = None
    strides: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0, 0, 0, 0)
    output_padding: tuple = (0, 0, 0)
    dilation: tuple = (1, 1, 1)
    groups: int = 1
    data_layout: str = "NCDHW"
    kernel_layout: str = "IODHW"
    out_layout: str = ""
    out_dtype: str = ""

    def __post_init__(self):
        _conv_post_init(self, 3, transpose=True)


def _pool_post_init(attrs, n):
    spatial(attrs, "pool_size", n)
    spatial(attrs, "strides", n)
    spatial(attrs, "dilation", n)
    padding_n(attrs, n)
    _layouts(attrs, "layout", "out_layout")
    attrs._require(all(k > 0 for k in attrs.pool_size), "pool_size", "must be positive")
    attrs._require(all(s > 0 for s in attrs.strides), "strides", "must be positive")
    object.__setattr__(attrs, "ceil_mode", bool(attrs.ceil_mode))


@dataclass(frozen=True, slots=True)
class MaxPool1DAttrs(Attrs):
    pool_size: tuple
    strides: tuple = (1,)
    dilation: tuple = (1,)
    padding: tuple = (0, 0)
    layout: str = "NCW"
    out_layout: str = ""
    ceil_mode: bool = False

    def __post_init__(self):
        _pool_post_init(self, 1)


@dataclass(frozen=True, slots=True)
class AvgPool1DAttrs(Attrs):
    pool_size: tuple
    strides: tuple = (1,)
    dilation: tuple = (1,)
    padding: tuple = (0, 0)
    layout: str = "NCW"
    out_layout: str = ""
    ceil_mode: bool = False
    count_include_pad: bool = False

    def __post_init__(self):
        _pool_post_init(self, 1)
        object.__setattr__(self, "count_include_pad", bool(self.count_include_pad))


@dataclass(frozen=True, slots=True)
class MaxPool3DAttrs(Attrs):
    pool_size: tuple
    strides: tuple = (1, 1, 1)
    dilation: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0, 0, 0, 0)
    layout: str = "NCDHW"
    out_layout: str = ""
    ceil_mode: bool = False

    def __post_init__(self):
        _pool_post_init(self, 3)


@dataclass(frozen=True, slots=True)
class AvgPool3DAttrs(Attrs):
    pool_size: tuple
    strides: tuple = (1, 1, 1)
    dilation: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0, 0, 0, 0)
    layout: str = "NCDHW"
    out_layout: str = ""
    ceil_mode: bool = False
    count_include_pad: bool = False

    def __post_init__(self):
        _pool_post_init(self, 3)
        object.__setattr__(self, "count_include_pad", bool(self.count_include_pad))


def _adaptive_post_init(attrs, n):
    if attrs.output_size is None:
        object.__setattr__(attrs, "output_size", ())
    if attrs.output_size:
        spatial(attrs, "output_size", n)
    attrs._require(all(s > 0 for s in attrs.output_size), "output_size", "must be positive")
    _layouts(attrs, "layout", "out_layout")


@dataclass(frozen=True, slots=True)
class AdaptivePool1DAttrs(Attrs):
    output_size: tuple | None = None
    layout: str = "NCW"
    out_layout: str = ""

    def __post_init__(self):
        _adaptive_post_init(self, 1)


@dataclass(frozen=True, slots=True)
class AdaptivePool2DAttrs(Attrs):
    output_size: tuple | None = None
    layout: str = "NCHW"
    out_layout: str = ""

    def __post_init__(self):
        _adaptive_post_init(self, 2)


@dataclass(frozen=True, slots=True)
class AdaptivePool3DAttrs(Attrs):
    output_size: tuple | None = None
    layout: str = "NCDHW"
    out_layout: str = ""

    def __post_init__(self):
        _adaptive_post_init(self, 3)


# ------------------------------------------------------------------------------------------------ other nn records
@dataclass(frozen=True, slots=True)
class PReluAttrs(Attrs):
    axis: int = 1


@dataclass(frozen=True, slots=True)
class SubPixelAttrs(Attrs):
    block_size: int = 1
    layout: str = "NCHW"
    mode: str = "DCR"

    def __post_init__(self):
        self._require(isinstance(self.block_size, int) and self.block_size >= 1, "block_size",
                      "must be a positive int")
        # TVM takes every mode but DCR as CRD; its own tests spell it CDR, so that spelling is accepted too
        self._require(self.mode in ("DCR", "CRD", "CDR"), "mode", "must be DCR or CRD")
        self._require(self.layout in ("NCHW", "NHWC"), "layout", "must be NCHW or NHWC")


@dataclass(frozen=True, slots=True)
class L2NormalizeAttrs(Attrs):
    eps: float = 0.0
    axis: tuple | None = None

    def __post_init__(self):
        if self.axis is not None:
            object.__setattr__(self, "axis", tuple(int(a) for a in self.axis))


@dataclass(frozen=True, slots=True)
class InstanceNormAttrs(Attrs):
    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True


@dataclass(frozen=True, slots=True)
class GroupNormAttrs(Attrs):
    num_groups: int = 0
    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True


@dataclass(frozen=True, slots=True)
class MirrorPadAttrs(Attrs):
    mode: str = "SYMMETRIC"
    pad_width: tuple = ()

    def __post_init__(self):
        self._require(self.mode in ("SYMMETRIC", "REFLECT"), "mode", "must be SYMMETRIC or REFLECT")
        object.__setattr__(self, "pad_width", tuple(tuple(int(v) for v in p) for p in self.pad_width))
        self._require(all(len(p) == 2 and min(p) >= 0 for p in self.pad_width), "pad_width",
                      "must be (before, after) pairs of non-negative ints")


@dataclass(frozen=True, slots=True)
class DilateAttrs(Attrs):
    strides: tuple = ()
    dilation_value: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "strides", tuple(int(s) for s in self.strides))
        self._require(all(s >= 1 for s in self.strides), "strides", "must be positive")


@dataclass(frozen=True, slots=True)
class SpaceToBatchNDAttrs(Attrs):
    block_shape: tuple = ()
    paddings: tuple = ()
    pad_value: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "block_shape", tuple(int(s) for s in self.block_shape))
        object.__setattr__(self, "paddings", tuple(tuple(int(v) for v in p) for p in self.paddings))
        self._require(all(s >= 1 for s in self.block_shape), "block_shape", "must be positive")
        self._require(len(self.paddings) == len(self.block_shape), "paddings", "must have a pair per block axis")


@dataclass(frozen=True, slots=True)
class BatchToSpaceNDAttrs(Attrs):
    block_shape: tuple = ()
    crops: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "block_shape", tuple(int(s) for s in self.block_shape))
        object.__setattr__(self, "crops", tuple(tuple(int(v) for v in p) for p in self.crops))
        self._require(all(s >= 1 for s in self.block_shape), "block_shape", "must be positive")
        self._require(len(self.crops) == len(self.block_shape), "crops", "must have a pair per block axis")


@dataclass(frozen=True, slots=True)
class NLLLossAttrs(Attrs):
    reduction: str = "mean"
    ignore_index: int = -100

    def __post_init__(self):
        self._require(self.reduction in ("mean", "sum", "none"), "reduction", "must be mean, sum or none")


# ------------------------------------------------------------------------------- Winograd and GEMM convolutions
def _tile_size(attrs):
    attrs._require(isinstance(attrs.tile_size, int) and attrs.tile_size > 0, "tile_size", "must be a positive int")


@dataclass(frozen=True, slots=True)
class Conv2DWinogradAttrs(Attrs):
    """``nn.contrib_conv2d_winograd_without_weight_transform``: ``Conv2DAttrs`` with the Winograd ``tile_size``
    (2 for F(2x2, 3x3), 4 for F(4x4, 3x3)); ``padding`` is ``(top, left, bottom, right)``."""

    tile_size: int
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
        _tile_size(self)
        _conv_post_init(self, 2)
        if self.channels is not None:
            object.__setattr__(self, "channels", int(self.channels))


@dataclass(frozen=True, slots=True)
class Conv3DWinogradAttrs(Attrs):
    """``nn.contrib_conv3d_winograd_without_weight_transform``: ``Conv3DAttrs`` with the Winograd ``tile_size``."""

    tile_size: int
    strides: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0, 0, 0, 0)
    dilation: tuple = (1, 1, 1)
    groups: int = 1
    channels: int | None = None
    kernel_size: tuple | None = None
    data_layout: str = "NCDHW"
    kernel_layout: str = "OIDHW"
    out_layout: str = ""
    out_dtype: str = ""

    def __post_init__(self):
        _tile_size(self)
        _conv_post_init(self, 3)
        if self.channels is not None:
            object.__setattr__(self, "channels", int(self.channels))


@dataclass(frozen=True, slots=True)
class ConvWinogradWeightTransformAttrs(Attrs):
    """The Winograd weight transforms' ``tile_size``."""

    tile_size: int

    def __post_init__(self):
        _tile_size(self)


@dataclass(frozen=True, slots=True)
class ConvGemmWeightTransformAttrs(Attrs):
    """``nn.contrib_conv2d_gemm_weight_transform``'s tile sizes along ``N`` (output channels) and ``K`` (kernel
    height x width x input channels). TVM before 0.10 called them ``tile_rows``/``tile_cols``: those read too."""

    tile_N: int  # noqa: N815 (TVM's field names)
    tile_K: int  # noqa: N815

    def __post_init__(self):
        for name in ("tile_N", "tile_K"):
            value = getattr(self, name)
            self._require(isinstance(value, int) and value > 0, name, "must be a positive int")

    @property
    def tile_rows(self):
        return self.tile_N

    @property
    def tile_cols(self):
        return self.tile_K
