"""Visitors and mutators over TIR: ``ExprFunctor``, ``StmtFunctor``, ``StmtExprVisitor``, ``StmtExprMutator``.

The API is TVM's (``VisitExpr_``/``VisitStmt_`` become ``visit_<node>``): ``visit_expr(e)`` and ``visit_stmt(s)``
dispatch through a per-class table built once (``Add -> visit_add``), and the default methods visit every child; the
mutator rebuilds a node only when a child changed, so unchanged subtrees keep their identity. As in TVM, results are
not memoized: a mutator may depend on context (the loop it is in), and a subexpression shared between contexts must be
visited in each.

Deep expressions do not exhaust Python's stack: past a nesting depth of ``_DEEP`` the pure dataflow operands (binary
operators, comparisons, casts, selects, calls, loads) of the current expression are first visited in post-order with an
explicit stack, results held in a memo for the duration of that walk, so the recursive calls of the ``visit_<node>``
methods find their children done. A SeqStmt is visited with a loop, and so is a chain of LetStmts when the subclass
does not override ``visit_let_stmt``.
"""

from typing import ClassVar

from ..error import TIRError
from . import dtype as _dt
from . import expr as E
from . import op as _op
from . import stmt as S
from . import stmt_block as SB
from . import stmt_realize as SR
from .functor_chain import body_chain as _body_chain
from .functor_chain import chain_fields as _chain_fields
from .functor_chain import chain_operands as _chain_operands

_EXPR_METHODS = {
    E.Var: "visit_var", E.SizeVar: "visit_size_var", E.IntImm: "visit_int_imm", E.FloatImm: "visit_float_imm",
    E.StringImm: "visit_string_imm", E.Cast: "visit_cast", E.Add: "visit_add", E.Sub: "visit_sub", E.Mul: "visit_mul",
    E.Div: "visit_div", E.Mod: "visit_mod", E.FloorDiv: "visit_floor_div", E.FloorMod: "visit_floor_mod",
    E.Min: "visit_min", E.Max: "visit_max", E.EQ: "visit_eq", E.NE: "visit_ne", E.LT: "visit_lt", E.LE: "visit_le",
    E.GT: "visit_gt", E.GE: "visit_ge", E.And: "visit_and", E.Or: "visit_or", E.Not: "visit_not",
    E.Select: "visit_select", E.Ramp: "visit_ramp", E.Broadcast: "visit_broadcast", E.Let: "visit_let",
    E.Call: "visit_call", E.BufferLoad: "visit_buffer_load", E.ProducerLoad: "visit_producer_load",
    E.Reduce: "visit_reduce",
}
_STMT_METHODS = {
    S.For: "visit_for", S.While: "visit_while", S.BufferStore: "visit_buffer_store", S.Allocate: "visit_allocate",
    S.DeclBuffer: "visit_decl_buffer", S.SeqStmt: "visit_seq_stmt", S.IfThenElse: "visit_if_then_else",
    S.LetStmt: "visit_let_stmt", S.Evaluate: "visit_evaluate", S.AttrStmt: "visit_attr_stmt",
    S.AssertStmt: "visit_assert_stmt", SB.Block: "visit_block", SB.BlockRealize: "visit_block_realize",
    SR.BufferRealize: "visit_buffer_realize", SR.Prefetch: "visit_prefetch",
}
_BINARY = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max, E.EQ, E.NE, E.LT, E.LE, E.GT,
           E.GE, E.And, E.Or)
_DEEP = 100


def dataflow_operands(expr) -> tuple:
    """The operands a deep walk visits first (none for leaves and for Let, whose body depends on its binding)."""
    kind = type(expr)
    if kind in _BINARY_SET:
        return (expr.a, expr.b)
    if kind is E.Not:
        return (expr.a,)
    if kind is E.Cast or kind is E.Broadcast:
        return (expr.value,)
    if kind is E.Select:
        return (expr.condition, expr.true_value, expr.false_value)
    if kind is E.Ramp:
        return (expr.base, expr.stride)
    if kind is E.Call:
        return expr.args
    if kind is E.BufferLoad or kind is E.ProducerLoad:
        return expr.indices
    return ()


_BINARY_SET = frozenset(_BINARY)


class _Functor:
    _expr_table: ClassVar[dict] = {}
    _stmt_table: ClassVar[dict] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._expr_table = {k: getattr(cls, m) for k, m in _EXPR_METHODS.items() if hasattr(cls, m)}
        cls._stmt_table = {k: getattr(cls, m) for k, m in _STMT_METHODS.items() if hasattr(cls, m)}

    _depth = 0
    _memo = None

    def visit_expr(self, expr):
        """Visit an expression: the result of ``visit_<kind>(expr)``."""
        memo = self._memo
        if memo is not None:
            found = memo.get(id(expr))
            if found is not None:
                return found[1]
        method = self._expr_table.get(type(expr))
        if method is None:
            raise TIRError(f"{type(self).__name__} cannot visit a {type(expr).__name__} as an expression")
        if self._depth >= _DEEP and memo is None:
            return self._deep_walk(expr)
        self._depth += 1
        try:
            return method(self, expr)
        finally:
            self._depth -= 1

    def _deep_walk(self, root):
        """Visit ``root``'s dataflow operands in post-order with an explicit stack, memoizing during the walk."""
        memo = self._memo = {}
        saved_depth, self._depth = self._depth, 0
        try:
            stack = [(root, False)]
            while stack:
                node, ready = stack.pop()
                if id(node) in memo:
                    continue
                if ready:
                    method = self._expr_table.get(type(node))
                    if method is None:
                        raise TIRError(f"{type(self).__name__} cannot visit a {type(node).__name__}")
                    memo[id(node)] = (node, method(self, node))  # the node is kept alive so ids stay unique
                    continue
                stack.append((node, True))
                for child in reversed(dataflow_operands(node)):
                    if id(child) not in memo:
                        stack.append((child, False))
            return memo[id(root)][1]
        finally:
            self._memo = None
            self._depth = saved_depth

    def visit_stmt(self, stmt):
        """Visit a statement: the result of ``visit_<kind>(stmt)``."""
        method = self._stmt_table.get(type(stmt))
        if method is None:
            raise TIRError(f"{type(self).__name__} cannot visit a {type(stmt).__name__} as a statement")
        return method(self, stmt)

    def visit_size_var(self, op):
        return self.visit_var(op)

    def __call__(self, node):
        return self.visit_stmt(node) if isinstance(node, S.Stmt) else self.visit_expr(node)


class ExprFunctor(_Functor):
    """Dispatch on expression kind; subclasses define the ``visit_<kind>`` methods they handle."""


class StmtFunctor(_Functor):
    """Dispatch on statement kind; subclasses define the ``visit_<kind>`` methods they handle."""


def _binary_visit(self, op):
    self.visit_expr(op.a)
    self.visit_expr(op.b)


class StmtExprVisitor(_Functor):
    """Visits every statement and expression; override ``visit_<kind>`` and call ``super()`` to keep descending.

    Examples
    --------
    >>> class CountLoads(StmtExprVisitor):
    ...     def __init__(self):
    ...         self.count = 0
    ...     def visit_buffer_load(self, op):
    ...         self.count += 1
    ...         super().visit_buffer_load(op)
    """

    def visit_var(self, op):
        pass

    def visit_int_imm(self, op):
        pass

    def visit_float_imm(self, op):
        pass

    def visit_string_imm(self, op):
        pass

    visit_add = visit_sub = visit_mul = visit_div = visit_mod = visit_floor_div = visit_floor_mod = _binary_visit
    visit_min = visit_max = visit_eq = visit_ne = visit_lt = visit_le = visit_gt = visit_ge = _binary_visit
    visit_and = visit_or = _binary_visit

    def visit_not(self, op):
        self.visit_expr(op.a)

    def visit_cast(self, op):
        self.visit_expr(op.value)

    def visit_select(self, op):
        self.visit_expr(op.condition)
        self.visit_expr(op.true_value)
        self.visit_expr(op.false_value)

    def visit_ramp(self, op):
        self.visit_expr(op.base)
        self.visit_expr(op.stride)

    def visit_broadcast(self, op):
        self.visit_expr(op.value)

    def visit_let(self, op):
        self.visit_expr(op.value)
        self.visit_expr(op.body)

    def visit_call(self, op):
        for a in op.args:
            self.visit_expr(a)

    def visit_buffer_load(self, op):
        for i in op.indices:
            self.visit_expr(i)

    def visit_producer_load(self, op):
        for i in op.indices:
            self.visit_expr(i)

    def visit_reduce(self, op):
        for iv in op.axis:
            self.visit_expr(iv.dom.min)
            self.visit_expr(iv.dom.extent)
        for s in op.source:
            self.visit_expr(s)
        for s in op.init:
            self.visit_expr(s)
        self.visit_expr(op.condition)

    def visit_for(self, op):
        self.visit_expr(op.min)
        self.visit_expr(op.extent)
        self.visit_stmt(op.body)

    def visit_while(self, op):
        self.visit_expr(op.condition)
        self.visit_stmt(op.body)

    def visit_buffer_store(self, op):
        self.visit_expr(op.value)
        for i in op.indices:
            self.visit_expr(i)

    def visit_allocate(self, op):
        for e in op.extents:
            self.visit_expr(e)
        self.visit_expr(op.condition)
        self.visit_stmt(op.body)

    def visit_decl_buffer(self, op):
        self.visit_stmt(op.body)

    def visit_buffer_realize(self, op):
        self.visit_prefetch(op)
        self.visit_expr(op.condition)
        self.visit_stmt(op.body)

    def visit_prefetch(self, op):
        for r in op.bounds:
            self.visit_expr(r.min)
            self.visit_expr(r.extent)

    def visit_seq_stmt(self, op):
        for s in op.seq:
            self.visit_stmt(s)

    def visit_if_then_else(self, op):
        self.visit_expr(op.condition)
        self.visit_stmt(op.then_case)
        if op.else_case is not None:
            self.visit_stmt(op.else_case)

    def visit_let_stmt(self, op):
        self._visit_chain(op)

    def visit_evaluate(self, op):
        self.visit_expr(op.value)

    def visit_attr_stmt(self, op):
        self._visit_chain(op)

    def visit_assert_stmt(self, op):
        self._visit_chain(op)

    def visit_block_realize(self, op):
        for v in op.iter_values:
            self.visit_expr(v)
        self.visit_expr(op.predicate)
        self.visit_stmt(op.block)

    def visit_block(self, op):
        if op.init is not None:
            self.visit_stmt(op.init)
        self.visit_stmt(op.body)

    def _visit_chain(self, op):
        """Visit a chain of let/assert/attr statements with a loop (MakePackedAPI makes long ones)."""
        chain = _body_chain(self, op, StmtExprVisitor)
        for link in chain:
            for value in _chain_operands(link):
                self.visit_expr(value)
        self.visit_stmt(chain[-1].body)


def _binary_mutate(self, op):
    a = self.visit_expr(op.a)
    b = self.visit_expr(op.b)
    if a is op.a and b is op.b:
        return op
    a, b = match_index_dtypes(a, b)
    return type(op)(a, b, span=op.span)


def match_index_dtypes(a, b):
    """``a`` and ``b`` with one dtype when a rewrite gave them integer dtypes of different widths: both in the wider
    one (TVM's promotion; see :mod:`kiln.tir.dtype_semantics`). Other operands are returned as they are."""
    if a.dtype == b.dtype or not (_dt.is_integer(a.dtype) and _dt.is_integer(b.dtype)):
        return a, b
    if _dt.lanes(a.dtype) != _dt.lanes(b.dtype):
        return a, b
    wide = _dt.binary_result(a.dtype, b.dtype)
    return _op.cast(a, wide), _op.cast(b, wide)


def _changed(new, old) -> bool:
    return len(new) != len(old) or any(x is not y for x, y in zip(new, old, strict=True))


class StmtExprMutator(_Functor):
    """Rebuilds statements and expressions bottom-up; a node whose children did not change is returned as is.

    Examples
    --------
    >>> class ZeroToOne(StmtExprMutator):
    ...     def visit_int_imm(self, op):
    ...         return tir.IntImm(op.dtype, 1) if op.value == 0 else op
    """

    def visit_var(self, op):
        return op

    def visit_int_imm(self, op):
        return op

    def visit_float_imm(self, op):
        return op

    def visit_string_imm(self, op):
        return op

    visit_add = visit_sub = visit_mul = visit_div = visit_mod = visit_floor_div = visit_floor_mod = _binary_mutate
    visit_min = visit_max = visit_eq = visit_ne = visit_lt = visit_le = visit_gt = visit_ge = _binary_mutate
    visit_and = visit_or = _binary_mutate

    def visit_not(self, op):
        return op.with_fields(a=self.visit_expr(op.a))

    def visit_cast(self, op):
        return op.with_fields(value=self.visit_expr(op.value))

    def visit_select(self, op):
        condition = self.visit_expr(op.condition)
        true_value, false_value = match_index_dtypes(self.visit_expr(op.true_value), self.visit_expr(op.false_value))
        return op.with_fields(condition=condition, true_value=true_value, false_value=false_value)

    def visit_ramp(self, op):
        return op.with_fields(base=self.visit_expr(op.base), stride=self.visit_expr(op.stride))

    def visit_broadcast(self, op):
        return op.with_fields(value=self.visit_expr(op.value))

    def visit_let(self, op):
        return op.with_fields(value=self.visit_expr(op.value), body=self.visit_expr(op.body))

    def visit_call(self, op):
        args = tuple(self.visit_expr(a) for a in op.args)
        return op.with_fields(args=args) if _changed(args, op.args) else op

    def visit_buffer_load(self, op):
        indices = tuple(self.visit_expr(i) for i in op.indices)
        return op.with_fields(indices=indices) if _changed(indices, op.indices) else op

    def visit_producer_load(self, op):
        indices = tuple(self.visit_expr(i) for i in op.indices)
        return op.with_fields(indices=indices) if _changed(indices, op.indices) else op

    def visit_reduce(self, op):
        source = tuple(self.visit_expr(s) for s in op.source)
        init = tuple(self.visit_expr(s) for s in op.init)
        cond = self.visit_expr(op.condition)
        if not _changed(source, op.source) and not _changed(init, op.init) and cond is op.condition:
            return op
        return op.with_fields(source=source, init=init, condition=cond)

    def visit_for(self, op):
        return op.with_fields(min=self.visit_expr(op.min), extent=self.visit_expr(op.extent),
                              body=self.visit_stmt(op.body))

    def visit_while(self, op):
        return op.with_fields(condition=self.visit_expr(op.condition), body=self.visit_stmt(op.body))

    def visit_buffer_store(self, op):
        value = self.visit_expr(op.value)
        indices = tuple(self.visit_expr(i) for i in op.indices)
        if value is op.value and not _changed(indices, op.indices):
            return op
        return op.with_fields(value=value, indices=indices)

    def visit_allocate(self, op):
        extents = tuple(self.visit_expr(e) for e in op.extents)
        cond = self.visit_expr(op.condition)
        body = self.visit_stmt(op.body)
        if not _changed(extents, op.extents) and cond is op.condition and body is op.body:
            return op
        return op.with_fields(extents=extents, condition=cond, body=body)

    def visit_decl_buffer(self, op):
        return op.with_fields(body=self.visit_stmt(op.body))

    def visit_buffer_realize(self, op):
        return op.with_fields(bounds=self._ranges(op.bounds), condition=self.visit_expr(op.condition),
                              body=self.visit_stmt(op.body))

    def visit_prefetch(self, op):
        return op.with_fields(bounds=self._ranges(op.bounds))

    def _ranges(self, ranges):
        out = tuple(r.with_fields(min=self.visit_expr(r.min), extent=self.visit_expr(r.extent)) for r in ranges)
        return ranges if not _changed(out, ranges) else out

    def visit_seq_stmt(self, op):
        seq = tuple(self.visit_stmt(s) for s in op.seq)
        if not _changed(seq, op.seq):
            return op
        return S.stmt_seq(*seq)

    def visit_if_then_else(self, op):
        cond = self.visit_expr(op.condition)
        then_case = self.visit_stmt(op.then_case)
        else_case = self.visit_stmt(op.else_case) if op.else_case is not None else None
        return op.with_fields(condition=cond, then_case=then_case, else_case=else_case)

    def visit_let_stmt(self, op):
        return self._mutate_chain(op)

    def visit_evaluate(self, op):
        return op.with_fields(value=self.visit_expr(op.value))

    def visit_attr_stmt(self, op):
        return self._mutate_chain(op)

    def visit_assert_stmt(self, op):
        return self._mutate_chain(op)

    def visit_block_realize(self, op):
        values = tuple(self.visit_expr(v) for v in op.iter_values)
        pred, block = self.visit_expr(op.predicate), self.visit_stmt(op.block)
        if not _changed(values, op.iter_values) and pred is op.predicate and block is op.block:
            return op
        return op.with_fields(iter_values=values, predicate=pred, block=block)

    def visit_block(self, op):
        init = self.visit_stmt(op.init) if op.init is not None else None
        return op.with_fields(init=init, body=self.visit_stmt(op.body))

    def _mutate_chain(self, op):
        """Mutate a chain of let/assert/attr statements with a loop (MakePackedAPI makes long ones)."""
        chain = _body_chain(self, op, StmtExprMutator)
        new_fields = [{name: self.visit_expr(value) for name, value in _chain_fields(link)} for link in chain]
        body = self.visit_stmt(chain[-1].body)
        for link, fields in zip(reversed(chain), reversed(new_fields), strict=True):
            body = link.with_fields(body=body, **fields)
        return body


class ExprVisitor(StmtExprVisitor):
    """An expression-only visitor (TVM's ``ExprVisitor``); statements are visited too if given."""


class ExprMutator(StmtExprMutator):
    """An expression-only mutator (TVM's ``ExprMutator``)."""
