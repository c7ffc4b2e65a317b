"""Which values a ``match`` leaves unhandled (TVM's ``relay.analysis.unmatched_cases``).

How it works. The values not handled yet are kept as a list of *shapes*: patterns made of constructors, tuples and
wildcards. It starts as ``[_]`` (everything). Each clause's pattern is subtracted from every shape:

* a wildcard or variable pattern covers the whole shape;
* a wildcard shape facing a constructor pattern is first split into one shape per constructor of the data type
  (``_`` of a list becomes ``Cons(_, _)`` and ``Nil``), a wildcard facing a tuple pattern into a tuple of wildcards;
* a constructor shape minus a pattern of another constructor is untouched; minus a pattern of the same constructor
  ``C(q1..qn)`` it leaves, for each field i, the shapes ``C(s1.., r, ..sn)`` with ``r`` ranging over ``si - qi``
  (a value escapes the pattern exactly when one of its fields escapes its sub-pattern). Tuples alike.

What is left after the last clause are the unhandled cases; an empty list means the match is complete. Splitting
happens only as deep as the clauses' patterns go, so the work is bounded by the size of the patterns.
"""

from ...error import KilnError
from ..adt import PatternConstructor, PatternTuple, PatternVar, PatternWildcard


def _constructors_of(ctor, mod):
    data = getattr(ctor, "_type_data", None)
    if data is None and mod is not None and ctor.belong_to in mod:
        data = mod[ctor.belong_to]
    if data is None:
        raise KilnError(f"constructor {ctor.name_hint} belongs to no type definition known here")
    return data.constructors


def _subtract(shape, pattern, mod) -> list:
    if isinstance(pattern, PatternWildcard | PatternVar):
        return []
    if isinstance(shape, PatternWildcard):
        if isinstance(pattern, PatternConstructor):
            splits = [PatternConstructor(c, [PatternWildcard() for _ in c.inputs])
                      for c in _constructors_of(pattern.constructor, mod)]
        else:
            splits = [PatternTuple([PatternWildcard() for _ in pattern.patterns])]
        return [rest for split in splits for rest in _subtract(split, pattern, mod)]
    if isinstance(shape, PatternConstructor):
        if not isinstance(pattern, PatternConstructor) or pattern.constructor.name_hint != shape.constructor.name_hint:
            return [shape]
        rebuild = lambda subs: PatternConstructor(shape.constructor, subs)  # noqa: E731
    else:
        if not isinstance(pattern, PatternTuple) or len(pattern.patterns) != len(shape.patterns):
            return [shape]
        rebuild = PatternTuple
    left = []
    for i, (sub, sub_pattern) in enumerate(zip(shape.patterns, pattern.patterns, strict=True)):
        for rest in _subtract(sub, sub_pattern, mod):
            left.append(rebuild([*shape.patterns[:i], rest, *shape.patterns[i + 1 :]]))
    return left


def unmatched_cases(match, mod=None) -> list:
    """The shapes of values no clause of ``match`` handles (empty when the match is complete).

    Parameters
    ----------
    match : relay.Match
        The match expression.
    mod : IRModule, optional
        The module defining the data types (needed only for constructors not built into a TypeData).

    Returns
    -------
    list of Pattern
        Patterns of constructors, tuples and wildcards describing the unhandled values.

    Examples
    --------
    >>> unmatched_cases(relay.Match(xs, [relay.Clause(relay.PatternConstructor(nil), x)]))   # doctest: +SKIP
    [Cons(_, _)]
    """
    left = [PatternWildcard()]
    for clause in match.clauses:
        left = [rest for shape in left for rest in _subtract(shape, clause.lhs, mod)]
        if not left:
            break
    return left


def pattern_text(pattern, var_text=None) -> str:
    """A pattern as the text format spells it (``Cons(_, Nil)``, ``(_, %x)``); ``var_text(var)`` spells a pattern
    variable (``%name`` by default)."""
    if isinstance(pattern, PatternWildcard):
        return "_"
    if isinstance(pattern, PatternVar):
        return var_text(pattern.var) if var_text is not None else f"%{pattern.var.name_hint}"
    inner = ", ".join(pattern_text(p, var_text) for p in pattern.patterns)
    if isinstance(pattern, PatternConstructor):
        return f"{pattern.constructor.name_hint}({inner})" if pattern.patterns else pattern.constructor.name_hint
    return f"({inner})"


__all__ = ["pattern_text", "unmatched_cases"]
