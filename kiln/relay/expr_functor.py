"""ExprFunctor, ExprVisitor, ExprMutator: TVM's overridable visitor API, without deep Python recursion.

``visit(expr)`` memoizes by node identity, so a subexpression shared by many users is visited once. Dataflow nodes
(Call, Tuple, TupleGetItem) are first walked in post-order with an explicit stack, so by the time ``visit_call`` calls
``self.visit(arg)`` the argument is already in the memo: a chain of 10,000 operators needs no recursion (TVM's
``MixedModeMutator`` trick). Let chains are walked with a loop in ``visit_let`` for the same reason; a subclass that
overrides ``visit_let`` on deep let chains should use :meth:`ExprFunctor.let_chain` too.

Dispatch is a per-class table built once (``Call -> visit_call``), not an ``isinstance`` chain.
"""

from ..error import KilnError
from ..ir.adt import Constructor
from ..ir.expr import GlobalVar
from ..ir.op import Op
from .adt import Match, PatternConstructor, PatternTuple, PatternVar
from .expr import Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from .function import Function

_METHOD_OF = {
    Var: "visit_var",
    GlobalVar: "visit_global_var",
    Constant: "visit_constant",
    Tuple: "visit_tuple",
    TupleGetItem: "visit_tuple_getitem",
    Call: "visit_call",
    Let: "visit_let",
    If: "visit_if",
    Function: "visit_function",
    Op: "visit_op",
    Match: "visit_match",
    Constructor: "visit_constructor",
    RefCreate: "visit_ref_create",
    RefRead: "visit_ref_read",
    RefWrite: "visit_ref_write",
}


def dataflow_children(expr):
    """The children the iterative pre-pass walks (operands of Call, Tuple and TupleGetItem)."""
    kind = type(expr)
    if kind is Call:
        return expr.args if isinstance(expr.op, Op | GlobalVar) else (expr.op, *expr.args)
    if kind is Tuple:
        return expr.fields
    if kind is TupleGetItem:
        return (expr.tuple_value,)
    return ()


_DATAFLOW = (Call, Tuple, TupleGetItem)


class ExprFunctor:
    """Base visitor: ``visit(expr)`` dispatches to ``visit_<kind>`` and memoizes the result by node identity."""

    _dispatch_table: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._dispatch_table = {kind: getattr(cls, name) for kind, name in _METHOD_OF.items() if hasattr(cls, name)}

    def __init__(self):
        self.memo_map = {}

    def _dispatch(self, expr):
        method = self._dispatch_table.get(type(expr))
        if method is None:
            raise KilnError(f"{type(self).__name__} cannot visit a {type(expr).__name__}")
        return method(self, expr)

    def visit(self, expr):
        """Visit ``expr`` (memoized): the result of ``visit_<kind>(expr)``."""
        memo = self.memo_map
        if expr in memo:
            return memo[expr]
        if type(expr) in _DATAFLOW:
            self._visit_post_order(expr)
            return memo[expr]
        result = self._dispatch(expr)
        memo[expr] = result
        return result

    def prune(self, expr) -> bool:
        """Whether ``visit`` may treat ``expr`` as a leaf, not walking its children first (default: never)."""
        return False

    def _visit_post_order(self, root):
        memo = self.memo_map
        stack = [(root, False)]
        while stack:
            expr, ready = stack.pop()
            if expr in memo:
                continue
            if ready or type(expr) not in _DATAFLOW or self.prune(expr):
                memo[expr] = self._dispatch(expr)
                continue
            stack.append((expr, True))
            for child in reversed(dataflow_children(expr)):
                if child not in memo:
                    stack.append((child, False))

    @staticmethod
    def let_chain(let):
        """Split nested lets into ``([let1, let2, ...], innermost_body)`` so they can be handled with a loop."""
        chain = []
        while isinstance(let, Let):
            chain.append(let)
            let = let.body
        return chain, let


class ExprVisitor(ExprFunctor):
    """Visits every subexpression once; override ``visit_<kind>`` and call ``super()`` to keep descending.

    Examples
    --------
    >>> class CountCalls(ExprVisitor):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.count = 0
    ...     def visit_call(self, call):
    ...         self.count += 1
    ...         super().visit_call(call)
    """

    def visit_var(self, var):
        pass

    def visit_global_var(self, gv):
        pass

    def visit_constant(self, const):
        pass

    def visit_op(self, op):
        pass

    def visit_tuple(self, tup):
        for field in tup.fields:
            self.visit(field)

    def visit_tuple_getitem(self, item):
        self.visit(item.tuple_value)

    def visit_call(self, call):
        self.visit(call.op)
        for arg in call.args:
            self.visit(arg)

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        for binding in chain:
            self.visit(binding.var)
            self.visit(binding.value)
        self.visit(body)
        for binding in chain[1:]:
            self.memo_map[binding] = None

    def visit_if(self, node):
        self.visit(node.cond)
        self.visit(node.true_branch)
        self.visit(node.false_branch)

    def visit_function(self, fn):
        for param in fn.params:
            self.visit(param)
        self.visit(fn.body)

    def visit_constructor(self, ctor):
        pass

    def visit_ref_create(self, ref):
        self.visit(ref.value)

    def visit_ref_read(self, ref):
        self.visit(ref.ref)

    def visit_ref_write(self, ref):
        self.visit(ref.ref)
        self.visit(ref.value)

    def visit_match(self, match):
        self.visit(match.data)
        for clause in match.clauses:
            self.visit_clause(clause)

    def visit_clause(self, clause):
        """Visit a clause: its pattern, then its right-hand side."""
        self.visit_pattern(clause.lhs)
        self.visit(clause.rhs)

    def visit_pattern(self, pattern):
        """Visit a pattern: the variables it binds and the constructors it names."""
        kind = type(pattern)
        if kind is PatternVar:
            self.visit(pattern.var)
        elif kind is PatternConstructor:
            self.visit(pattern.constructor)
            for sub in pattern.patterns:
                self.visit_pattern(sub)
        elif kind is PatternTuple:
            for sub in pattern.patterns:
                self.visit_pattern(sub)


class ExprMutator(ExprFunctor):
    """Rebuilds an expression bottom-up; a node whose children are unchanged is returned as is (identity kept).

    Examples
    --------
    >>> class ReluToSigmoid(ExprMutator):
    ...     def visit_call(self, call):
    ...         call = super().visit_call(call)
    ...         if call.op == Op.get("nn.relu"):
    ...             return relay.sigmoid(call.args[0])
    ...         return call
    """

    def visit_var(self, var):
        return var

    def visit_global_var(self, gv):
        return gv

    def visit_constant(self, const):
        return const

    def visit_op(self, op):
        return op

    def visit_tuple(self, tup):
        fields = tuple(self.visit(f) for f in tup.fields)
        return tup.with_fields(fields=fields) if _changed(fields, tup.fields) else tup

    def visit_tuple_getitem(self, item):
        return item.with_fields(tuple_value=self.visit(item.tuple_value))

    def visit_call(self, call):
        op = self.visit(call.op)
        args = tuple(self.visit(a) for a in call.args)
        if op is call.op and not _changed(args, call.args):
            return call
        return call.with_fields(op=op, args=args)

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        bindings = [(self.visit(b.var), self.visit(b.value)) for b in chain]
        result = self.visit(body)
        for binding, (new_var, new_value) in zip(reversed(chain), reversed(bindings), strict=True):
            result = binding.with_fields(var=new_var, value=new_value, body=result)
            self.memo_map[binding] = result
        return result

    def visit_if(self, node):
        return node.with_fields(
            cond=self.visit(node.cond),
            true_branch=self.visit(node.true_branch),
            false_branch=self.visit(node.false_branch),
        )

    def visit_function(self, fn):
        params = tuple(self.visit(p) for p in fn.params)
        body = self.visit(fn.body)
        if not _changed(params, fn.params) and body is fn.body:
            return fn
        return fn.with_fields(params=params, body=body)

    def visit_constructor(self, ctor):
        return ctor

    def visit_ref_create(self, ref):
        return ref.with_fields(value=self.visit(ref.value))

    def visit_ref_read(self, ref):
        return ref.with_fields(ref=self.visit(ref.ref))

    def visit_ref_write(self, ref):
        return ref.with_fields(ref=self.visit(ref.ref), value=self.visit(ref.value))

    def visit_match(self, match):
        data = self.visit(match.data)
        clauses = tuple(self.visit_clause(c) for c in match.clauses)
        if data is match.data and not _changed(clauses, match.clauses):
            return match
        return match.with_fields(data=data, clauses=clauses)

    def visit_clause(self, clause):
        """Rebuild a clause from its visited pattern and right-hand side."""
        return clause.with_fields(lhs=self.visit_pattern(clause.lhs), rhs=self.visit(clause.rhs))

    def visit_pattern(self, pattern):
        """Rebuild a pattern: its variables and constructors visited (identity kept when nothing changes)."""
        kind = type(pattern)
        if kind is PatternVar:
            return pattern.with_fields(var=self.visit(pattern.var))
        if kind is PatternConstructor:
            subs = tuple(self.visit_pattern(p) for p in pattern.patterns)
            ctor = self.visit(pattern.constructor)
            if ctor is pattern.constructor and not _changed(subs, pattern.patterns):
                return pattern
            return pattern.with_fields(constructor=ctor, patterns=subs)
        if kind is PatternTuple:
            subs = tuple(self.visit_pattern(p) for p in pattern.patterns)
            return pattern.with_fields(patterns=subs) if _changed(subs, pattern.patterns) else pattern
        return pattern


def _changed(new, old) -> bool:
    return any(a is not b for a, b in zip(new, old, strict=True))


def expr_children(expr) -> tuple:
    """Every direct subexpression of ``expr`` in TVM's visiting order (for a Call: the callee, then the arguments)."""
    kind = type(expr)
    if kind is Call:
        return (expr.op, *expr.args)
    if kind is Tuple:
        return expr.fields
    if kind is TupleGetItem:
        return (expr.tuple_value,)
    if kind is Let:
        return (expr.var, expr.value, expr.body)
    if kind is If:
        return (expr.cond, expr.true_branch, expr.false_branch)
    if kind is Function:
        return (*expr.params, expr.body)
    if kind is Match:
        return (expr.data, *(v for c in expr.clauses for v in (*_pattern_exprs(c.lhs), c.rhs)))
    if kind is RefCreate:
        return (expr.value,)
    if kind is RefRead:
        return (expr.ref,)
    if kind is RefWrite:
        return (expr.ref, expr.value)
    return ()


def _pattern_exprs(pattern) -> tuple:
    """The expressions a pattern holds (its variables and constructors), left to right."""
    out: list = []
    stack = [pattern]
    while stack:
        p = stack.pop()
        if type(p) is PatternVar:
            out.append(p.var)
        elif type(p) is PatternConstructor:
            out.append(p.constructor)
            stack.extend(reversed(p.patterns))
        elif type(p) is PatternTuple:
            stack.extend(reversed(p.patterns))
    return tuple(out)


def post_order_visit(expr, fvisit):
    """Call ``fvisit(node)`` on every subexpression of ``expr`` once, children before parents (no recursion).

    Examples
    --------
    >>> ops = []
    >>> post_order_visit(mod["main"], lambda e: ops.append(e.op.name) if isinstance(e, relay.Call) else None)
    """
    seen = set()
    stack = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        if ready:
            fvisit(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(expr_children(node)) if child not in seen)
