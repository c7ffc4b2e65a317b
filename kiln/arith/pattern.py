"""A small pattern language over TIR expressions, for rewrite rules written as identities (TVM's ``PVar`` patterns of
``src/arith/pattern_match.h``).

A pattern is built with Python operators from placeholders: ``x, y = pvars("x y")`` match any expression,
``c1, c2 = pconsts("c1 c2")`` match an integer constant (an ``IntImm``), and a plain number in a pattern (the ``2`` of
``x * 2``) matches that constant and, on the result side, builds it with the dtype of the expression beside it.
``floordiv``, ``floormod``, ``truncdiv``, ``truncmod``, ``min_``, ``max_``, ``select``, ``ramp`` and ``broadcast``
build the other node kinds; ``&``, ``|`` and ``~`` stand for ``&&``, ``||`` and ``!``. A placeholder used twice
matches only structurally equal expressions (variables by identity).

>>> m = (x + y - y).match(expr)           # doctest: +SKIP
>>> m.x                                   # doctest: +SKIP

:func:`rewrite` turns a source pattern (or a list of alternatives) and a result pattern into a rule: a function
``rule(node, s) -> expr | None`` over the simplifier ``s``. Evaluating a result pattern folds constants as TVM's
``TryConstFold`` does (:func:`try_const_fold`) and otherwise builds the node as it stands.
"""

from ..error import TIRError
from ..tir import dtype as _dt
from ..tir import expr as E
from ..tir.dtype_semantics import wrap_int
from .linear import expr_key


class Match(dict):
    """The bindings of one successful match: ``m.x`` is what placeholder ``x`` matched."""

    __slots__ = ()

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Pat:
    """Base of patterns: operators build larger patterns; ``match`` and ``eval`` are per kind."""

    __slots__ = ()
    __hash__ = object.__hash__

    def match(self, expr, m=None):
        """The bindings when ``expr`` matches, else None."""
        m = Match() if m is None else m
        return m if self.bind(expr, m) else None

    def bind(self, expr, m) -> bool:
        raise NotImplementedError

    def eval(self, m):
        raise NotImplementedError

    def __add__(self, o):
        return Node(E.Add, self, lift(o, self))

    def __radd__(self, o):
        return Node(E.Add, lift(o, self), self)

    def __sub__(self, o):
        return Node(E.Sub, self, lift(o, self))

    def __rsub__(self, o):
        return Node(E.Sub, lift(o, self), self)

    def __mul__(self, o):
        return Node(E.Mul, self, lift(o, self))

    def __rmul__(self, o):
        return Node(E.Mul, lift(o, self), self)

    def __lt__(self, o):
        return Node(E.LT, self, lift(o, self))

    def __le__(self, o):
        return Node(E.LE, self, lift(o, self))

    def __gt__(self, o):
        return Node(E.GT, self, lift(o, self))

    def __ge__(self, o):
        return Node(E.GE, self, lift(o, self))

    def __eq__(self, o):  # type: ignore[override]
        return Node(E.EQ, self, lift(o, self))

    def __ne__(self, o):  # type: ignore[override]
        return Node(E.NE, self, lift(o, self))

    def __and__(self, o):
        return Node(E.And, self, o)

    def __or__(self, o):
        return Node(E.Or, self, o)

    def __invert__(self):
        return Node(E.Not, self)


def _same(a, b) -> bool:
    if isinstance(a, E.PrimExpr) and isinstance(b, E.PrimExpr):
        return a is b or expr_key(a) == expr_key(b)
    return type(a) is type(b) and a == b


class PVar(Pat):
    """A placeholder matching any value (of ``kind`` when given: ``E.IntImm`` for TVM's ``PVar<IntImm>``)."""

    __slots__ = ("kind", "name")

    def __init__(self, name, kind=None):
        self.name, self.kind = name, kind

    def bind(self, expr, m):
        if self.kind is not None and type(expr) is not self.kind:
            return False
        old = m.get(self.name)
        if old is None:
            m[self.name] = expr
            return True
        return _same(old, expr)

    def eval(self, m):
        return m[self.name]


class Lit(Pat):
    """A number in a pattern: matches an integer constant of that value; builds it in the dtype of ``like``."""

    __slots__ = ("like", "value")

    def __init__(self, value, like):
        self.value, self.like = value, like

    def bind(self, expr, m):
        return type(expr) is E.IntImm and expr.value == self.value

    def eval(self, m):
        like = self.like.eval(m)
        dtype = like if isinstance(like, str) else like.dtype
        return make_const(self.value, dtype)


class Const(Pat):
    """A fixed expression (TVM's ``PConst``): matches a structurally equal expression, evaluates to itself."""

    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr

    def bind(self, expr, m):
        return _same(self.expr, expr)

    def eval(self, m):
        return self.expr


class Fn(Pat):
    """A result computed by a function of the bindings (result side only)."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def bind(self, expr, m):
        raise TypeError("a computed pattern cannot be matched")

    def eval(self, m):
        return self.fn(m)


_FIELDS = {
    E.Ramp: ("base", "stride", "lanes"), E.Broadcast: ("value", "lanes"), E.Not: ("a",),
    E.Select: ("condition", "true_value", "false_value"),
}


class Node(Pat):
    """A node of ``kind`` whose operands match ``args`` in order."""

    __slots__ = ("args", "kind")

    def __init__(self, kind, *args):
        self.kind, self.args = kind, args

    def bind(self, expr, m):
        if type(expr) is not self.kind:
            return False
        names = _FIELDS.get(self.kind, ("a", "b"))
        return all(p.bind(getattr(expr, n), m) for p, n in zip(self.args, names, strict=False))

    def eval(self, m):
        args = [a.eval(m) for a in self.args]
        folded = try_const_fold(self.kind, *args) if len(args) <= 2 else None
        return folded if folded is not None else self.kind(*args)


def lift(o, like):
    """A pattern for ``o``: itself when a pattern, a :class:`Lit` for a number, a :class:`Const` for an expression."""
    if isinstance(o, Pat):
        return o
    if isinstance(o, bool | int):
        return Lit(int(o), like)
    if isinstance(o, E.PrimExpr):
        return Const(o)
    raise TypeError(f"cannot use {o!r} in a pattern")


def pvars(names, kind=None):
    """Placeholders named by the words of ``names``."""
    return tuple(PVar(n, kind) for n in names.split())


def pconsts(names):
    """Placeholders for integer constants (TVM's ``PVar<IntImm>``)."""
    return pvars(names, E.IntImm)


def _binary(kind):
    def build(a, b):
        a = lift(a, b) if isinstance(b, Pat) else a
        return Node(kind, a, lift(b, a))

    build.__name__ = kind.__name__.lower()
    return build


floordiv, floormod = _binary(E.FloorDiv), _binary(E.FloorMod)
truncdiv, truncmod = _binary(E.Div), _binary(E.Mod)
min_, max_ = _binary(E.Min), _binary(E.Max)


lt, le = _binary(E.LT), _binary(E.LE)
"""``lt(0, x)`` for a comparison whose left side is a number (Python would turn ``0 < x`` into ``x > 0``)."""


def select(c, t, f):
    """``select(c, t, f)`` pattern."""
    return Node(E.Select, c, t, lift(f, t))


def ramp(base, stride, lanes):
    """``ramp(base, stride, lanes)`` pattern."""
    return Node(E.Ramp, base, lift(stride, base), lanes)


def broadcast(value, lanes):
    """``broadcast(value, lanes)`` pattern."""
    return Node(E.Broadcast, value, lanes)


def zero_like(p):
    """TVM's ``ZeroWithTypeLike``: a 0 of the dtype of what ``p`` matched."""
    return Fn(lambda m: make_const(0, p.eval(m).dtype))


def one_like(p):
    """TVM's ``OneWithTypeLike``."""
    return Fn(lambda m: make_const(1, p.eval(m).dtype))


def const_of(dtype_of, value):
    """A constant of the dtype of ``dtype_of``'s match, with the value ``value(m)`` (an int)."""
    return Fn(lambda m: make_const(value(m), dtype_of.eval(m).dtype))


def make_const(value, dtype):
    """A constant of ``dtype`` (a ``Broadcast`` of one for a vector dtype), integers wrapped into range."""
    t = _dt.DataType.parse(dtype)
    if t.lanes != 1:
        return E.Broadcast(make_const(value, str(t.element_of())), t.lanes)
    if t.is_float():
        return E.FloatImm(dtype, float(value))
    return E.IntImm(dtype, wrap_int(int(value), dtype))


# ---- constant folding as TVM's TryConstFold (src/arith/const_fold.h) ----------------------------------------------
def _fdiv(a, b):
    return a // b


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _tmod(a, b):
    return a - _tdiv(a, b) * b


_INT_FOLD = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b, E.Div: _tdiv, E.Mod: _tmod,
    E.FloorDiv: _fdiv, E.FloorMod: lambda a, b: a % b, E.Min: min, E.Max: max,
}
_CMP_FOLD = {
    E.LT: lambda a, b: a < b, E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b, E.GE: lambda a, b: a >= b,
    E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b,
}
_INDEX_ONLY = (E.Mod, E.FloorMod)


def _is_index(dtype) -> bool:
    return dtype in ("int32", "int64")


def try_const_fold(kind, a, b=None):
    """What TVM's ``TryConstFold<kind>(a, b)`` returns: the folded expression, or None when nothing folds
    (two constants; ``x + 0``, ``x - 0``, ``x * 1``, ``x * 0``, ``0 / x``, ``x / 1``, ``x % 1``, ``min(x, x)`` as the
    same object; logic with a constant operand). Raises ``TIRError`` for a constant integer division by zero."""
    if kind is E.Not:
        return E.IntImm("bool", int(not a.value)) if type(a) is E.IntImm else None
    if kind in (E.And, E.Or):
        return _fold_logic(kind is E.And, a, b)
    if kind not in _INT_FOLD and kind not in _CMP_FOLD:
        return None
    ia, ib = type(a) is E.IntImm, type(b) is E.IntImm
    fa, fb = type(a) is E.FloatImm, type(b) is E.FloatImm
    if kind in _INDEX_ONLY and not (_is_index(a.dtype) and _is_index(b.dtype)):
        return None
    if kind in _CMP_FOLD:
        if (ia and ib) or (fa and fb):
            return E.IntImm("bool", int(_CMP_FOLD[kind](a.value, b.value)))
        return None
    if kind in (E.Min, E.Max):
        if (ia and ib) or (fa and fb):
            return (E.IntImm if ia else E.FloatImm)(a.dtype, _INT_FOLD[kind](a.value, b.value))
        return a if a is b else None
    if ia and ib:
        if kind in (E.Div, E.Mod, E.FloorDiv, E.FloorMod) and b.value == 0:
            raise TIRError(f"{kind.__name__}: division by zero in the constant expression {a.value} / {b.value}")
        return E.IntImm(a.dtype, wrap_int(_INT_FOLD[kind](a.value, b.value), a.dtype))
    if fa and fb and kind in (E.Add, E.Sub, E.Mul, E.Div, E.FloorDiv) and _dt.DataType.parse(a.dtype).bits in (32, 64):
        if kind in (E.Div, E.FloorDiv) and b.value == 0:
            return None
        value = {E.Add: a.value + b.value, E.Sub: a.value - b.value, E.Mul: a.value * b.value}.get(kind)
        if value is None:
            value = a.value / b.value if kind is E.Div else float(a.value // b.value)
        return E.FloatImm(a.dtype, value)
    za = (ia or fa) and a.value == 0
    zb = (ib or fb) and b.value == 0
    one_b = (ib or fb) and b.value == 1
    if kind is E.Add:
        return b if za else a if zb else None
    if kind is E.Sub:
        return a if zb else None
    if kind is E.Mul:
        if (ia or fa) and a.value == 1:
            return b
        if za:
            return a
        return a if one_b else b if zb else None
    if kind in (E.Div, E.FloorDiv):
        return a if za or one_b else None
    if kind in (E.Mod, E.FloorMod):
        return a if za else make_const(0, a.dtype) if one_b else None
    return None


def _fold_logic(is_and, a, b):
    for x, y in ((a, b), (b, a)):
        if type(x) is E.IntImm:
            return y if bool(x.value) == is_and else x
    return None


# ---- rules -------------------------------------------------------------------------------------------------------
def rewrite(src, res, cond=None, recursive=False):
    """A rule: when ``node`` matches ``src`` (a pattern or a list of alternatives, TVM's ``matches_one_of``) and
    ``cond(m, s)`` holds, the result is ``res`` evaluated on the bindings (simplified again when ``recursive``)."""
    alternatives = tuple(src) if isinstance(src, list | tuple) else (src,)

    def rule(node, s):
        for alt in alternatives:
            m = alt.match(node)
            if m is not None and (cond is None or cond(m, s)):
                out = res.eval(m)
                return s.recursive_rewrite(out) if recursive else out
        return None

    rule.__doc__ = f"rewrite rule of {len(alternatives)} source pattern(s)"
    rule.sources = alternatives  # type: ignore[attr-defined]  # what the rule matches (tests instantiate them)
    return rule


def rewrite_rec(src, res, cond=None):
    """:func:`rewrite` whose result is simplified again (TVM's ``TVM_TRY_RECURSIVE_REWRITE``)."""
    return rewrite(src, res, cond, recursive=True)
