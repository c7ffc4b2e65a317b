"""Pieces of the Relay text printer (:mod:`kiln.relay.printer`): the scope tree, the children of each node kind as the
printer walks them, type definitions, and the TVMScript text of lowered modules.

A *scope* is a block of text ending in one expression: a function body, an ``if`` branch, a ``match`` clause, or a
parenthesised ``let`` chain. :func:`kids` gives the non-atomic children of a node (branches and clause right-hand
sides included: the printer gives them scopes of their own); :func:`var_kids` the variables it uses directly.
"""

from ..ir.adt import Constructor
from ..ir.expr import GlobalVar
from ..ir.op import Op
from .adt import Match, pattern_vars
from .expr import Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from .function import Function
from .text_literals import type_text

ATOMIC = (Var, Constant, GlobalVar, Op, Constructor)
TYPED_KINDS = (Call, Tuple, TupleGetItem, Function, RefCreate, RefRead, RefWrite, Match)


class Scope:
    """A block of bindings ending in one expression (``root``); ``lets`` are the let bindings it opens with."""

    __slots__ = ("depth", "lets", "parent", "root")

    def __init__(self, parent):
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.root = None
        self.lets = []


def lca(a, b):
    """The innermost scope enclosing both ``a`` and ``b`` (``a`` may be None)."""
    if a is None:
        return b
    while a.depth > b.depth:
        a = a.parent
    while b.depth > a.depth:
        b = b.parent
    while a is not b:
        a, b = a.parent, b.parent
    return a


def _operands(node) -> tuple:
    """Every expression a node's own text refers to, in TVM's printing order (a call's arguments before its callee)."""
    kind = type(node)
    if kind is Call:
        return (*node.args, node.op)
    if kind is Tuple:
        return node.fields
    if kind is TupleGetItem:
        return (node.tuple_value,)
    if kind is If:
        return (node.cond, node.true_branch, node.false_branch)
    if kind is Let:
        return (node.value, node.body)
    if kind is Function:
        return (node.body,)
    if kind is RefCreate:
        return (node.value,)
    if kind is RefRead:
        return (node.ref,)
    if kind is RefWrite:
        return (node.ref, node.value)
    if kind is Match:
        return (node.data, *(c.rhs for c in node.clauses))
    return ()


def kids(node) -> tuple:
    """Non-atomic children in TVM's printing order."""
    return tuple(k for k in _operands(node) if not isinstance(k, ATOMIC))


def var_kids(node) -> tuple:
    """The variables a node uses directly."""
    return tuple(k for k in _operands(node) if type(k) is Var)


def binders(node) -> tuple:
    """The variables a node binds (function parameters, a let variable, pattern variables)."""
    kind = type(node)
    if kind is Function:
        return node.params
    if kind is Let:
        return (node.var,)
    if kind is Match:
        return tuple(v for c in node.clauses for v in pattern_vars(c.lhs))
    return ()


def type_params_text(type_params) -> str:
    """``[A, B]`` for type parameters, nothing without them."""
    return f"[{', '.join(str(t) for t in type_params)}]" if type_params else ""


def type_data_text(data) -> list:
    """The lines of a type definition: ``type List[A] {``, one ``  Cons(A, List[A]),`` per constructor, ``}``; a
    definition without constructors prints as ``extern type T[A]``."""
    head = f"{data.header.name_hint}{type_params_text(data.type_vars)}"
    if not data.constructors:
        return [f"extern type {head}"]
    lines = [f"type {head} {{"]
    for ctor in data.constructors:
        inputs = f"({', '.join(type_text(t) for t in ctor.inputs)})" if ctor.inputs else ""
        lines.append(f"  {ctor.name_hint}{inputs},")
    lines.append("}")
    return lines


def tir_function_text(func) -> str:
    """A PrimFunc's TVMScript text without the import comment."""
    lines = str(func).split("\n")
    while lines and (lines[0].startswith("# from") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines)


def tir_module_text(funcs) -> str:
    """A module of PrimFuncs in TVMScript's ``@I.ir_module`` form."""
    body = "\n\n".join("\n".join("    " + line if line else line for line in tir_function_text(f).split("\n"))
                       for f in funcs)
    return ("# from kiln.script import ir as I\n# from kiln.script import tir as T\n\n@I.ir_module\nclass Module:\n"
            + body + "\n")
