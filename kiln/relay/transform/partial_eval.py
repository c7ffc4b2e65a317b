"""PartialEvaluate: run at compile time whatever the program's known values allow (TVM's ``partial_eval.cc``).

The evaluator is the interpreter with partially static values (``partial_eval_values.py``): every expression
evaluates to a :class:`PStatic`, what is known of it now (a tensor, a tuple, an ADT value, a reference, a function)
plus an atomic expression computing it at run time. The run-time code is generated into a let list as it goes, so it
stays in A-normal form and nothing is duplicated.

- An operator applied to known tensors is evaluated (the reference interpreter) unless it is stateful; otherwise the
  call is emitted.
- A call of a known function is inlined while its *fuel* allows (see ``partial_eval_values.py``); otherwise a call
  is emitted. Every function also gets a run-time version: its body evaluated with unknown parameters.
- ``if`` on a known condition and ``match`` on a known value take their branch; on unknown ones every branch is
  evaluated on a copy of the reference store, which is then invalidated.
- References are tracked in a store with rollback; a write through an unknown reference or an unknown call forgets
  every reference's value.

The result has much dead code (every value is let-bound): run DeadCodeElimination after it, as TVM's tests do.
A program with shared subexpressions is first put in A-normal form (TVM refuses it), so effects are not repeated.
"""

from dataclasses import dataclass

import numpy as np

from ...error import InternalError, KilnError
from ...ir.adt import Constructor
from ...ir.expr import GlobalVar
from ...ir.op import Op
from ...ir.transform import ModulePass, PassInfo, register_pass
from ...ir.type import TensorType
from ...runtime.ndarray import array as nd_array
from ..adt import Clause, Match, PatternConstructor, PatternTuple, PatternVar, PatternWildcard, pattern_vars
from ..expr import Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from ..function import Function
from .partial_eval_values import (
    DeDup,
    Environment,
    FSeq,
    FTop,
    LetList,
    Remap,
    SConstructor,
    SFunc,
    SRef,
    STensor,
    Store,
    STuple,
    argument_fuel,
    as_call,
    free_vars_by_vid,
    has_static,
    no_static,
    type_subst,
)

_MATCH, _NO_MATCH, _UNKNOWN = "match", "no match", "unknown"


class _ReflectError(Exception):
    """A value needed at compile time is not known."""


def _reify(value, ll):
    """The PStatic of a value the interpreter computed (tensor or tuple), its code bound in ``ll``."""
    if isinstance(value, tuple):
        fields = [_reify(v, ll) for v in value]
        return has_static(STuple(fields), ll.push(Tuple(tuple(f.dynamic for f in fields))))
    array = np.asarray(value)
    return has_static(STensor(array), ll.push(Constant(nd_array(array))))


def _reflect(ps):
    """The expression of a statically known tensor or tuple of them; _ReflectError otherwise."""
    static = ps.pstatic
    if isinstance(static, STensor):
        return Constant(nd_array(static.data))
    if isinstance(static, STuple):
        return Tuple(tuple(_reflect(f) for f in static.fields))
    raise _ReflectError


def _is_stateful(expr) -> bool:
    from ..expr_functor import post_order_visit

    found = []
    post_order_visit(expr, lambda e: found.append(e) if isinstance(e, Op) and e.get_attr("TOpIsStateful") else None)
    return bool(found)


class PartialEvaluator:
    """Partially evaluates the functions of one module (updated in place: give it a copy)."""

    def __init__(self, mod):
        self.mod = mod
        self.env = Environment()
        self.store = Store()
        self.gv_map: dict = {}
        self.func_map: dict = {}  # function -> its fuel id (copies made by renaming share the original's)
        self.fuel_map: dict = {}
        self._dispatch = {
            Constant: self.visit_constant, Tuple: self.visit_tuple, TupleGetItem: self.visit_tuple_getitem,
            Var: self.visit_var, GlobalVar: self.visit_global_var, If: self.visit_if,
            RefCreate: self.visit_ref_create, RefWrite: self.visit_ref_write, RefRead: self.visit_ref_read,
            Call: self.visit_call, Op: self.visit_op, Constructor: self.visit_constructor, Match: self.visit_match,
            Function: lambda f, ll: self.visit_func(f, ll, Var("x")),
        }

    # --- function ids --------------------------------------------------------------------------------------------
    def _inherit_id(self, old, new):
        if old in self.func_map:
            self.func_map[new] = self.func_map[old]

    def _fid(self, func) -> int:
        if func not in self.func_map:
            self.func_map[func] = len(self.func_map)
        return self.func_map[func]

    def initialize_func_ids(self, expr):
        from ..expr_functor import post_order_visit

        post_order_visit(expr, lambda e: self._fid(e) if isinstance(e, Function) else None)

    def dedup(self, expr):
        return DeDup(self._inherit_id).visit(expr)

    # --- expressions ---------------------------------------------------------------------------------------------
    def visit(self, expr, ll):
        while isinstance(expr, Let):  # let chains are long (A-normal form): walk them with a loop
            self.env.insert(expr.var, self.visit_named(expr.value, ll, expr.var))
            expr = expr.body
        handler = self._dispatch.get(type(expr))
        if handler is None:
            raise KilnError(f"PartialEvaluate cannot evaluate a {type(expr).__name__}")
        return handler(expr, ll)

    def visit_named(self, expr, ll, name):
        """Evaluate the value of a let binding: a function keeps the binding's variable (it may call itself)."""
        return self.visit_func(expr, ll, name) if isinstance(expr, Function) else self.visit(expr, ll)

    def visit_constant(self, const, ll):
        return has_static(STensor(const.data.numpy()), ll.push(const))

    def visit_tuple(self, tup, ll):
        fields = [self.visit(f, ll) for f in tup.fields]
        return has_static(STuple(fields), ll.push(Tuple(tuple(f.dynamic for f in fields))))

    def visit_tuple_getitem(self, item, ll):
        ps = self.visit(item.tuple_value, ll)
        if isinstance(ps.pstatic, STuple):
            return ps.pstatic.fields[item.index]
        return no_static(ll.push(TupleGetItem(ps.dynamic, item.index)))

    def visit_var(self, var, ll):
        return self.env.lookup(var)

    def visit_global_var(self, gv, ll=None):
        if gv not in self.gv_map:
            func = self.mod[gv]
            if not isinstance(func, Function):
                return no_static(gv)
            self.initialize_func_ids(func)
            f = self.visit_func_static(func, gv)
            self.gv_map[gv] = has_static(SFunc(f), gv)
            self.mod[gv] = _post_process(self.visit_func_dynamic(func, f, gv))
        return self.gv_map[gv]

    def visit_if(self, node, ll):
        cond = self.visit(node.cond, ll)
        if isinstance(cond.pstatic, STensor):
            return self.visit(node.true_branch if bool(cond.pstatic.data) else node.false_branch, ll)
        branches = []
        for branch in (node.true_branch, node.false_branch):
            with self.store.extend():
                branches.append(LetList.with_bindings(lambda inner, b=branch: self.visit(b, inner).dynamic))
        self.store.invalidate()
        return no_static(ll.push(If(cond.dynamic, *branches)))

    def visit_ref_create(self, ref, ll):
        ps = self.visit(ref.value, ll)
        cell = SRef()
        self.store.insert(cell, ps)
        return has_static(cell, ll.push(RefCreate(ps.dynamic)))

    def visit_ref_write(self, ref, ll):
        target = self.visit(ref.ref, ll)
        value = self.visit(ref.value, ll)
        if isinstance(target.pstatic, SRef):
            self.store.insert(target.pstatic, value)
        else:
            self.store.invalidate()
        return has_static(STuple([]), ll.push(RefWrite(target.dynamic, value.dynamic)))

    def visit_ref_read(self, ref, ll):
        target = self.visit(ref.ref, ll)
        if isinstance(target.pstatic, SRef):
            known = self.store.lookup(target.pstatic)
            if known is not None:
                return known
        return no_static(ll.push(RefRead(target.dynamic)))

    def visit_call(self, call, ll):
        f = self.visit(call.op, ll)
        args = [self.visit(a, ll) for a in call.args]
        if isinstance(f.pstatic, SFunc):
            return f.pstatic.func(f, args, call.attrs, call.type_args, ll)
        self.store.invalidate()
        return no_static(ll.push(as_call(f.dynamic, [a.dynamic for a in args], call.attrs, call.type_args)))

    def visit_op(self, op, ll):
        return has_static(SFunc(self.const_evaluate_func(op)), op)

    def visit_constructor(self, ctor, ll):
        def construct(self_ps, args, attrs, type_args, inner_ll):
            return has_static(SConstructor(ctor, args), inner_ll.push(as_call(ctor, [a.dynamic for a in args])))

        return has_static(SFunc(construct), ctor)

    # --- functions -----------------------------------------------------------------------------------------------
    def visit_func(self, func, ll, name):
        f = self.visit_func_static(func, name)
        renamed = self.dedup(func)
        return has_static(SFunc(f), ll.push(self.visit_func_dynamic(renamed, f, name), var=name))

    def visit_func_static(self, func, var):
        """The compile-time meaning of ``func``: inline a call while the fuel allows, else emit the call."""
        if func.is_primitive():
            return self.const_evaluate_func(func)
        captured = [(v, self.env.lookup(v)) for v in free_vars_by_vid(func)
                    if not (isinstance(var, Var) and v.vid == var.vid)]

        def apply(self_ps, args, attrs, type_args, ll):
            with self.env.extend():
                if len(args) != len(func.params):
                    raise KilnError(f"PartialEvaluate: a function of {len(func.params)} parameters called with "
                                    f"{len(args)} arguments")
                fid = self._fid(func)
                fuel = self.fuel_map.setdefault(fid, FTop())
                met, progress = fuel.meet(FSeq([argument_fuel(a) for a in args]))
                if not progress:
                    return no_static(ll.push(as_call(var, [a.dynamic for a in args], attrs, type_args)))
                self.fuel_map[fid] = met
                try:
                    renamed = self.dedup(func)
                    if isinstance(var, Var):
                        self.env.insert(var, self_ps)
                    for param, arg in zip(renamed.params, args, strict=True):
                        self.env.insert(param, arg)
                    for v, ps in captured:
                        self.env.insert(v, ps)
                    body = type_subst(renamed.body, renamed.type_params, list(type_args or ()), self._inherit_id)
                    return self.visit(body, ll)
                finally:
                    self.fuel_map[fid] = fuel

        return apply

    def visit_func_dynamic(self, func, f, self_expr):
        """The run-time version of ``func``: its body evaluated with unknown parameters and store."""
        with self.store.extend():
            self.store.invalidate()

            def body(ll):
                args = [no_static(p) for p in func.params]
                return f(has_static(SFunc(f), self_expr), args, None, func.type_params, ll).dynamic

            new = func.with_fields(body=LetList.with_bindings(body))
        self._inherit_id(func, new)
        return new

    def const_evaluate_func(self, callee):
        """Apply an operator (or primitive function) at compile time when every argument is known."""
        stateful = _is_stateful(callee)

        def apply(self_ps, args, attrs, type_args, ll):
            def emit():
                return no_static(ll.push(as_call(callee, [a.dynamic for a in args], attrs, type_args)))

            if stateful:
                return emit()
            try:
                call = as_call(callee, [_reflect(a) for a in args], attrs, type_args)
            except _ReflectError:
                return emit()
            value = self._evaluate(call)
            return emit() if value is None else _reify(value, ll)

        return apply

    def _evaluate(self, call):
        from ..interpreter import evaluate_expr
        from .infer_type import infer_type

        try:
            ttype = infer_type(call, self.mod).checked_type
            return _conform(evaluate_expr(call, mod=self.mod), ttype)
        except InternalError:
            raise
        except KilnError:  # bad values (an index out of range), or not a tensor: left for run time
            return None

    # --- match ---------------------------------------------------------------------------------------------------
    def visit_match(self, match, ll):
        data = self.visit(match.data, ll)
        with self.env.extend():
            for clause in match.clauses:
                status = self.match_pattern(clause.lhs, data)
                if status == _MATCH:
                    return self.visit(clause.rhs, ll)
                if status == _UNKNOWN:
                    return self._residual_match(match, data, ll)
        raise KilnError("PartialEvaluate: no clause of a match fits its value")

    def _residual_match(self, match, data, ll):
        clauses = []
        for clause in match.clauses:
            with self.store.extend():
                def rhs(inner, c=clause):
                    for var in pattern_vars(c.lhs):
                        self.env.insert(var, no_static(var))
                    return self.visit(c.rhs, inner).dynamic

                clauses.append(Clause(clause.lhs, LetList.with_bindings(rhs)))
        self.store.invalidate()
        return no_static(ll.push(match.with_fields(data=data.dynamic, clauses=tuple(clauses))))

    def match_pattern(self, pattern, ps):
        if isinstance(pattern, PatternWildcard):
            return _MATCH
        if isinstance(pattern, PatternVar):
            self.env.insert(pattern.var, ps)
            return _MATCH
        if isinstance(pattern, PatternConstructor):
            if not isinstance(ps.pstatic, SConstructor):
                return _UNKNOWN
            if pattern.constructor.tag != ps.pstatic.constructor.tag:
                return _NO_MATCH
            return self._match_fields(pattern.patterns, ps.pstatic.fields)
        if isinstance(pattern, PatternTuple):
            if not isinstance(ps.pstatic, STuple):
                return _UNKNOWN
            return self._match_fields(pattern.patterns, ps.pstatic.fields)
        raise KilnError(f"PartialEvaluate: unknown pattern {type(pattern).__name__}")

    def _match_fields(self, patterns, fields):
        status = _MATCH
        for pattern, field in zip(patterns, fields, strict=True):
            found = self.match_pattern(pattern, field)
            if found == _NO_MATCH:
                return _NO_MATCH
            if found == _UNKNOWN:
                status = _UNKNOWN
        return status


def _conform(value, ttype):
    """The interpreter's value with the dtypes type inference gives it."""
    if isinstance(value, tuple):
        fields = getattr(ttype, "fields", (None,) * len(value))
        return tuple(_conform(v, t) for v, t in zip(value, fields, strict=True))
    if isinstance(ttype, TensorType):
        return np.asarray(value, dtype=ttype.dtype)
    if isinstance(value, np.ndarray | np.generic | int | float | bool):
        return np.asarray(value)
    raise _NotATensor


class _NotATensor(KilnError):
    """The operator's value is not a tensor or tuple of them (left for run time)."""


def _post_process(func):
    """One variable object per identity, then fresh binders throughout (TVM's ``PostProcess``)."""
    return DeDup().visit(Remap().visit(func))


def partial_evaluate(mod):
    """A copy of ``mod`` with every Relay function partially evaluated."""
    from ..analysis.feature import Feature, detect_feature
    from .normal_form import to_a_normal_form

    mod = mod.shallow_copy()
    for gv, func in list(mod.functions.items()):
        if isinstance(func, Function) and Feature.fGraph in detect_feature(func):
            mod[gv] = to_a_normal_form(func)  # shared code would be evaluated (and its effects run) once per use
    evaluator = PartialEvaluator(mod)
    for gv in list(mod.functions):
        evaluator.visit_global_var(gv)
    return mod


@register_pass("PartialEval")  # TVM's pass name, which disabled_pass lists
@dataclass(frozen=True)
class PartialEvaluate(ModulePass):
    """Evaluate at compile time what the program's known values allow (TVM's ``relay.transform.PartialEvaluate``);
    follow it with ``DeadCodeElimination`` to drop the bindings it leaves unused."""

    info = PassInfo(1, "PartialEval")

    def transform_module(self, mod, ctx):
        return partial_evaluate(mod)
