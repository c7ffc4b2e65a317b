"""PlanDevices: decide the ``VirtualDevice`` holding the result of every expression (TVM's
``relay.transform.PlanDevices``).

Devices come from ``on_device`` annotations, ``device_copy`` calls, the shape and memory operators (shapes live on
the host) and what an earlier run wrote (parameters' ``virtual_device``, a function's ``virtual_device``
attribute). The pass runs in phases, as TVM's:

0. rewrite: an ``on_device`` that only constrains its body becomes a fixed one (``constrain_result=True``) when it
   is a function body or a let-bound value, and ``on_device(e).i`` becomes ``on_device(on_device(e).i)``;
1. check: one expression used under annotations naming different devices gets a ``device_copy`` per conflict;
2. analyze: every expression gets a domain (:mod:`.device_domains`) and the constraints are unified: an operator's
   arguments and result share a device, a function's parameters and result are fixed across its calls, a tuple, an
   ``if`` or a reference is on one device with its parts;
3. default: an annotation constraining nothing joins its body where it can; every function's result still free goes
   to the configuration's default device, then its parameters to its result's device; a let-bound variable still
   free goes where the ``let`` is;
4. capture: the result written into the program: each parameter's ``virtual_device``, each function's
   ``virtual_device`` attribute (its result's device), a ``device_copy`` (of a fixed ``on_device``) wherever a
   value is used on another device than it lives on, and a fixed ``on_device`` around each let-bound value and each
   argument whose device differs from its call's (never around a variable, a global or a function). The original
   annotations are removed.
"""

from dataclasses import dataclass
from typing import Any

from ...error import KilnError
from ...ir.expr import GlobalVar
from ...ir.op import Op
from ...ir.transform import ModulePass, PassInfo, register_pass
from ...target.compilation_config import CompilationConfig
from ..expr import Call
from ..expr_functor import ExprMutator, ExprVisitor
from ..function import Function
from ..op.device import device_copy
from .device_domains import UNCONSTRAINED, DeviceDomains, join_virtual_devices
from .infer_type import infer_type
from .plan_devices_util import maybe_on_device, on_device_props, optimizable, preorder

# -- phase 0 -----------------------------------------------------------------------------------------------------


class _RewriteOnDevices(ExprMutator):
    def visit_tuple_getitem(self, item):
        post = super().visit_tuple_getitem(item)
        props = on_device_props(post.tuple_value)
        if props is not None and props.constrain_body and not props.constrain_result:
            return maybe_on_device(post, props.virtual_device, False, True, force=True)
        return post

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        values = []
        for binding in chain:
            value = self.visit(binding.value)
            props = on_device_props(value)
            if props is not None and props.constrain_body and not props.constrain_result:
                value = maybe_on_device(value.args[0], props.virtual_device, True, True)
            values.append(value)
        result = self.visit(body)
        for binding, value in zip(reversed(chain), reversed(values), strict=True):
            result = binding.with_fields(value=value, body=result)
        return result

    def visit_function(self, fn):
        body = self.visit(fn.body)
        props = on_device_props(body)
        if props is not None and props.constrain_body and not props.constrain_result:
            body = maybe_on_device(body.args[0], props.virtual_device, True, True)
        return fn.with_fields(body=body)


# -- phase 1 -----------------------------------------------------------------------------------------------------


def _check_conflicts(mod, config):
    """Copy an argument used under annotations of different devices to the device of each use (TVM's
    ConflictedNodeFinder/Rewriter)."""
    device_of: dict = {}
    conflicted: set = set()

    def update(expr, vd):
        old = device_of.get(expr)
        if old is None:
            device_of[expr] = vd
            return True
        joined = join_virtual_devices(old, vd)
        if joined is None:
            return False
        device_of[expr] = joined
        return True

    def handle(expr):
        if type(expr) is not Call:
            from ..expr_functor import expr_children

            return expr_children(expr)
        call_vd = device_of.setdefault(expr, UNCONSTRAINED)
        body_vd = call_vd
        attrs: Any = expr.attrs
        if isinstance(expr.op, Op) and expr.op.name == "on_device":
            if attrs.constrain_body:
                body_vd = attrs.virtual_device
            if attrs.constrain_result:
                call_vd = attrs.virtual_device
        elif isinstance(expr.op, Op) and expr.op.name == "device_copy":
            body_vd, call_vd = attrs.src_virtual_device, attrs.dst_virtual_device
        if not update(expr, call_vd) and not (isinstance(expr.op, Op) and expr.op.name == "on_device"):
            raise KilnError(f"PlanDevices: a {getattr(expr.op, 'name', 'call')} call is placed on two devices")
        for arg in expr.args:
            if not update(arg, body_vd):
                conflicted.add(arg)
        return expr.args

    functions = {gv: f for gv, f in mod.functions.items() if optimizable(f)}
    for func in functions.values():
        preorder(func, handle)
    conflicted = {e for e in conflicted if not (type(e) is Call and isinstance(e.op, Op) and e.op.name == "on_device")}
    if not conflicted:
        return mod

    class _Copier(ExprMutator):
        def visit_call(self, call):
            post = super().visit_call(call)
            args = []
            for pre_arg, arg in zip(call.args, post.args, strict=True):
                if pre_arg in conflicted:
                    src = config.canonical_virtual_device(device_of.get(pre_arg, UNCONSTRAINED))
                    dst = config.canonical_virtual_device(device_of.get(call, UNCONSTRAINED))
                    arg = arg if src == dst else device_copy(arg, src, dst)
                args.append(arg)
            return post.with_fields(args=tuple(args))

    out = mod.shallow_copy()
    for gv, func in functions.items():
        out[gv] = _Copier().visit(func)
    return out


# -- phase 2 -----------------------------------------------------------------------------------------------------


class _Analyzer(ExprVisitor):
    def __init__(self, domains):
        super().__init__()
        self.d = domains

    def visit_call(self, call):
        super().visit_call(call)
        d = self.d
        func_domain = d.domain_for_callee(call)
        if func_domain.function_arity != len(call.args):
            raise KilnError(f"PlanDevices: the callee of {call.op} takes {func_domain.function_arity} arguments")
        implied = d.make_higher_order([*(d.domain_for(a) for a in call.args), d.domain_for(call)])
        if d.unify_or_none(func_domain, implied) is None:
            raise KilnError(f"PlanDevices: the devices of the parameters and result of {getattr(call.op, 'name', '')} "
                            f"({d.to_string(func_domain)}) do not match those of its call ({d.to_string(implied)})")

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        for binding in chain:
            self.d.unify_expr_exact(binding.var, binding.value)
            self.d.unify_expr_exact(binding, binding.body)
            self.visit(binding.var)
            self.visit(binding.value)
        self.visit(body)

    def visit_function(self, fn):
        d = self.d
        func_domain = d.domain_for(fn)
        d.unify_expr_exact(fn.body, func_domain.function_result())
        result_vd = fn.virtual_device_
        if result_vd is not None:
            d.unify_expr_exact(fn.body, d.for_virtual_device(d.type_of(fn.body), result_vd))
        for i, param in enumerate(fn.params):
            d.unify_expr_exact(param, func_domain.function_param(i))
            if param.virtual_device_ is not None:
                d.unify_expr_exact(param, d.for_virtual_device(d.type_of(param), param.virtual_device_))
            self.visit(param)
        if not fn.attrs.get("Primitive", 0):
            self.visit(fn.body)

    def visit_tuple(self, tup):
        super().visit_tuple(tup)
        for f in tup.fields:
            self.d.unify_expr_collapsed(tup, self.d.domain_for(f))

    def visit_tuple_getitem(self, item):
        super().visit_tuple_getitem(item)
        self.d.unify_expr_collapsed(item.tuple_value, self.d.domain_for(item))

    def visit_if(self, node):
        d = self.d
        domain = d.domain_for(node)
        d.unify_expr_collapsed(node.cond, domain)
        d.unify_expr_exact(node.true_branch, domain)
        d.unify_expr_exact(node.false_branch, domain)
        super().visit_if(node)

    def visit_match(self, match):
        d = self.d
        domain = d.domain_for(match)
        d.unify_expr_collapsed(match.data, domain)
        for clause in match.clauses:
            for var in _pattern_vars(clause.lhs):
                d.unify_expr_collapsed(match.data, d.domain_for(var))
            d.unify_expr_exact(clause.rhs, domain)
            self.visit(clause.rhs)
        self.visit(match.data)

    def visit_var(self, var):
        self.d.domain_for(var)

    def visit_global_var(self, gv):
        self.d.domain_for(gv)

    def visit_constant(self, const):
        self.d.domain_for(const)

    def visit_ref_create(self, ref):
        self.d.unify_expr_collapsed(ref, self.d.domain_for(ref.value))
        self.visit(ref.value)

    def visit_ref_read(self, ref):
        self.d.unify_expr_collapsed(ref.ref, self.d.domain_for(ref))
        self.visit(ref.ref)

    def visit_ref_write(self, ref):
        domain = self.d.domain_for(ref.value)
        self.d.unify_expr_collapsed(ref.ref, domain)
        self.d.unify_expr_collapsed(ref, domain)
        self.visit(ref.ref)
        self.visit(ref.value)


def _pattern_vars(pattern):
    from ..adt import PatternConstructor, PatternTuple, PatternVar

    out, stack = [], [pattern]
    while stack:
        p = stack.pop()
        if type(p) is PatternVar:
            out.append(p.var)
        elif type(p) in (PatternConstructor, PatternTuple):
            stack.extend(p.patterns)
    return out


# -- phase 3 -----------------------------------------------------------------------------------------------------


def _default_free_on_devices(domains, func):
    """An annotation constraining neither its body nor its result joins its body's device when it can."""
    d = domains

    class _FreeOnDevice(ExprVisitor):
        def visit_call(self, call):
            super().visit_call(call)
            props = on_device_props(call)
            if props is not None and not props.constrain_body and not props.constrain_result:
                d.optional_unify_expr_exact(call, call.args[0])

    _FreeOnDevice().visit(func)


def _default(domains, func, default_vd):
    """Free results go to ``default_vd``, free parameters and let-bound variables where their function or let is
    (pre-order, as TVM's defaulter visits)."""
    d = domains

    def handle(expr):
        from ..expr import Let
        from ..expr_functor import expr_children

        kind = type(expr)
        if kind is Function:
            if expr.attrs.get("Primitive", 0):
                return ()
            domain = d.domain_for(expr)
            if not d.is_fully_constrained(domain):
                d.set_result_default_then_params(domain, default_vd)
            return (expr.body,)
        if kind is Call:
            domain = d.domain_for_callee(expr)
            if not d.is_fully_constrained(domain):
                d.set_result_default_then_params(domain, default_vd)
            return expr_children(expr)
        if kind is Let:
            let_vd = d.result_virtual_device(d.domain_for(expr))
            if let_vd.is_fully_unconstrained:
                raise KilnError("PlanDevices: no device was found for a let expression")
            var_domain = d.domain_for(expr.var)
            if not d.is_fully_constrained(var_domain):
                d.set_default(var_domain, let_vd)
            return (expr.var, expr.value, expr.body)
        return expr_children(expr)

    preorder(func, handle)


# -- the pass ----------------------------------------------------------------------------------------------------


def _type_of(mod):
    def type_of(expr):
        if isinstance(expr, GlobalVar):
            return mod[expr.name_hint].checked_type
        return expr.checked_type

    return type_of


@register_pass("PlanDevices")
@dataclass(frozen=True)
class PlanDevices(ModulePass):
    """Place every expression on a virtual device (see the module docstring).

    Parameters
    ----------
    config : CompilationConfig
        The targets, host and default device (``tvm.target.make_compilation_config``).
    """

    config: Any
    info = PassInfo(0, "PlanDevices")

    def __post_init__(self):
        if not isinstance(self.config, CompilationConfig):
            raise KilnError(f"PlanDevices takes a CompilationConfig (target.make_compilation_config), not "
                            f"{type(self.config).__name__}")

    def transform_module(self, mod, ctx):
        from .plan_devices_capture import capture

        mod = infer_type(mod)
        rewritten = mod.shallow_copy()
        for gv, func in mod.functions.items():
            if optimizable(func):
                rewritten[gv] = _RewriteOnDevices().visit(func)
        mod = infer_type(_check_conflicts(infer_type(rewritten), self.config))
        domains = DeviceDomains(self.config, _type_of(mod))
        functions = {gv: f for gv, f in mod.functions.items() if optimizable(f)}
        for gv, func in functions.items():
            domains.unify_expr_exact(gv, func)
            _Analyzer(domains).visit(func)
        for func in functions.values():
            _default_free_on_devices(domains, func)
        for func in functions.values():
            _default(domains, func, self.config.default_primitive_virtual_device)
        return capture(mod, functions, domains)
