"""Which language features a Relay program uses (TVM's ``relay.analysis.detect_feature`` and ``Feature``).

Beside one feature per kind of node, ``fGraph`` says a compound node is shared (the program is a graph, not a tree)
and ``fLetRec`` that a let-bound value refers to its own variable (a local recursive function). The bodies of
primitive (fused) functions are not looked into, as in TVM; neither are match patterns.
"""

from enum import IntEnum

from ...ir.adt import Constructor
from ...ir.expr import GlobalVar
from ...ir.module import IRModule
from ...ir.op import Op
from ..adt import Match
from ..expr import Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from ..function import Function
from .free_vars import free_vars


class Feature(IntEnum):
    """The features of a Relay program, with TVM's names and values."""

    fVar = 0  # noqa: N815  (TVM's names)
    fGlobalVar = 1  # noqa: N815
    fConstant = 2  # noqa: N815
    fTuple = 3  # noqa: N815
    fTupleGetItem = 4  # noqa: N815
    fFunction = 5  # noqa: N815
    fOp = 6  # noqa: N815
    fCall = 7  # noqa: N815
    fLet = 8  # noqa: N815
    fIf = 9  # noqa: N815
    fRefCreate = 10  # noqa: N815
    fRefRead = 11  # noqa: N815
    fRefWrite = 12  # noqa: N815
    fConstructor = 13  # noqa: N815
    fMatch = 14  # noqa: N815
    fGraph = 15  # noqa: N815
    fLetRec = 16  # noqa: N815


_KIND = {Var: Feature.fVar, GlobalVar: Feature.fGlobalVar, Constant: Feature.fConstant, Tuple: Feature.fTuple,
         TupleGetItem: Feature.fTupleGetItem, Function: Feature.fFunction, Op: Feature.fOp, Call: Feature.fCall,
         Let: Feature.fLet, If: Feature.fIf, RefCreate: Feature.fRefCreate, RefRead: Feature.fRefRead,
         RefWrite: Feature.fRefWrite, Constructor: Feature.fConstructor, Match: Feature.fMatch}
_ATOMIC = (Var, GlobalVar, Constant, Op, Constructor)


def _children(node) -> tuple:
    if isinstance(node, Call):
        return (node.op, *node.args)
    if isinstance(node, Tuple):
        return node.fields
    if isinstance(node, TupleGetItem):
        return (node.tuple_value,)
    if isinstance(node, Let):
        return (node.var, node.value, node.body)
    if isinstance(node, If):
        return (node.cond, node.true_branch, node.false_branch)
    if isinstance(node, Function):
        return () if node.is_primitive() else (*node.params, node.body)
    if isinstance(node, Match):
        return (node.data, *(c.rhs for c in node.clauses))
    if isinstance(node, RefCreate):
        return (node.value,)
    if isinstance(node, RefRead):
        return (node.ref,)
    if isinstance(node, RefWrite):
        return (node.ref, node.value)
    return ()


def _expr_features(expr) -> set:
    found: set = set()
    seen: set = set()
    stack = [expr]
    while stack:  # iterative: A-normal-form programs nest thousands of lets deep
        node = stack.pop()
        if node in seen:
            if not isinstance(node, _ATOMIC):
                found.add(Feature.fGraph)
            continue
        seen.add(node)
        kind = _KIND.get(type(node))
        if kind is not None:
            found.add(kind)
        if isinstance(node, Let) and node.var in free_vars(node.value):
            found.add(Feature.fLetRec)
        stack.extend(reversed(_children(node)))
    return found


def detect_feature(a, b=None) -> set:
    """The set of :class:`Feature` used by an expression and/or the functions of a module (either order, as TVM's
    ``detect_feature(expr, mod)``)."""
    if isinstance(a, IRModule):
        a, b = b, a
    found = _expr_features(a) if a is not None else set()
    if b is not None:
        for func in b.functions.values():
            if isinstance(func, Function):
                found |= _expr_features(func)
    return found


__all__ = ["Feature", "detect_feature"]
