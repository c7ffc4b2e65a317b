"""Chains of let/assert/attr statements, which the TIR visitors and mutators of :mod:`kiln.tir.functor` walk with a
loop rather than recursion (MakePackedAPI makes chains thousands long)."""

from . import expr as E
from . import stmt as S

CHAIN_METHODS = {S.LetStmt: "visit_let_stmt", S.AssertStmt: "visit_assert_stmt", S.AttrStmt: "visit_attr_stmt"}


def body_chain(functor, op, base) -> list:
    """``op`` and the let/assert/attr statements nested in its body whose visit method ``functor`` does not
    override, outermost first (the first is always ``op`` itself)."""
    chain = [op]
    body = op.body
    while type(body) in CHAIN_METHODS:
        name = CHAIN_METHODS[type(body)]
        if getattr(type(functor), name) is not getattr(base, name):
            break
        chain.append(body)
        body = body.body
    return chain


def chain_fields(link):
    """The expression fields of a chain statement, by name."""
    if isinstance(link, S.LetStmt):
        return [("value", link.value)]
    if isinstance(link, S.AssertStmt):
        return [("condition", link.condition), ("message", link.message)]
    fields = [("value", link.value)]
    return [("node", link.node)] + fields if isinstance(link.node, E.PrimExpr) else fields


def chain_operands(link):
    return [value for _, value in chain_fields(link)]
