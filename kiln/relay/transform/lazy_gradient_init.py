"""LazyGradientInit: tensors of ones and zeros made only when needed (TVM's ``relay.transform.LazyGradientInit``).

Gradient programs start every adjoint as zeros and seed the result with ones, then add and multiply them. This
pass makes every tensor value of a function a ``GradCell`` (``std/gradient.rly``): ``Raw(t)`` for a computed tensor,
``One(f)``/``Zero(f)`` for ``ones(_like)``/``zeros(_like)``, whose tensor ``f()`` is made only if something needs
it. ``add`` and ``multiply`` of two operands of one type become ``AddGradCell``/``MultiplyGradCell``, which skip
the arithmetic with a zero or a one; every other operator reads its operands out of their cells
(``FromGradCell``) and puts its result in a ``Raw`` cell. The function keeps its type: a wrapper puts the
arguments into cells and takes the result out.
"""

from dataclasses import dataclass

from ...ir.op import Op
from ...ir.transform import ModulePass, PassInfo, register_pass
from ...ir.type import TensorType, TupleType
from ...ir.type_poly import FuncType, RelayRefType, TypeCall
from ..expr import Call, Let, Tuple, TupleGetItem, Var
from ..expr_functor import ExprMutator
from ..function import Function
from .infer_type import infer_type

_LIBRARY = ("FromGradCell", "AddGradCell", "MultiplyGradCell")
_LAZY = {"ones": "One", "zeros": "Zero", "ones_like": "One", "zeros_like": "Zero"}
_OVERLOADED = {"add": "AddGradCell", "multiply": "MultiplyGradCell"}


class _Lazy(ExprMutator):
    """Rewrites one function's body with every tensor value in a GradCell."""

    def __init__(self, mod):
        super().__init__()
        self.mod = mod
        self.cell = mod.get_global_type_var("GradCell")
        self.ctors = {c.name_hint: c for c in mod.get_type("GradCell")[1:]}
        self.from_cell = mod.get_global_var("FromGradCell")

    def cell_type(self, ty):
        """The type of a value of type ``ty`` after the pass: tensors in cells, everything around them alike."""
        if isinstance(ty, TensorType):
            return TypeCall(self.cell, (ty,))
        if isinstance(ty, TupleType):
            return TupleType(tuple(self.cell_type(f) for f in ty.fields))
        if isinstance(ty, FuncType):
            return FuncType(tuple(self.cell_type(a) for a in ty.arg_types), self.cell_type(ty.ret_type),
                            getattr(ty, "type_params", ()), getattr(ty, "type_constraints", ()))
        if isinstance(ty, RelayRefType):
            return RelayRefType(self.cell_type(ty.value))
        return ty

    def wrap(self, value, ty, lets):
        """``value`` (of type ``ty``, no cells) with its tensors put in ``Raw`` cells."""
        if isinstance(ty, TensorType):
            return Call(self.ctors["Raw"], (value,))
        if isinstance(ty, TupleType):
            value = _bind(value, lets)
            return Tuple(tuple(self.wrap(TupleGetItem(value, i), t, lets) for i, t in enumerate(ty.fields)))
        return value

    def unwrap(self, value, ty, lets):
        """``value`` (of type ``ty`` before the pass) with its tensors taken out of their cells."""
        if isinstance(ty, TensorType):
            return Call(self.from_cell, (value,))
        if isinstance(ty, TupleType):
            value = _bind(value, lets)
            return Tuple(tuple(self.unwrap(TupleGetItem(value, i), t, lets) for i, t in enumerate(ty.fields)))
        return value

    def visit_var(self, var):
        ty = var.type_annotation if var.type_annotation is not None else var.checked_type_
        return Var(var.name_hint, None if ty is None else self.cell_type(ty), span=var.span)

    def visit_constant(self, const):
        return self.wrap(const, const.checked_type, [])

    def visit_function(self, fn):
        params = tuple(self.visit(p) for p in fn.params)
        ret = None if fn.ret_type is None else self.cell_type(fn.ret_type)
        return Function(params, self.visit(fn.body), ret, fn.attrs, fn.type_params, span=fn.span)

    def visit_call(self, call):
        if not isinstance(call.op, Op):
            return super().visit_call(call)
        name, ty = call.op.name, call.checked_type
        arg_types = [a.checked_type for a in call.args]
        lets: list = []
        if name in _OVERLOADED and len(arg_types) == 2 and arg_types[0] == arg_types[1] == ty:
            lhs, rhs = Var("lhs", ty), Var("rhs", ty)
            fallback = Function((lhs, rhs), Call(call.op, (lhs, rhs), call.attrs), ty)
            return Call(self.mod.get_global_var(_OVERLOADED[name]), (fallback, *(self.visit(a) for a in call.args)))
        args = tuple(self.unwrap(self.visit(a), t, lets) for a, t in zip(call.args, arg_types, strict=True))
        result = Call(call.op, args, call.attrs, span=call.span)
        if name in _LAZY and isinstance(ty, TensorType):
            # the operands are read (and the tensor made) only when the cell is
            return Call(self.ctors[_LAZY[name]], (Function((), _let(lets, result), ty),))
        wrap_lets: list = []
        wrapped = self.wrap(result, ty, wrap_lets)
        return _let(lets, _let(wrap_lets, wrapped))


def _bind(value, lets):
    if isinstance(value, Var):
        return value
    var = Var(f"c{len(lets)}")
    lets.append((var, value))
    return var


def _let(lets, body):
    for var, value in reversed(lets):
        body = Let(var, value, body)
    return body


def lazy_gradient_init(func, mod):
    """``func`` (typed, of ``mod``, which has ``gradient.rly`` imported) with lazy gradient cells, wrapped so its
    type is unchanged."""
    lazy = _Lazy(mod)
    transformed = lazy.visit(func)
    lets: list = []
    args = [lazy.wrap(p, p.checked_type, lets) for p in func.params]
    result = _bind(Call(transformed, tuple(args)), lets)
    out = lazy.unwrap(result, func.body.checked_type, lets)
    return Function(func.params, _let(lets, out), func.ret_type, func.attrs, span=func.span)


@register_pass("LazyGradientInit")
@dataclass(frozen=True)
class LazyGradientInit(ModulePass):
    """Make the ones and zeros of every Relay function lazy (see the module docstring)."""

    info = PassInfo(2, "LazyGradientInit")

    def transform_module(self, mod, ctx):
        out = mod.shallow_copy()
        out.import_from_std("gradient.rly")
        typed = infer_type(out)
        for gv, func in typed.functions.items():
            if isinstance(func, Function) and gv.name_hint not in _LIBRARY and not func.type_params:
                typed[gv] = lazy_gradient_init(func, typed)
        return infer_type(typed)
