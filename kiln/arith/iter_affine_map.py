"""Affine iterator maps (TVM's ``tvm.arith.iter_affine_map``): index expressions recognized as sums of splits of the
loop iterators, so that schedules and layout transforms can tell whether a set of indices is a bijective (or at
least surjective) image of the loop nest, divide it into an outer and an inner subspace, or invert it.

The form has three nodes:

* ``IterMark(source, extent)``: ``source`` (a variable, or an ``IterSumExpr`` of other marks) is an iterator over
  ``[0, extent)``;
* ``IterSplitExpr(source, lower_factor, extent, scale)``: ``floormod(floordiv(source, lower_factor), extent) *
  scale``, one digit of a mark;
* ``IterSumExpr(args, base)``: ``sum(args) + base``.

This module holds the nodes, the conversion back to plain expressions (``normalize_iter_map_to_expr``) and the
public functions; the detection itself is :mod:`kiln.arith.iter_map_rewriter` (with its fusion of sums in
:mod:`kiln.arith.iter_map_fuse`), the subspace division and the inverse :mod:`kiln.arith.iter_map_divide`.
"""

import enum
from dataclasses import dataclass, field

from ..error import TIRError
from ..ir.node import IGNORE, Node
from ..runtime.object import Object
from ..tir import expr as E
from ..tir import op as _op


def _const(value, dtype):
    return value if isinstance(value, E.PrimExpr) else _op.const(value, dtype)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IterMapExpr(E.PrimExpr):
    """Base of the iterator-map expressions (:class:`IterSplitExpr`, :class:`IterSumExpr`)."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IterMark(Node):
    """``source`` marked as an iterator over ``[0, extent)``.

    Examples
    --------
    >>> x = tir.Var("x", "int32")
    >>> IterMark(x, 8)
    IterMark(x, extent=8)
    """

    source: E.PrimExpr
    extent: E.PrimExpr
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    type_key = "arith.IterMark"

    def __post_init__(self):
        source = E.convert(self.source)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "extent", _const(self.extent, source.dtype))

    def __str__(self):
        return f"IterMark({self.source}, extent={self.extent})"

    __repr__ = __str__


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IterSplitExpr(IterMapExpr):
    """``floormod(floordiv(source, lower_factor), extent) * scale`` of the mark ``source``.

    Examples
    --------
    >>> m = IterMark(tir.Var("x", "int32"), 24)
    >>> str(normalize_iter_map_to_expr(IterSplitExpr(m, 4, 6, 1)))
    'x // 4'
    """

    source: IterMark
    lower_factor: E.PrimExpr
    extent: E.PrimExpr
    scale: E.PrimExpr
    dtype: str = field(init=False)

    type_key = "arith.IterSplitExpr"

    def __post_init__(self):
        if not isinstance(self.source, IterMark):
            raise TIRError(f"arith.IterSplitExpr: the source must be an IterMark, got {type(self.source).__name__}")
        dtype = self.source.source.dtype
        object.__setattr__(self, "dtype", dtype)
        for name in ("lower_factor", "extent", "scale"):
            object.__setattr__(self, name, _const(getattr(self, name), dtype))

    def __str__(self):
        return (f"IterSplit({self.source}, lower_factor={self.lower_factor}, extent={self.extent}, "
                f"scale={self.scale})")

    __repr__ = __str__


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IterSumExpr(IterMapExpr):
    """``sum(args) + base``; each argument an :class:`IterSplitExpr`.

    Examples
    --------
    >>> m = IterMark(tir.Var("x", "int32"), 8)
    >>> str(normalize_iter_map_to_expr(IterSumExpr([IterSplitExpr(m, 1, 8, 2)], 1)))
    'x * 2 + 1'
    """

    args: tuple
    base: E.PrimExpr
    dtype: str = field(init=False)

    type_key = "arith.IterSumExpr"

    def __post_init__(self):
        args = tuple(self.args)
        for a in args:
            if not isinstance(a, IterSplitExpr):
                raise TIRError(f"arith.IterSumExpr: each argument must be an IterSplitExpr, got {type(a).__name__}")
        object.__setattr__(self, "args", args)
        base = self.base
        if not isinstance(base, E.PrimExpr):
            base = _op.const(base, args[0].dtype) if args else E.convert(base)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "dtype", base.dtype)

    def __str__(self):
        return f"IterSum([{', '.join(str(a) for a in self.args)}], {self.base})"

    __repr__ = __str__


class IterMapLevel(enum.IntEnum):
    """How much :func:`detect_iter_map` checks (TVM's ``arith.IterMapLevel``)."""

    Bijective = 0
    Surjective = 1
    NoCheck = 3

    @staticmethod
    def from_str(name):
        """The level named ``"bijective"``, ``"surjective"`` or ``"nocheck"`` (None is NoCheck)."""
        if name is None:
            return IterMapLevel.NoCheck
        levels = {"bijective": IterMapLevel.Bijective, "surjective": IterMapLevel.Surjective,
                  "nocheck": IterMapLevel.NoCheck}
        level = levels.get(str(name).lower())
        if level is None:
            raise TIRError(f"arith.IterMapLevel: unknown check level {name!r} (expected one of {sorted(levels)})")
        return level


def _level(check_level):
    if isinstance(check_level, str) or check_level is None:
        return IterMapLevel.from_str(check_level)
    return IterMapLevel(int(check_level))


class IterMapResult(Object):
    """What :func:`detect_iter_map` found: ``indices`` (the IterSumExprs, empty when detection failed),
    ``errors`` (why it failed) and ``padding_predicate`` (true on the padding iterations it introduced)."""

    __slots__ = ("errors", "indices", "padding_predicate")

    def __init__(self, indices=(), errors=(), padding_predicate=None):
        self.indices = list(indices)
        self.errors = list(errors)
        self.padding_predicate = _op.const(False) if padding_predicate is None else padding_predicate


# ---- back to plain expressions
class IterMapToExpr:
    """Turns iterator-map expressions back into plain expressions (TVM's IterMapToExprNormalizer): a split that is
    its whole mark is the source times the scale; the top digit a ``floordiv``; any other a ``floordiv`` of a
    ``floormod``."""

    def __init__(self, analyzer):
        self.ana = analyzer

    def convert(self, expr):
        if isinstance(expr, IterSplitExpr):
            return self.split(expr)
        if isinstance(expr, IterSumExpr):
            return self.sum(expr)
        if not isinstance(expr, E.PrimExpr):
            return expr
        # any other expression (a padding predicate): its iterator-map operands converted
        changes = {}
        for name, value in expr.fields().items():
            if isinstance(value, E.PrimExpr):
                new = self.convert(value)
                if new is not value:
                    changes[name] = new
        return expr.with_fields(**changes) if changes else expr

    def sum(self, expr):
        res = _op.const(0, expr.dtype)
        for arg in expr.args:
            res = _op.add(res, self.split(arg))
        return _op.add(res, expr.base)

    def split(self, expr):
        source = self.convert(expr.source.source)
        mark_extent = expr.source.extent
        if _op.is_const_int(expr.lower_factor, 1) and self.ana.can_prove(_op.equal(expr.extent, mark_extent)):
            return _op.multiply(source, expr.scale)
        if self.ana.can_prove(_op.equal(mark_extent, _op.multiply(expr.lower_factor, expr.extent))):
            # a unit split of a longer mark is always 0; a unit mark itself stays (later analyses want it)
            if _op.is_const_int(expr.extent, 1) and not _op.is_const_int(mark_extent, 1):
                return _op.const(0, expr.dtype)
            return _op.multiply(_op.floordiv(source, expr.lower_factor), expr.scale)
        inner = _op.floormod(source, _op.multiply(expr.lower_factor, expr.extent))
        return _op.multiply(_op.floordiv(inner, expr.lower_factor), expr.scale)


def normalize_iter_map_to_expr(expr):
    """The plain expression an :class:`IterMapExpr` stands for (TVM's ``arith.normalize_iter_map_to_expr``).

    Examples
    --------
    >>> y = tir.Var("y", "int32")
    >>> s = detect_iter_map([tir.floordiv(y, 3)], {y: tir.Range(0, 9)}).indices[0]
    >>> str(normalize_iter_map_to_expr(s))
    'y // 3'
    """
    from .analyzer import Analyzer

    return IterMapToExpr(Analyzer()).convert(expr)


# ---- public functions (TVM's tvm.arith.*)
def detect_iter_map(indices, input_iters, predicate=True, check_level=IterMapLevel.Surjective,
                    simplify_trivial_iterators=True) -> IterMapResult:
    """Recognize ``indices`` as an iterator map of ``input_iters`` (``{Var: Range}``) under ``predicate``.

    With ``check_level="bijective"`` the indices must cover every input iteration exactly once; with
    ``"surjective"`` they must be independent digits of the inputs (padding allowed). The result's ``indices`` are
    :class:`IterSumExpr`s, empty when the indices are not such a map (``errors`` says why).

    Examples
    --------
    >>> x = tir.Var("x", "int32")
    >>> res = detect_iter_map([tir.floordiv(x, 4), tir.floormod(x, 4)], {x: tir.Range(0, 16)}, check_level="bijective")
    >>> [str(i.args[0].extent) for i in res.indices]
    ['4', '4']
    """
    from .iter_map_detect import detect

    return detect(_exprs(indices), _domains(input_iters), E.convert(predicate), _level(check_level),
                  simplify_trivial_iterators)


def normalize_to_iter_sum(index, input_iters) -> IterSumExpr:
    """``index`` as one :class:`IterSumExpr` of splits of ``input_iters``, its scales ordered from the largest
    constant factor down; what is not an iterator expression stays in ``base`` (TVM's
    ``arith.normalize_to_iter_sum``)."""
    from .iter_map_detect import normalize_to_sum

    return normalize_to_sum(E.convert(index), _domains(input_iters))


def iter_map_simplify(indices, input_iters, predicate=True, check_level=IterMapLevel.Surjective,
                      simplify_trivial_iterators=True) -> list:
    """Simplify ``indices`` through iterator-map detection: each detected map converted back to an expression;
    the indices unchanged when none is found (TVM's ``arith.iter_map_simplify``).

    Examples
    --------
    >>> x = tir.Var("x", "int32")
    >>> str(iter_map_simplify([x // 8 * 8 + x % 8], {x: tir.Range(0, 64)})[0])
    'x'
    """
    from .analyzer import Analyzer
    from .iter_map_detect import detect, sanity_check

    indices, doms, level = _exprs(indices), _domains(input_iters), _level(check_level)
    predicate = E.convert(predicate)
    if not sanity_check(doms):
        return indices
    found = detect(indices, doms, predicate, level, simplify_trivial_iterators).indices
    if not found and not _op.is_const_int(predicate, 1) and level != IterMapLevel.Bijective:
        # a predicate can defeat detection; the map found without it still holds
        found = detect(indices, doms, _op.const(True), level, simplify_trivial_iterators).indices
    if not found:
        return indices
    converter = IterMapToExpr(Analyzer())
    return [converter.convert(e) for e in found]


def subspace_divide(bindings, input_iters, sub_iters, predicate=True, check_level=IterMapLevel.Surjective,
                    simplify_trivial_iterators=True) -> list:
    """Write each binding as ``outer * extent(inner) + inner``, where ``inner`` is an iterator map of ``sub_iters``
    and ``outer`` one of the other inputs (TVM's ``arith.subspace_divide``).

    Returns a list of ``[outer_mark, inner_mark]`` pairs, one per binding, followed by the pair of predicates
    (the extents of two marks with empty sources) the outer and inner spaces must satisfy; empty when the bindings
    cannot be divided.
    """
    from .iter_map_divide import subspace_divide as divide

    return divide(_exprs(bindings), _domains(input_iters), list(sub_iters), E.convert(predicate),
                  _level(check_level), simplify_trivial_iterators)


def inverse_affine_iter_map(iter_map, outputs) -> dict:
    """The input iterators as expressions of ``outputs`` (one variable per IterSumExpr of ``iter_map``, a
    bijective map as :func:`detect_iter_map` returns it) (TVM's ``arith.inverse_affine_iter_map``)."""
    from .iter_map_divide import inverse_affine_iter_map as inverse

    return inverse(list(iter_map), [E.convert(o) for o in outputs])


def _exprs(values):
    return [E.convert(v) for v in values]


def _domains(input_iters):
    doms = {}
    for var, rng in dict(input_iters).items():
        if not isinstance(var, E.Var):
            raise TIRError(f"arith iterator maps: the domain keys must be Vars, got {type(var).__name__}")
        if not isinstance(rng, E.Range):
            rng = E.Range.from_min_extent(0, rng)
        doms[var] = rng
    return doms


def _register():
    """The functions under TVM's global names, for the layers below arith (``tir.IndexMap``) that reach them
    through the registry."""
    from ..runtime.packed_func import register_func

    register_func("arith.DetectIterMap", detect_iter_map, override=True)
    register_func("arith.InverseAffineIterMap", inverse_affine_iter_map, override=True)
    register_func("arith.NormalizeIterMapToExpr", normalize_iter_map_to_expr, override=True)
    register_func("arith.NormalizeToIterSum", normalize_to_iter_sum, override=True)
    register_func("arith.IterMapSimplify", iter_map_simplify, override=True)
    register_func("arith.SubspaceDivide", subspace_divide, override=True)


_register()
