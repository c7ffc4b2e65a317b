"""EtaExpand: a global function or an ADT constructor used as a value becomes a function that calls it.

``@f`` (not called) becomes ``fn (%p1, ..., %pn) { @f(%p1, ..., %pn) }`` with ``@f``'s parameter types, return
type and type parameters; a bare constructor ``Cons`` becomes ``fn [A] (%x: A, %xs: List[A]) -> List[A] { Cons(%x,
%xs) }`` over fresh type variables. The VM compiles such wrapped values as ordinary closures. Unlike TVM's pass,
a global called directly (``@f(%x)``) is left alone: wrapping it would only add a call.
"""

from dataclasses import dataclass

from ...error import KilnError
from ...ir.adt import Constructor
from ...ir.expr import GlobalVar
from ...ir.transform import ModulePass, PassInfo, register_pass
from ...ir.type_poly import TypeCall, TypeVar
from ..expr import Call, Var
from ..expr_functor import ExprMutator
from ..function import Function
from .type_solver import bind_type_vars


class _EtaExpander(ExprMutator):
    def __init__(self, mod, expand_constructor, expand_global_var):
        super().__init__()
        self.mod = mod
        self.expand_constructor = expand_constructor
        self.expand_global_var = expand_global_var

    def visit_pattern(self, pattern):
        return pattern  # a constructor in a match pattern is matched, not used as a value

    def visit_call(self, call):
        op = call.op if isinstance(call.op, (Constructor, GlobalVar)) else self.visit(call.op)
        args = tuple(self.visit(a) for a in call.args)
        return call.with_fields(op=op, args=args)

    def visit_global_var(self, gv):
        func = self.mod.functions.get(gv) if self.expand_global_var else None
        if not isinstance(func, Function):
            return gv
        params = tuple(Var("eta_expand_param", p.type_annotation) for p in func.params)
        return Function(params, Call(gv, params), func.ret_type, attrs=func.attrs, type_params=func.type_params)

    def visit_constructor(self, ctor):
        if not self.expand_constructor:
            return ctor
        data = self.mod.type_definitions[ctor.belong_to]
        fresh = {tv: TypeVar("A") for tv in data.type_vars}
        params = tuple(Var("eta_expand_param", bind_type_vars(t, fresh)) for t in ctor.inputs)
        type_params = tuple(fresh.values())
        ret_type = TypeCall(ctor.belong_to, type_params) if type_params else ctor.belong_to
        return Function(params, Call(ctor, params), ret_type, type_params=type_params)


@register_pass("EtaExpand")
@dataclass(frozen=True)
class EtaExpand(ModulePass):
    """Wrap global functions and/or constructors used as values in functions that call them (TVM's pass).

    Parameters
    ----------
    expand_constructor : bool
        Expand constructors used as values.
    expand_global_var : bool
        Expand global functions used as values.
    """

    expand_constructor: bool = False
    expand_global_var: bool = False
    info = PassInfo(1, "EtaExpand")

    def transform_module(self, mod, ctx):
        if not (self.expand_constructor or self.expand_global_var):
            raise KilnError("EtaExpand: set expand_constructor or expand_global_var (or both)")
        out = mod.shallow_copy()
        expander = _EtaExpander(mod, self.expand_constructor, self.expand_global_var)
        for gv, func in mod.functions.items():
            if isinstance(func, Function):
                out[gv] = expander.visit(func)
        return out
