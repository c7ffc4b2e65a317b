"""The last phase of ``PlanDevices``: write the devices the analysis found into the program (TVM's
``DeviceCapturer``), and ``RecoverVirtualDeviceMap``, which reads them back.

A child whose device differs from where its parent expects it is copied (``device_copy`` of the child, marked
with a fixed ``on_device`` of its own device); a child expected on another device than the enclosing one (a
let-bound value, whose let scope carries no device, or an argument a call wants elsewhere) is marked with a fixed
``on_device`` of the expected device.
"""

from ...error import InvalidIRError
from ...ir.expr import GlobalVar
from ...ir.op import Op
from ...runtime.packed_func import register_func
from ..expr import Call, Let, Var
from ..expr_functor import ExprMutator, expr_children
from ..function import Function
from ..op.device import device_copy
from .device_domains import UNCONSTRAINED
from .plan_devices_util import maybe_on_device, on_device_props

__all__ = ["capture", "recover_virtual_device_map"]


class _Capturer(ExprMutator):
    def __init__(self, domains):
        super().__init__()
        self.d = domains

    def device_of(self, expr):
        props = on_device_props(expr)
        true_expr = expr.args[0] if props is not None else expr
        vd = self.d.result_virtual_device(self.d.domain_for(true_expr))
        if vd.is_fully_unconstrained:
            raise InvalidIRError(f"PlanDevices: no virtual device was found for {true_expr}")
        return vd

    def child(self, lexical, expected, child_vd, child):
        """``child`` rewritten, copied to ``expected`` when it lives elsewhere, marked when that is not
        ``lexical``."""
        if isinstance(child, Op):
            return child
        from ...ir.adt import Constructor

        if isinstance(child, Constructor):
            return child
        result = self.visit(child)
        if child_vd != expected:
            result = device_copy(maybe_on_device(result, child_vd, True, True), child_vd, expected)
        if expected != lexical:
            result = maybe_on_device(result, expected, True, True)
        return result

    def child_of(self, parent, child):
        expected = self.device_of(parent)
        return self.child(expected, expected, self.device_of(child), child)

    def visit_function(self, fn):
        if fn.attrs.get("Primitive", 0):
            return fn
        d = self.d
        domain = d.domain_for(fn)
        result_vd = d.result_virtual_device(domain)
        params = {}
        for i, p in enumerate(fn.params):
            params[p] = p.with_fields(virtual_device_=d.result_virtual_device(domain.function_param(i)))
        body = self.child(result_vd, result_vd, self.device_of(fn.body), fn.body)
        body = _Substitute(params).visit(body)
        func = fn.with_fields(params=tuple(params[p] for p in fn.params), body=body)
        return func.with_fields(virtual_device_=result_vd)

    def visit_call(self, call):
        props = on_device_props(call)
        if props is not None:
            return self.visit(call.args[0])  # the annotation is rewritten where its parent places its child
        call_vd = self.device_of(call)
        if isinstance(call.op, Op) and call.op.name == "device_copy":
            config = self.d.config
            src = config.canonical_virtual_device(call.attrs.src_virtual_device)
            dst = config.canonical_virtual_device(call.attrs.dst_virtual_device)
            if src == dst:
                return self.visit(call.args[0])
            return self.child(dst, dst, src, call.args[0])
        domain = self.d.domain_for_callee(call)
        op = self.child(call_vd, call_vd, self.d.result_virtual_device(domain), call.op)
        args = [self.child(call_vd, self.d.result_virtual_device(domain.function_param(i)), self.device_of(a), a)
                for i, a in enumerate(call.args)]
        return call.with_fields(op=op, args=tuple(args))

    def visit_let(self, let):
        let_vd = self.device_of(let)
        bindings = []
        expr = let
        while type(expr) is Let and self.device_of(expr) == let_vd:
            value = self.child(UNCONSTRAINED, self.device_of(expr.var), self.device_of(expr.value), expr.value)
            bindings.append((expr, value))
            expr = expr.body
        body = self.child(let_vd, let_vd, self.device_of(expr), expr)
        for binding, value in reversed(bindings):
            body = binding.with_fields(value=value, body=body)
        return body

    def visit_tuple(self, tup):
        return tup.with_fields(fields=tuple(self.child_of(tup, f) for f in tup.fields))

    def visit_tuple_getitem(self, item):
        return item.with_fields(tuple_value=self.child_of(item, item.tuple_value))

    def visit_if(self, node):
        return node.with_fields(cond=self.child_of(node, node.cond), true_branch=self.child_of(node, node.true_branch),
                                false_branch=self.child_of(node, node.false_branch))

    def visit_ref_create(self, ref):
        return ref.with_fields(value=self.child_of(ref, ref.value))

    def visit_ref_read(self, ref):
        return ref.with_fields(ref=self.child_of(ref, ref.ref))

    def visit_ref_write(self, ref):
        return ref.with_fields(ref=self.child_of(ref, ref.ref), value=self.child_of(ref, ref.value))

    def visit_match(self, match):
        data = self.child_of(match, match.data)
        clauses = tuple(c.with_fields(rhs=self.child_of(match, c.rhs)) for c in match.clauses)
        return match.with_fields(data=data, clauses=clauses)


class _Substitute(ExprMutator):
    """Replaces the parameters by their copies carrying devices."""

    def __init__(self, mapping):
        super().__init__()
        self.mapping = mapping

    def visit_var(self, var):
        return self.mapping.get(var, var)


def capture(mod, functions, domains):
    """``mod`` with the devices of ``domains`` written into each of ``functions`` (see the module docstring)."""
    out = mod.shallow_copy()
    for gv, func in functions.items():
        out[gv] = _Capturer(domains).visit(func)
    return out


def recover_virtual_device_map(mod, expr):
    """``{expression: VirtualDevice}`` for the expressions of ``expr`` (a function PlanDevices placed): parameters
    from their ``virtual_device``, a function's body from its ``virtual_device`` attribute, an annotated or copied
    value from its ``on_device``/``device_copy``, everything else from the expression it is computed in."""
    found: dict = {}

    def handle(node, vd):
        kind = type(node)
        if kind is Function:
            result_vd = node.virtual_device
            found[node] = result_vd
            for p in node.params:
                found[p] = p.virtual_device
            return [(node.body, result_vd)]
        if isinstance(node, Op | GlobalVar):
            return []
        if kind is Var:
            found.setdefault(node, vd)
            return []
        found[node] = vd
        if kind is Call and isinstance(node.op, Op) and node.op.name == "on_device":
            return [(node.args[0], node.attrs.virtual_device if node.attrs.constrain_body else vd)]
        if kind is Call and isinstance(node.op, Op) and node.op.name == "device_copy":
            found[node] = node.attrs.dst_virtual_device
            return [(node.args[0], node.attrs.src_virtual_device)]
        if kind is Let:
            value = node.value
            props = on_device_props(value)
            return [(node.var, props.virtual_device if props is not None else vd), (value, vd), (node.body, vd)]
        return [(c, vd) for c in expr_children(node)]

    stack = [(expr, UNCONSTRAINED)]
    seen: set = set()
    while stack:
        node, vd = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(reversed(handle(node, vd)))
    return found


register_func("relay.transform.RecoverVirtualDeviceMap", recover_virtual_device_map)
