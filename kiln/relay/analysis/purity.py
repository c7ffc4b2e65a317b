"""Which let-bound values are pure (TVM's ``PurityVisitor`` in ``src/relay/transforms/dead_code.cc``).

A value is *pure* when evaluating it has no effect other than producing the value, so DeadCodeElimination may drop
or move it. Every expression gets two facts: ``pure_eval`` (evaluating it is pure) and ``pure_call`` (calling it,
when it is a function, is pure; always true for first-order values). The rules, as TVM's:

* an operator is call-pure unless it is ``TOpIsStateful`` (the memory and VM dialects); constants, constructors and
  ``ref(...)`` are pure; ``ref_read`` and ``ref_write`` are not (they observe or change state);
* a call is eval-pure when its callee and arguments are eval-pure and the callee is call-pure;
* a function is a value (eval-pure); it is call-pure when its body is. A global function's purity is its body's
  (a recursive one is assumed pure while its body is visited); a ``tir.PrimFunc`` or ``Extern`` function is
  call-impure (it writes its outputs);
* call purity is not tracked through parameters of function type, tuple fields, references or data types: a
  function taken from one of those is assumed call-impure.

The analysis needs checked types (whether an expression is a function). ``call_lowered(f, (args))`` is read as the
call ``f(args)``, so a lowered kernel call is impure.
"""

from ...ir.op import Op
from ...ir.type import FuncType
from ..adt import PatternConstructor, PatternTuple, PatternVar
from ..expr import Tuple
from ..expr_functor import ExprFunctor
from ..function import Function

__all__ = ["let_purity"]

_PURE = (True, True)


def _first_order(expr) -> bool:
    return not isinstance(expr.checked_type_, FuncType)


def _vanilla_call(call):
    """``(callee, args)`` of a call, reading ``call_lowered(f, (args))`` as ``f(args)``."""
    if isinstance(call.op, Op) and call.op.name == "call_lowered" and isinstance(call.args[1], Tuple):
        return call.args[0], call.args[1].fields
    return call.op, call.args


class _PurityVisitor(ExprFunctor):
    """Returns ``(pure_eval, pure_call)`` per expression; records the purity of every let-bound variable."""

    def __init__(self, mod):
        super().__init__()
        self.mod = mod
        self.var_purity: dict = {}  # Var.vid -> (pure_eval, pure_call)
        self.global_purity: dict = {}  # GlobalVar name -> (pure_eval, pure_call)

    def visit_constant(self, const):
        return _PURE

    def visit_constructor(self, ctor):
        return _PURE

    def visit_op(self, op):
        return True, not op.get_attr("TOpIsStateful")

    def visit_global_var(self, gv):
        func = self.mod[gv] if self.mod is not None and gv in self.mod else None
        if not isinstance(func, Function) or func.attrs.get("Extern", 0):
            return True, False  # a PrimFunc or an external function: assumed to write its outputs
        return self.visit_global_function(gv, func)

    def visit_global_function(self, gv, func):
        """The purity of calling the global ``gv`` (assumed pure while its own body is visited: recursion)."""
        known = self.global_purity.get(gv.name_hint)
        if known is not None:
            return known
        self.global_purity[gv.name_hint] = _PURE
        result = self.visit(func)
        self.global_purity[gv.name_hint] = result
        return result

    def visit_var(self, var):
        known = self.var_purity.get(var.vid)
        return True, (known[1] if known is not None else _first_order(var))

    def visit_function(self, fn):
        for param in fn.params:
            self.var_purity[param.vid] = (True, _first_order(param))
        body = self.visit(fn.body)
        return True, body[0] and body[1]

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        values_pure = True
        for binding in chain:
            self.var_purity[binding.var.vid] = _PURE  # a recursive function refers to itself while visited
            value = self.visit(binding.value)
            self.var_purity[binding.var.vid] = value
            values_pure = values_pure and value[0]
        result = self.visit(body)
        return values_pure and result[0], result[1]

    def visit_call(self, call):
        callee, args = _vanilla_call(call)
        callee_purity = self.visit(callee)
        args_pure = all([self.visit(a)[0] for a in args])  # a list: every argument is visited (its lets recorded)
        return (args_pure and callee_purity[0] and callee_purity[1]), (_first_order(call) or callee_purity[1])

    def visit_if(self, node):
        cond, then, other = self.visit(node.cond), self.visit(node.true_branch), self.visit(node.false_branch)
        return cond[0] and then[0] and other[0], then[1] and other[1]

    def visit_tuple(self, tup):
        return all([self.visit(f)[0] for f in tup.fields]), True

    def visit_tuple_getitem(self, item):
        return self.visit(item.tuple_value)[0], _first_order(item)

    def visit_ref_create(self, ref):
        self.visit(ref.value)
        return _PURE

    def visit_ref_write(self, ref):
        self.visit(ref.ref)
        self.visit(ref.value)
        return False, True

    def visit_ref_read(self, ref):
        self.visit(ref.ref)
        return False, _first_order(ref)

    def visit_match(self, match):
        data = self.visit(match.data)
        pure_eval, pure_call = data[0], True
        for clause in match.clauses:
            self._bind_pattern(clause.lhs)
            rhs = self.visit(clause.rhs)
            pure_eval, pure_call = pure_eval and rhs[0], pure_call and rhs[1]
        return pure_eval, pure_call

    def _bind_pattern(self, pattern):
        stack = [pattern]
        while stack:
            p = stack.pop()
            if isinstance(p, PatternVar):
                self.var_purity[p.var.vid] = (True, _first_order(p.var))
            elif isinstance(p, PatternConstructor | PatternTuple):
                stack.extend(p.patterns)


def let_purity(mod) -> dict:
    """``{Var.vid: pure}`` for every let-bound variable of the module's Relay functions (``pure``: evaluating the
    bound value is pure, so the binding may be dropped or inlined). Primitive and external functions are skipped.

    Parameters
    ----------
    mod : IRModule
        A typed module.

    Returns
    -------
    dict
        Maps the ``vid`` of each let-bound variable (and of parameters, which are always pure) to a bool.
    """
    visitor = _PurityVisitor(mod)
    for gv, func in list(mod.functions.items()):
        if isinstance(func, Function) and not func.attrs.get("Primitive", 0) and not func.attrs.get("Extern", 0):
            visitor.visit_global_function(gv, func)
    return {vid: purity[0] for vid, purity in visitor.var_purity.items()}
