"""Pattern matching on algebraic data types: ``Match``, its ``Clause``s and their patterns (TVM's ``relay.adt``).

``match (%xs) { Cons(%h, _) => %h, Nil => 0 }`` is a :class:`Match` of ``%xs`` with two clauses; the first clause's
pattern is a :class:`PatternConstructor` of ``Cons`` over a :class:`PatternVar` binding ``%h`` and a
:class:`PatternWildcard`. A :class:`PatternTuple` matches the fields of a tuple. A pattern variable is bound in its
clause's right-hand side, so structural equality identifies pattern variables at corresponding places, as it does
let variables.

``complete=True`` (``match``) promises the clauses cover every value; type inference checks it and reports the
cases left out. ``complete=False`` (``match?``) may fail at run time when no clause applies.
"""

from dataclasses import dataclass, field

from ..error import KilnError
from ..ir.adt import Constructor, TypeData
from ..ir.expr import RelayExpr
from ..ir.node import DEF, IGNORE, Node
from .expr import ExprWithOp, Var, _check_exprs


class Pattern(Node):
    """Base class of patterns."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, eq=False)
class PatternWildcard(Pattern):
    """``_``: matches anything and binds nothing."""

    span: object = field(default=None, kw_only=True, metadata=IGNORE)


@dataclass(frozen=True, slots=True, eq=False)
class PatternVar(Pattern):
    """``%x``: matches anything and binds it to the variable ``var``."""

    var: Var = field(metadata=DEF)
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    def __post_init__(self):
        if not isinstance(self.var, Var):
            raise KilnError(f"relay.PatternVar binds a Var, not a {type(self.var).__name__}")


@dataclass(frozen=True, slots=True, eq=False)
class PatternConstructor(Pattern):
    """``Cons(p1, p2)``: matches a value made by ``constructor`` whose fields match ``patterns``."""

    constructor: Constructor
    patterns: tuple = ()
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    def __post_init__(self):
        object.__setattr__(self, "patterns", tuple(self.patterns or ()))
        if not isinstance(self.constructor, Constructor):
            raise KilnError(f"relay.PatternConstructor needs a Constructor, not a {type(self.constructor).__name__}")
        _check_patterns(self.patterns, f"sub-pattern of {self.constructor.name_hint}")


@dataclass(frozen=True, slots=True, eq=False)
class PatternTuple(Pattern):
    """``(p1, p2)``: matches a tuple whose fields match ``patterns``."""

    patterns: tuple = ()
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    def __post_init__(self):
        object.__setattr__(self, "patterns", tuple(self.patterns or ()))
        _check_patterns(self.patterns, "field pattern of a tuple pattern")


def _check_patterns(values, what):
    for value in values:
        if not isinstance(value, Pattern):
            raise KilnError(f"{what} must be a pattern, not {type(value).__name__}")


@dataclass(frozen=True, slots=True, eq=False)
class Clause(Node):
    """``lhs => rhs``: when the matched value fits the pattern ``lhs``, the match evaluates ``rhs``."""

    lhs: Pattern
    rhs: RelayExpr

    def __post_init__(self):
        _check_patterns((self.lhs,), "the left-hand side of a clause")
        _check_exprs((self.rhs,), "the right-hand side of a clause")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Match(ExprWithOp, RelayExpr):
    """``match (data) { clauses }``: the right-hand side of the first clause whose pattern ``data`` fits.

    Parameters
    ----------
    data : RelayExpr
        The value matched.
    clauses : list of Clause
        Tried in order.
    complete : bool
        Whether the clauses cover every value (checked by type inference); ``match?`` in the text format when not.
    """

    data: RelayExpr
    clauses: tuple
    complete: bool = True

    def __post_init__(self):
        object.__setattr__(self, "clauses", tuple(self.clauses))
        object.__setattr__(self, "complete", bool(self.complete))
        _check_exprs((self.data,), "the matched value of relay.Match")
        for clause in self.clauses:
            if not isinstance(clause, Clause):
                raise KilnError(f"relay.Match: clauses must be Clauses, not {type(clause).__name__}")


def pattern_vars(pattern) -> list:
    """The variables ``pattern`` binds, left to right."""
    found = []
    stack = [pattern]
    while stack:
        p = stack.pop()
        if isinstance(p, PatternVar):
            found.append(p.var)
        elif isinstance(p, PatternConstructor | PatternTuple):
            stack.extend(reversed(p.patterns))
    return found


__all__ = ["Clause", "Constructor", "Match", "Pattern", "PatternConstructor", "PatternTuple", "PatternVar",
           "PatternWildcard", "TypeData", "pattern_vars"]
