"""ToCPS and UnCPS: continuation-passing style (TVM's ``to_cps.cc``).

With a fresh type variable ``answer``, every function ``a -> b`` becomes ``(a, b -> answer) -> answer``: instead of
returning its result it passes it to the continuation ``k`` it receives, so every call is a tail call. Control-flow
joins become explicit: ``let a = if c {x} else {y}; e`` becomes ``let f = fn (a) {e}; if c {f(x)} else {f(y)}``,
which PartialEvaluate can then specialize branch by branch.

The conversion is the higher-order one (Might's "CPS conversion"): the walk carries a *meta-continuation*, a
Python function from the value of the current expression to the code that follows. It is used at most once
(code is never duplicated), a continuation that would be used twice (the branches of an ``if``, the clauses of a
``match``) is first reified into a let-bound function, and a value handed to it is always atomic or let-bound, so
nothing is reordered. Global functions are converted on first use into ``<name>_cps`` in the module.
``un_cps`` wraps a converted function back into its original type by passing the identity continuation.
"""

from dataclasses import dataclass

from ...error import KilnError
from ...ir.adt import Constructor
from ...ir.expr import GlobalVar
from ...ir.module import IRModule
from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ...ir.type_poly import FuncType, TypeVar
from ..adt import Clause, PatternConstructor, PatternTuple, PatternVar
from ..expr import Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from ..function import Function
from .function_pass import FunctionPass
from .type_solver import map_type


def _arrow(arg, ret):
    return FuncType((arg,), ret)


def cps_type(ttype, answer):
    """``ttype`` with every function type ``(a...) -> b`` turned into ``(a..., b -> answer) -> answer``."""

    def convert(t):
        if isinstance(t, FuncType):
            args = [cps_type(a, answer) for a in t.arg_types]
            args.append(_arrow(cps_type(t.ret_type, answer), answer))
            return FuncType(tuple(args), answer, t.type_params, t.type_constraints)
        return None

    return None if ttype is None else map_type(ttype, convert)


def _let_bind(value, k):
    """``let x = value; k(x)``."""
    var = Var("x")
    return Let(var, value, k(var))


def _var_type(var):
    return var.checked_type_ if var.checked_type_ is not None else var.type_annotation


class _CPS:
    """The converter of one top-level function and the functions nested in it (one ``answer`` type)."""

    def __init__(self, mod, cps_map, var_map, answer):
        self.mod = mod
        self.cps_map = cps_map
        self.var_map = var_map
        self.answer = answer

    def remap(self, var):
        return self.var_map.get(var.vid, var)

    def function(self, func):
        """``func`` converted: the continuation as a last parameter, ``answer`` as the result type."""
        ftype = func.checked_type_
        if not isinstance(ftype, FuncType):
            raise KilnError("ToCPS: the function is not typed; run InferType first")
        if func.is_primitive():
            raise KilnError("ToCPS: primitive (fused) functions are not supported")
        k = Var("k", _arrow(cps_type(ftype.ret_type, self.answer), self.answer))
        params = tuple(self.remap(p) for p in func.params) + (k,)
        body = self.visit(func.body, lambda e: Call(k, [e]))
        return func.with_fields(params=params, body=body, ret_type=self.answer)

    def reify(self, k):
        arg = Var("arg")
        return Function((arg,), k(arg))

    def reify_then(self, k, build):
        """Bind the reified ``k`` to a variable ``f`` and build the code with the meta-continuation ``e -> f(e)``."""
        return _let_bind(self.reify(k), lambda f: build(lambda e: Call(f, [e])))

    def visit_all(self, exprs, k):
        """Convert ``exprs`` left to right, then continue with ``k(values)``."""
        values: list = []

        def step(i):
            if i == len(exprs):
                return k(values)

            def got(v):
                values.append(v)
                return step(i + 1)

            return self.visit(exprs[i], got)

        return step(0)

    def pattern(self, pat):
        if isinstance(pat, PatternVar):
            return PatternVar(self.remap(pat.var))
        if isinstance(pat, PatternConstructor):
            return PatternConstructor(pat.constructor, tuple(self.pattern(p) for p in pat.patterns))
        if isinstance(pat, PatternTuple):
            return PatternTuple(tuple(self.pattern(p) for p in pat.patterns))
        return pat

    def visit(self, expr, k):  # noqa: C901  (one case per kind of expression, as TVM's functor)
        if isinstance(expr, Let):
            return self.visit(expr.value, lambda v: Let(self.remap(expr.var), v, self.visit(expr.body, k)))
        if isinstance(expr, Function):
            return k(self.function(expr))
        if isinstance(expr, Constant | Op | Constructor):
            return k(expr)
        if isinstance(expr, Var):
            return k(self.remap(expr))
        if isinstance(expr, GlobalVar):
            return k(self.global_var(expr))
        if isinstance(expr, RefCreate):
            return self.visit(expr.value, lambda v: k(RefCreate(v)))
        if isinstance(expr, RefRead):
            return self.visit(expr.ref, lambda r: _let_bind(RefRead(r), k))
        if isinstance(expr, RefWrite):
            return self.visit(expr.ref, lambda r: self.visit(expr.value, lambda v: _let_bind(RefWrite(r, v), k)))
        if isinstance(expr, If):
            return self.reify_then(k, lambda kf: self.visit(expr.cond, lambda c: If(
                c, self.visit(expr.true_branch, kf), self.visit(expr.false_branch, kf))))
        if isinstance(expr, Tuple):
            return self.visit_all(list(expr.fields), lambda vs: k(Tuple(tuple(vs))))
        if isinstance(expr, TupleGetItem):
            return self.visit(expr.tuple_value, lambda v: k(TupleGetItem(v, expr.index)))
        if isinstance(expr, Call):
            return self.call(expr, k)
        from ..adt import Match

        if isinstance(expr, Match):
            return self.reify_then(k, lambda kf: self.visit(expr.data, lambda d: expr.with_fields(
                data=d, clauses=tuple(Clause(self.pattern(c.lhs), self.visit(c.rhs, kf)) for c in expr.clauses))))
        raise KilnError(f"ToCPS cannot convert a {type(expr).__name__}")

    def call(self, call, k):
        if isinstance(call.op, Op | Constructor):
            return self.visit_all(list(call.args), lambda vs: _let_bind(
                Call(call.op, vs, call.attrs, call.type_args), k))

        def with_callee(f):
            # the converted callee has one more type parameter (answer): its type arguments are inferred anew
            return self.visit_all(list(call.args), lambda vs: Call(f, [*vs, self.reify(k)], call.attrs))

        return self.visit(call.op, with_callee)

    def global_var(self, gv):
        if gv not in self.cps_map:
            func = self.mod[gv]
            if not isinstance(func, Function):
                return gv  # an external function: called as it is
            cps_gv = GlobalVar(gv.name_hint + "_cps")
            self.cps_map[gv] = cps_gv
            self.mod[cps_gv] = _to_cps(func, self.mod, self.cps_map)
        return self.cps_map[gv]


def _to_cps(func, mod, cps_map):
    answer = TypeVar("answer")
    var_map: dict = {}
    from ..analysis.free_vars import all_vars

    for var in all_vars(func):
        var_map.setdefault(var.vid, Var(var.name_hint, cps_type(_var_type(var), answer)))
    converted = _CPS(mod, cps_map, var_map, answer).function(func)
    return converted.with_fields(type_params=(*converted.type_params, answer))


def to_cps(func, mod=None):
    """``func`` in continuation-passing style (TVM's ``relay.transform.to_cps``); ``func`` must be typed. Global
    functions it calls are converted into ``mod`` as ``<name>_cps``."""
    from ..analysis.feature import Feature, detect_feature
    from .normal_form import to_a_normal_form

    if Feature.fGraph in detect_feature(func):
        func = to_a_normal_form(func)  # shared code would be converted (and run) once per use
        from .infer_type import infer_type

        func = infer_type(func, mod)
    return _to_cps(func, mod if mod is not None else IRModule(), {})


def un_cps(func):
    """A function of the original type calling the CPS function ``func`` with the identity continuation (TVM's
    ``relay.transform.un_cps``)."""
    if not func.params:
        raise KilnError("un_cps: a CPS function takes its continuation as last parameter; this one takes none")
    params = [Var(p.name_hint, _var_type(p)) for p in func.params]
    cont_type = params.pop().type_annotation
    if not isinstance(cont_type, FuncType) or len(cont_type.arg_types) != 1:
        raise KilnError(f"un_cps: the last parameter must be a continuation of one argument, not {cont_type}")
    ret_type = cont_type.arg_types[0]
    type_params = tuple(func.type_params[:-1])
    x = Var("x", ret_type)
    body = Call(func, [*params, Function((x,), x, ret_type)], None, [*type_params, ret_type])
    return func.with_fields(params=tuple(params), body=body, ret_type=ret_type, type_params=type_params)


@register_pass("ToCPS")
@dataclass(frozen=True)
class ToCPS(FunctionPass):
    """Convert every function of the module into continuation-passing style (see :func:`to_cps`)."""

    info = PassInfo(1, "ToCPS")

    def transform_function(self, func, mod, ctx):
        return to_cps(func, mod)


@register_pass("UnCPS")
@dataclass(frozen=True)
class UnCPS(FunctionPass):
    """Wrap every CPS function of the module back into its original type (see :func:`un_cps`)."""

    info = PassInfo(1, "UnCPS")

    def transform_function(self, func, mod, ctx):
        return un_cps(func)
