"""Attribute records of the array operators of :mod:`kiln.relay.op.array`, :mod:`kiln.relay.op.like` and
``variance`` (``stack arange meshgrid reshape_like slice_like collapse_sum_to trilu sequence_mask reverse_sequence
ndarray_size matrix_set_diag searchsorted sparse_to_dense einsum``), with TVM's field names, order and defaults.

:mod:`kiln.relay.op.attrs` re-exports them; validation follows its rules (OpAttributeInvalid naming the field).
"""

from dataclasses import dataclass

from ...ir.attrs import Attrs
from .attrs import _int_tuple


@dataclass(frozen=True, slots=True)
class StackAttrs(Attrs):
    axis: int = 0


@dataclass(frozen=True, slots=True)
class ArangeAttrs(Attrs):
    """TVM keeps ``start``/``stop``/``step`` as the constant expressions they were built from; kiln keeps their
    values (the call still takes them as its three arguments)."""

    start: float = 0.0
    stop: float | None = None
    step: float = 1.0
    dtype: str = "float32"

    def __post_init__(self):
        self._require(self.step != 0, "step", "must not be 0")
        object.__setattr__(self, "dtype", str(self.dtype))


@dataclass(frozen=True, slots=True)
class MeshgridAttrs(Attrs):
    indexing: str = "ij"

    def __post_init__(self):
        self._require(self.indexing in ("ij", "xy"), "indexing", "must be 'ij' or 'xy'")


@dataclass(frozen=True, slots=True)
class ReshapeLikeAttrs(Attrs):
    lhs_begin: int = 0
    lhs_end: int | None = None
    rhs_begin: int = 0
    rhs_end: int | None = None


@dataclass(frozen=True, slots=True)
class SliceLikeAttrs(Attrs):
    axes: tuple | None = None

    def __post_init__(self):
        if self.axes is not None:
            _int_tuple(self, "axes")


@dataclass(frozen=True, slots=True)
class CollapseSumToAttrs(Attrs):
    """TVM's ``InitOpAttrs`` of ``collapse_sum_to``: the target shape."""

    shape: tuple = ()

    def __post_init__(self):
        _int_tuple(self, "shape")


@dataclass(frozen=True, slots=True)
class TriluAttrs(Attrs):
    upper: bool = True

    def __post_init__(self):
        object.__setattr__(self, "upper", bool(self.upper))


@dataclass(frozen=True, slots=True)
class SequenceMaskAttrs(Attrs):
    mask_value: float = 0.0
    axis: int = 0


@dataclass(frozen=True, slots=True)
class ReverseSequenceAttrs(Attrs):
    seq_axis: int = 1
    batch_axis: int = 0


@dataclass(frozen=True, slots=True)
class NdarraySizeAttrs(Attrs):
    dtype: str = "int32"


@dataclass(frozen=True, slots=True)
class MatrixSetDiagAttrs(Attrs):
    k1: int = 0
    k2: int = 0
    super_diag_right_align: bool = False
    sub_diag_right_align: bool = False

    def __post_init__(self):
        self._require(self.k1 <= self.k2, "k1", "must not exceed k2")


@dataclass(frozen=True, slots=True)
class SearchSortedAttrs(Attrs):
    right: bool = False
    dtype: str = "int32"

    def __post_init__(self):
        object.__setattr__(self, "right", bool(self.right))


@dataclass(frozen=True, slots=True)
class SparseToDenseAttrs(Attrs):
    output_shape: tuple = ()

    def __post_init__(self):
        _int_tuple(self, "output_shape")
        self._require(all(d >= 0 for d in self.output_shape), "output_shape", "must not contain negative sizes")


@dataclass(frozen=True, slots=True)
class EinsumAttrs(Attrs):
    equation: str = ""


@dataclass(frozen=True, slots=True)
class VarianceAttrs(Attrs):
    axis: tuple | None = None
    keepdims: bool = False
    exclude: bool = False
    unbiased: bool = False

    def __post_init__(self):
        if self.axis is not None:
            _int_tuple(self, "axis")
        for name in ("keepdims", "exclude", "unbiased"):
            object.__setattr__(self, name, bool(getattr(self, name)))


@dataclass(frozen=True, slots=True)
class SlidingWindowAttrs(Attrs):
    axis: int = 0
    window_shape: tuple = ()
    strides: tuple = ()

    def __post_init__(self):
        _int_tuple(self, "window_shape")
        _int_tuple(self, "strides")
        self._require(len(self.window_shape) == len(self.strides), "strides", "must have one value per window axis")


@dataclass(frozen=True, slots=True)
class StftAttrs(Attrs):
    n_fft: int = 0
    hop_length: int = 0
    win_length: int = 0
    normalized: bool = False
    onesided: bool = True

    def __post_init__(self):
        self._require(self.n_fft > 0 and self.hop_length > 0 and self.win_length > 0, "n_fft",
                      "n_fft, hop_length and win_length must be positive")


@dataclass(frozen=True, slots=True)
class DFTAttrs(Attrs):
    inverse: bool = False


@dataclass(frozen=True, slots=True)
class FixedPointMultiplyAttrs(Attrs):
    multiplier: int = 0
    shift: int = 0


@dataclass(frozen=True, slots=True)
class FIFOBufferAttrs(Attrs):
    axis: int = 0


@dataclass(frozen=True, slots=True)
class MultiBoxPriorAttrs(Attrs):
    sizes: tuple = (1.0,)
    ratios: tuple = (1.0,)
    steps: tuple = (-1.0, -1.0)
    offsets: tuple = (0.5, 0.5)
    clip: bool = False

    def __post_init__(self):
        for name in ("sizes", "ratios", "steps", "offsets"):
            object.__setattr__(self, name, tuple(float(v) for v in getattr(self, name)))


@dataclass(frozen=True, slots=True)
class SparseDenseAttrs(Attrs):
    sparse_lhs: bool = False

    def __post_init__(self):
        object.__setattr__(self, "sparse_lhs", bool(self.sparse_lhs))


@dataclass(frozen=True, slots=True)
class SparseConv2DAttrs(Attrs):
    """``layout`` of the data (NHWC or NCHW) and the square ``kernel_size`` (1x1 or 3x3)."""

    layout: str = "NHWC"
    kernel_size: tuple = (1, 1)

    def __post_init__(self):
        _int_tuple(self, "kernel_size", 2)
        self._require(self.layout in ("NHWC", "NCHW"), "layout", "must be NHWC or NCHW")
        self._require(self.kernel_size in ((1, 1), (3, 3)), "kernel_size", "must be 1x1 or 3x3")


@dataclass(frozen=True, slots=True)
class SparseTransposeAttrs(Attrs):
    """``nn.sparse_transpose`` has no attributes (TVM registers an empty record)."""


@dataclass(frozen=True, slots=True)
class DebugAttrs(Attrs):
    debug_func: object = None


@dataclass(frozen=True, slots=True)
class FixedPointMultiplyPerAxisAttrs(Attrs):
    is_lshift_required: bool = False
    is_rshift_required: bool = False
    axes: tuple = ()

    def __post_init__(self):
        _int_tuple(self, "axes")
