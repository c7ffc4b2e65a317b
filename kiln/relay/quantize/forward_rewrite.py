"""Forward rewriting with temporary expressions (TVM's ``ForwardRewrite`` and ``TempExpr``), the driver of the
quantization passes.

The dataflow graph is rebuilt from the inputs forward. At each call of an operator that has a rule (the op
attribute named by ``attr_name``), the rule gets the original call and its rebuilt arguments and returns the
replacement: an expression, a :class:`TempExpr` (a value still being built, such as an integer tensor and its
scale, that carries information to the next rule), or None to leave the call as it is. A TempExpr reaching an
operator without a rule, or anything that is not a call, tuple or projection, is first turned back into an
ordinary expression (:meth:`TempExpr.realize`). Tuples keep TempExpr fields and a projection of a tuple built here
takes the field directly, so values flow through ``split`` and ``concatenate``. ``fmulti_ref`` is applied to the
rebuilt value of every expression used more than once (quantization marks such values as inputs).
"""

from ...error import KilnError
from ...ir.op import Op
from ..expr import Call, If, Let, Tuple, TupleGetItem
from ..function import Function

__all__ = ["TempExpr", "forward_rewrite"]


class TempExpr:
    """A value under construction during a forward rewrite; :meth:`realize` makes it an expression."""

    def realize(self):
        raise NotImplementedError(f"{type(self).__name__} must define realize()")


def _realize(value):
    return value.realize() if isinstance(value, TempExpr) else value


def _operands(expr) -> list:
    if isinstance(expr, Call):
        return ([] if isinstance(expr.op, Op) else [expr.op]) + list(expr.args)
    if isinstance(expr, Tuple):
        return list(expr.fields)
    if isinstance(expr, TupleGetItem):
        return [expr.tuple_value]
    return []


class _ForwardRewriter:
    def __init__(self, attr_name, fcontext, fmulti_ref):
        self.attr_name, self.fcontext, self.fmulti_ref = attr_name, fcontext, fmulti_ref
        self.memo: dict = {}
        self.refs: dict = {}

    def count_refs(self, root):
        seen, stack = set(), [root]
        while stack:
            expr = stack.pop()
            if expr in seen:
                continue
            seen.add(expr)
            kids = _operands(expr)
            if isinstance(expr, Let):
                kids = [expr.value, expr.body]
            elif isinstance(expr, If):
                kids = [expr.cond, expr.true_branch, expr.false_branch]
            for kid in kids:
                self.refs[kid] = self.refs.get(kid, 0) + 1
                stack.append(kid)

    def arg(self, expr):
        """The rebuilt value of an operand (a TempExpr allowed), through ``fmulti_ref`` when it is shared."""
        value = self.memo[expr]
        if self.fmulti_ref is not None and self.refs.get(expr, 0) > 1:
            value = self.fmulti_ref(value)
        return value

    def visit(self, root):
        """The rebuilt value of ``root`` (possibly a TempExpr): operands first, without recursion."""
        stack = [(root, False)]
        while stack:
            expr, ready = stack.pop()
            if expr in self.memo:
                continue
            if not ready and _operands(expr):
                stack.append((expr, True))
                stack.extend((k, False) for k in _operands(expr) if k not in self.memo)
                continue
            self.memo[expr] = self.rewrite(expr)
        return self.memo[root]

    def rewrite(self, expr):
        if isinstance(expr, Call):
            return self.rewrite_call(expr)
        if isinstance(expr, Tuple):
            fields = [self.arg(f) for f in expr.fields]
            if all(f is o for f, o in zip(fields, expr.fields, strict=True)):
                return expr
            return _TupleValue(expr, fields)
        if isinstance(expr, TupleGetItem):
            tup = self.arg(expr.tuple_value)
            if isinstance(tup, _TupleValue):
                return tup.fields[expr.index]
            if isinstance(tup, Tuple):
                return tup.fields[expr.index]
            return expr if tup is expr.tuple_value else TupleGetItem(_realize(tup), expr.index)
        if isinstance(expr, Let):
            return expr.with_fields(value=self.full(expr.value), body=self.full(expr.body))
        if isinstance(expr, If):
            return expr.with_fields(cond=self.full(expr.cond), true_branch=self.full(expr.true_branch),
                                    false_branch=self.full(expr.false_branch))
        if isinstance(expr, Function):
            return expr.with_fields(body=self.full(expr.body))
        return expr  # variables, constants, operators, global functions

    def full(self, expr):
        return _realize(self.visit(expr))

    def rewrite_call(self, call):
        op = call.op
        rule = op.get_attr(self.attr_name) if isinstance(op, Op) else None
        new_op = op if isinstance(op, Op) else _realize(self.arg(op))
        args = [self.arg(a) for a in call.args]
        if rule is not None:
            context = self.fcontext(call) if self.fcontext is not None else None
            result = rule(call, args, context)
            if result is not None:
                return result
        args = [_realize(a) for a in args]
        if new_op is op and all(a is o for a, o in zip(args, call.args, strict=True)):
            return call
        return Call(new_op, tuple(args), call.attrs, span=call.span)


class _TupleValue(TempExpr):
    """A tuple whose fields may be TempExprs (realized field by field)."""

    def __init__(self, node, fields):
        self.node, self.fields = node, list(fields)

    def __iter__(self):
        return iter(self.fields)

    def __len__(self):
        return len(self.fields)

    def __getitem__(self, index):
        return self.fields[index]

    def realize(self):
        return Tuple([_realize(f) for f in self.fields], span=self.node.span)


def forward_rewrite(expr, attr_name, fcontext=None, fmulti_ref=None):
    """``expr`` rewritten by the rules registered as op attribute ``attr_name`` (see the module docstring).

    Parameters
    ----------
    expr : relay.Expr or relay.Function
        What to rewrite (a function's body is rewritten and realized).
    attr_name : str
        The op attribute holding each operator's rule ``(ref_call, new_args, ctx) -> Expr | TempExpr | None``.
    fcontext : callable, optional
        ``ref_call -> ctx``, the third argument of the rules.
    fmulti_ref : callable, optional
        Applied to the rebuilt value of every expression used more than once.
    """
    if not isinstance(attr_name, str):
        raise KilnError(f"forward_rewrite: the rule attribute must be named by a str, got {attr_name!r}")
    rewriter = _ForwardRewriter(attr_name, fcontext, fmulti_ref)
    rewriter.count_refs(expr)
    if isinstance(expr, Function):
        return expr.with_fields(body=rewriter.full(expr.body))
    return rewriter.full(expr)

