"""The element offsets of a buffer access, simplified (TVM's ``Buffer.offset_of``, ``BufferNode::ElemOffset``).

This module sits above ``kiln.arith`` (tests/test_layering.py ranks it with ``tir.transform``): the offset is
simplified with the analyzer, and ``Buffer.offset_of`` reaches it through the global function
``tir.BufferOffsetOf`` it registers, as TVM's Python reaches its C++ implementation.

How an offset is built: the indices of each output axis (one, or one per group of ``axis_separators``) are
accumulated row-major, ``acc * shape[i] + index[i]`` (or ``acc + index[i] * stride[i]`` when the buffer has
strides). After each step, a split index is merged back: an index that was cut into ``c // K`` and ``c % K`` (by a
``split`` or a reshape) accumulates to ``(... + c // K * k1...) * ...kt + c % K``, and the merge recovers
``... + c``, so ``offset_of`` of a split access equals that of the unsplit one. The search over the terms of the
sum pairs each ``c % K`` with a product whose multipliers multiply to ``K`` around a ``c' // K`` with
``c' == c (mod K)``; a merged result is split into terms again and searched anew, until no pair is left.
"""

from ..arith import Analyzer
from ..error import TIRError
from ..ir.structural import structural_equal
from ..runtime.packed_func import register_func
from . import expr as E
from .op import add, floormod, multiply, subtract


def _terms(expr) -> list:
    """The operands of a chain of additions, left to right."""
    out, stack = [], [expr]
    while stack:
        top = stack.pop()
        if isinstance(top, E.Add):
            stack.extend((top.b, top.a))
        else:
            out.append(top)
    return out


def _same(a, b) -> bool:
    return a is b or structural_equal(a, b)


def _merge_pair(ana, product, residue, modulus):
    """``product`` = ``(s + c // K * k1 ... kt-1) * kt ... ki`` and ``residue`` = ``c' % K`` (``K = k1 ... ki``,
    ``c == c' mod K``) merge into ``s * kt ... ki + c``; None when they do not have that form."""
    if not isinstance(product, E.Mul):
        return None
    outer, inner = product.b, product.a
    while isinstance(inner, E.Mul):
        outer, inner = multiply(inner.b, outer), inner.a
    factor = None  # the multipliers met inside the sum, between the division and ``outer``
    rest = None  # the terms added before the division
    while True:
        if isinstance(inner, E.FloorDiv):
            total = outer if factor is None else multiply(factor, outer)
            if not (_same(total, inner.b) and _same(total, modulus)):
                return None
            if not ana.can_prove_equal(floormod(subtract(inner.a, residue), modulus), 0):
                return None
            return inner.a if rest is None else add(multiply(rest, outer), inner.a)
        if isinstance(inner, E.Mul):
            factor = inner.b if factor is None else multiply(inner.b, factor)
            inner = inner.a
        elif isinstance(inner, E.Add) and factor is None:
            rest = inner.a if rest is None else add(rest, inner.a)
            inner = inner.b
        else:
            return None


def _undo_split(expr):
    """``x // y * y + x % y`` is ``x``."""
    if isinstance(expr, E.Add) and isinstance(expr.a, E.Mul) and isinstance(expr.a.a, E.FloorDiv) \
            and isinstance(expr.b, E.FloorMod):
        x, y = expr.a.a.a, expr.a.a.b
        if _same(expr.a.b, y) and _same(expr.b.a, x) and _same(expr.b.b, y):
            return x
    return expr


def merge_mul_mod(ana, base):
    """``base`` simplified, with every ``c // K`` product and ``c % K`` term pair of its sum merged (module doc).

    The terms keep their order, a merged pair taking the place of its ``c % K``, so that the merged sum reads as the
    unsplit one would."""
    base = ana.simplify(_undo_split(base))
    terms = _terms(base)
    changed = False
    while True:
        merged = _merge_once(ana, terms)
        if merged is None:
            break
        terms, changed = merged, True
    if not changed:
        return base
    result = terms[0]
    for term in terms[1:]:
        result = add(result, term)
    return result


def _merge_once(ana, terms):
    """``terms`` with the first mergeable (product, residue) pair merged; None when no pair merges."""
    for r, residue in enumerate(terms):
        if not isinstance(residue, E.FloorMod):
            continue
        for product in terms:
            if not isinstance(product, E.Mul):
                continue
            merged = _merge_pair(ana, product, residue.a, residue.b)
            if merged is not None:
                return [t for t in (*terms[:r], *_terms(merged), *terms[r + 1:]) if t is not product]
    return None


def elem_offset(buffer, indices) -> tuple:
    """The offset of ``buffer[indices]`` in elements, one per output axis (``axis_separators`` cut the axes into
    groups; a plain buffer has one), simplified. See the module docstring."""
    indices = tuple(E.convert(i) for i in indices)
    if len(indices) != len(buffer.shape):
        raise TIRError(f"Buffer.offset_of: buffer {buffer.name} is {len(buffer.shape)}-dimensional, cannot be "
                       f"indexed with {len(indices)} indices")
    separators = buffer.axis_separators
    has_offset = not (isinstance(buffer.elem_offset, E.IntImm) and buffer.elem_offset.value == 0)
    if has_offset and separators:
        raise TIRError(f"Buffer.offset_of: buffer {buffer.name} has an element offset and axis separators; an "
                       f"offset is defined only for a flat buffer")
    ana = Analyzer()
    outputs: list = [E.convert(0, indices[0].dtype if indices else "int32")] * (len(separators) + 1)
    axis = 0
    for i, index in enumerate(indices):
        if axis < len(separators) and i == separators[axis]:
            axis += 1
        acc = outputs[axis]
        if buffer.strides:
            acc = add(acc, multiply(index, buffer.strides[i]))
        else:
            acc = add(multiply(acc, buffer.shape[i]), index)
        outputs[axis] = merge_mul_mod(ana, acc) if i > 0 else acc
    if has_offset:
        outputs = [add(o, buffer.elem_offset) for o in outputs]
    return tuple(_ordered(ana.simplify(o)) for o in outputs)


def _ordered(expr):
    """``expr`` with the terms of its top-level sum in one order (by text, the constant last), as TVM's canonical
    form orders them: an offset reached through split indices then equals the one of the unsplit index, whatever
    order the simplifier left their terms in."""
    terms = _terms(expr)
    if len(terms) < 2:
        return expr
    ordered = sorted(terms, key=lambda t: (isinstance(t, E.IntImm), str(t)))
    if all(a is b for a, b in zip(ordered, terms, strict=True)):
        return expr
    result = ordered[0]
    for term in ordered[1:]:
        result = add(result, term)
    return result


register_func("tir.BufferOffsetOf", elem_offset)
