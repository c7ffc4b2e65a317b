"""Attribute records of the data-movement and sorting operators (``tile repeat reverse gather gather_nd one_hot
cumsum cumprod topk argsort scatter_elements scatter_nd``), with TVM's field names, order and defaults.

:mod:`kiln.relay.op.attrs` re-exports them; validation follows its rules (OpAttributeInvalid naming the field).
"""

from dataclasses import dataclass

from ...ir.attrs import Attrs
from .attrs import _int_tuple


@dataclass(frozen=True, slots=True)
class TileAttrs(Attrs):
    reps: tuple

    def __post_init__(self):
        _int_tuple(self, "reps")
        self._require(all(r >= 0 for r in self.reps), "reps", "must not be negative")


@dataclass(frozen=True, slots=True)
class RepeatAttrs(Attrs):
    repeats: int
    axis: int

    def __post_init__(self):
        self._require(isinstance(self.repeats, int) and self.repeats >= 1, "repeats", "must be a positive int")


@dataclass(frozen=True, slots=True)
class ReverseAttrs(Attrs):
    axis: int


@dataclass(frozen=True, slots=True)
class GatherAttrs(Attrs):
    axis: int


@dataclass(frozen=True, slots=True)
class GatherNDAttrs(Attrs):
    batch_dims: int = 0
    index_rank: int | None = None


@dataclass(frozen=True, slots=True)
class OneHotAttrs(Attrs):
    depth: int
    axis: int = -1
    dtype: str = "float32"

    def __post_init__(self):
        self._require(isinstance(self.depth, int) and self.depth >= 0, "depth", "must be a non-negative int")
        object.__setattr__(self, "dtype", str(self.dtype))


@dataclass(frozen=True, slots=True)
class ScanopAttrs(Attrs):
    axis: int | None = None
    dtype: str = ""
    exclusive: bool = False

    def __post_init__(self):
        object.__setattr__(self, "exclusive", bool(self.exclusive))


@dataclass(frozen=True, slots=True)
class TopKAttrs(Attrs):
    k: int
    axis: int = -1
    ret_type: str = "both"
    is_ascend: bool = False
    dtype: str = "int32"

    def __post_init__(self):
        self._require(self.ret_type in ("both", "values", "indices"), "ret_type", "must be both, values or indices")
        object.__setattr__(self, "is_ascend", bool(self.is_ascend))


@dataclass(frozen=True, slots=True)
class ArgsortAttrs(Attrs):
    axis: int = -1
    is_ascend: bool = True
    dtype: str = "int32"

    def __post_init__(self):
        object.__setattr__(self, "is_ascend", bool(self.is_ascend))
        object.__setattr__(self, "dtype", str(self.dtype))


@dataclass(frozen=True, slots=True)
class ScatterElementsAttrs(Attrs):
    axis: int = 0
    reduction: str = "update"

    def __post_init__(self):
        self._require(self.reduction in ("update", "add", "mul", "min", "max", "mean"), "reduction",
                      "must be update, add, mul, min, max or mean")


@dataclass(frozen=True, slots=True)
class ScatterNDAttrs(Attrs):
    mode: str = "update"

    def __post_init__(self):
        self._require(self.mode in ("update", "add", "mul", "min", "max"), "mode",
                      "must be update, add, mul, min or max")


@dataclass(frozen=True, slots=True)
class UniqueAttrs(Attrs):
    """``unique``: whether the unique values come sorted (else in order of first occurrence), and whether the
    counts are returned."""

    sorted: bool = True
    return_counts: bool = False

    def __post_init__(self):
        object.__setattr__(self, "sorted", bool(self.sorted))
        object.__setattr__(self, "return_counts", bool(self.return_counts))
