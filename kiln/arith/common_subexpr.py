"""Common sub-expressions of an expression (TVM's ``arith.detect_common_subexpr``).

Counted as common-subexpression elimination would see them: an eligible computation (more than one node, pure, not
a ``Ramp`` or ``Broadcast``) counts once where it occurs, and its own sub-computations are looked at only when it
is not itself common enough: they then inherit its count. ``floor(x + y) + x + z * floor(x + y)`` counts the whole
sum once, then ``floor(x + y) + x`` and ``z * floor(x + y)`` once each, so ``floor(x + y)`` twice. Equal computations
(node by node, variables by identity) are counted together under the first one found.
"""

from ..tir import expr as E
from ..tir.stmt_functor import children
from .iter_map_fuse import ekey

_IMPURE = ("tir.call_extern", "tir.call_packed", "tir.call_pure_extern")


def _size(e):
    n, stack = 0, [e]
    while stack:
        node = stack.pop()
        n += 1
        stack.extend(children(node))
    return n


def _pure(e):
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, E.Call):
            get_attr = getattr(node.op, "get_attr", None)
            effect = get_attr("TCallEffectKind") if get_attr is not None else None
            if node.op.name in _IMPURE or (effect is not None and int(effect) > int(E.CallEffectKind.PURE)):
                return False
        stack.extend(children(node))
    return True


def _eligible(e):
    return not isinstance(e, E.Ramp | E.Broadcast) and _size(e) > 1 and _pure(e)


def _done_by(e):
    """The outermost eligible computations inside ``e`` (``e`` itself when it is one), left to right."""
    if _eligible(e):
        return [e]
    return [c for child in children(e) for c in _done_by(child)]


def detect_common_subexpr(expr, threshold):
    """``{sub-expression: count}`` of the computations of ``expr`` that occur at least ``threshold`` times.

    Examples
    --------
    >>> f = tir.floor(tir.Cast("float32", x + y))          # doctest: +SKIP
    >>> detect_common_subexpr(f + tir.Cast("float32", z) * f, 2)[f]   # doctest: +SKIP
    2
    """
    threshold = int(threshold)
    entries: list = []  # [expression, count]
    index: dict = {}

    def add(e, n):
        k = ekey(e)
        if k in index:
            entries[index[k]][1] += n
        else:
            index[k] = len(entries)
            entries.append([e, n])

    for e in _done_by(E.convert(expr)):
        add(e, 1)
    i = 0
    while i < len(entries):
        e, n = entries[i]
        if n < threshold:
            for sub in (c for child in children(e) for c in _done_by(child)):
                add(sub, n)
        i += 1
    return {e: n for e, n in entries if n >= threshold}
