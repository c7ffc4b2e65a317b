"""TIR nodes for iteration domains and reductions, the ones tensor expressions build: ``Range``, ``IterVar``,
``CommReducer``, ``Reduce`` and ``ProducerLoad`` (re-exported by :mod:`kiln.tir.expr`, where TVM keeps them).
"""

from dataclasses import dataclass, field
from enum import IntEnum

from ..error import TIRError
from ..ir.node import DEF, IGNORE, Node
from . import dtype as _dt
from .expr import EqualOp, PrimExpr, Var, _set
from .expr_op import ExprOp, convert


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ProducerLoad(PrimExpr):
    """``producer[indices]`` of a tensor not yet bound to a buffer (a TE tensor before lowering)."""

    producer: object
    indices: tuple
    dtype: str = field(init=False)

    def __post_init__(self):
        _set(self, "indices", tuple(convert(i) for i in self.indices))
        _set(self, "dtype", _dt.normalize(self.producer.dtype))


@dataclass(frozen=True, slots=True, eq=False, init=False, repr=False)
class Range(Node):
    """The integer range ``[min, min + extent)`` (TVM's ``ir.Range``): ``Range(end)`` or ``Range(begin, end)``.

    Fields are ``min`` and ``extent``; :meth:`from_min_extent` builds one from them directly.
    """

    min: PrimExpr
    extent: PrimExpr
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    type_key = "ir.Range"

    def __init__(self, begin, end=None, span=None):
        from .op import subtract

        if end is None:
            begin, end = 0, begin
        if not isinstance(begin, PrimExpr) and isinstance(end, PrimExpr | EqualOp):
            end = convert(end)
            begin = convert(begin, end.dtype)
        else:
            begin = convert(begin)
            end = convert(end, begin.dtype)
        self._init(begin, subtract(end, begin), span)

    def _init(self, min_value, extent, span):
        _set(self, "min", min_value)
        _set(self, "extent", extent)
        _set(self, "span", span)

    @staticmethod
    def from_min_extent(min_value, extent, span=None) -> "Range":
        """The range ``[min_value, min_value + extent)``."""
        extent = convert(extent)
        rng = object.__new__(Range)
        rng._init(convert(min_value, extent.dtype), extent, span)
        return rng

    @classmethod
    def __from_json__(cls, fields):
        return cls.from_min_extent(fields["min"], fields["extent"], fields.get("span"))

    def with_fields(self, **changes):
        if all(getattr(self, k) is v for k, v in changes.items()):
            return self
        fields = {"min": self.min, "extent": self.extent, "span": self.span, **changes}
        return Range.from_min_extent(fields["min"], fields["extent"], fields["span"])

    def __str__(self):
        return f"Range(min={self.min}, extent={self.extent})"

    __repr__ = __str__


class IterVarType(IntEnum):
    """Kinds of iteration variable (TVM's values)."""

    DataPar = 0
    ThreadIndex = 1
    CommReduce = 2
    Ordered = 3
    DimInfo = 4
    Unrolled = 5
    Vectorized = 6
    Parallelized = 7
    Tensorized = 8


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IterVar(ExprOp, Node):
    """An iteration variable with its domain: a loop axis of a TE compute or a reduction axis.

    Used in arithmetic, an IterVar stands for its ``var``.
    """

    # TVM's IterVar.DataPar ... constants, as class attributes (not fields)
    DataPar, ThreadIndex, CommReduce, Ordered = (IterVarType.DataPar, IterVarType.ThreadIndex,
                                                 IterVarType.CommReduce, IterVarType.Ordered)
    DimInfo, Unrolled, Vectorized, Parallelized, Tensorized = (
        IterVarType.DimInfo, IterVarType.Unrolled, IterVarType.Vectorized, IterVarType.Parallelized,
        IterVarType.Tensorized)

    dom: Range
    var: Var = field(metadata=DEF)
    iter_type: IterVarType = IterVarType.DataPar
    thread_tag: str = ""
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    def __post_init__(self):
        if isinstance(self.dom, tuple | list):  # (begin, end), as TVM's IterVar constructor takes it
            if len(self.dom) != 2:
                raise TIRError(f"tir.IterVar: a domain given as a sequence must be (begin, end), got {self.dom}")
            begin, end = convert(self.dom[0]), convert(self.dom[1])
            _set(self, "dom", Range.from_min_extent(begin, end - begin))
        if isinstance(self.var, str):
            _set(self, "var", Var(self.var, self.dom.extent.dtype if self.dom is not None else "int32"))
        _set(self, "iter_type", IterVarType(self.iter_type))

    @property
    def dtype(self):
        return self.var.dtype

    def __str__(self):
        return f"IterVar({self.var.name_hint}, {self.dom}, {self.iter_type.name})"

    __repr__ = __str__


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class CommReducer(Node):
    """A commutative reducer: ``result`` combines ``lhs`` and ``rhs``; ``identity_element`` starts the reduction."""

    lhs: tuple = field(metadata=DEF)
    rhs: tuple = field(metadata=DEF)
    result: tuple
    identity_element: tuple
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    def __post_init__(self):
        for name in ("lhs", "rhs", "result", "identity_element"):
            _set(self, name, tuple(convert(v) for v in getattr(self, name)))

    def __call__(self, lhs, rhs):
        """Apply the reducer to values (substituting lhs/rhs)."""
        from .stmt_functor import substitute

        vmap = {**dict(zip(self.lhs, lhs, strict=True)), **dict(zip(self.rhs, rhs, strict=True))}
        return tuple(substitute(r, vmap) for r in self.result)


@dataclass(frozen=True, slots=True, eq=False, init=False, repr=False)
class Reduce(PrimExpr):
    """A reduction of ``source`` over the ``axis`` IterVars with ``combiner`` (what ``te.sum`` builds).

    Built as in TVM, ``Reduce(combiner, source, axis, condition, value_index, init=())``; the fields are declared
    axis first, because structural equality must meet the axes (which bind their variables) before the source.
    """

    combiner: CommReducer
    axis: tuple = field(metadata=DEF)
    source: tuple = ()
    condition: PrimExpr = None
    value_index: int = 0
    init: tuple = ()
    dtype: str = field(init=False)

    def __init__(self, combiner, source, axis, condition=None, value_index=0, init=(), span=None):
        _set(self, "combiner", combiner)
        _set(self, "source", tuple(convert(s) for s in source))
        _set(self, "axis", tuple(axis))
        _set(self, "init", tuple(convert(s) for s in init))
        _set(self, "condition", convert(True) if condition is None else convert(condition))
        _set(self, "value_index", int(value_index))
        _set(self, "span", span)
        _set(self, "dtype", self.source[self.value_index].dtype)
