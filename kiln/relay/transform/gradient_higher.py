"""Higher-order reverse-mode AD with references (TVM's ``higher_order_gradient.cc``), for the programs the tape of
:mod:`.gradient` cannot follow: references, closures passed as values, recursion, data types and ``match``.

Every tensor value ``v`` of the program becomes a pair ``(v, ref(dv))``: the value and a cell accumulating its
adjoint. The backward pass is a closure kept in a cell ``bp``: each operator call, after computing its result,
replaces ``bp`` by a closure that sends the result's adjoint to its arguments' cells (with the operator's
``FPrimalGradient``) and then calls the previous ``bp``, so calling the final ``bp`` runs every recorded step in
reverse. Every function takes ``bp`` as an extra last parameter and every call passes it, so closures, global
functions (differentiated once into ``<name>_grad``, added to the module) and data types carrying tensors work
unchanged; types follow: a tensor type ``T`` becomes ``(T, ref(T))``, a function type gains the ``bp`` parameter.
"""

from ...error import KilnError
from ...ir.adt import Constructor
from ...ir.expr import GlobalVar
from ...ir.op import Op
from ...ir.type import TensorType, TupleType
from ...ir.type_poly import FuncType, RelayRefType, TypeCall
from ..expr import Call, Constant, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from ..expr_functor import ExprMutator
from ..function import Function
from ..op.like import ones_like, zeros_like
from ..op.tensor import add

UNIT = TupleType(())
BP_TYPE = RelayRefType(FuncType((), UNIT))
"""The type of the backward-pass cell: a reference to a function of no arguments."""


def reverse_type(ty):
    """The type of a value of type ``ty`` in the transformed program."""
    if isinstance(ty, TensorType):
        return TupleType((ty, RelayRefType(ty)))
    if isinstance(ty, TupleType):
        return TupleType(tuple(reverse_type(f) for f in ty.fields))
    if isinstance(ty, FuncType):
        args = tuple(reverse_type(a) for a in ty.arg_types) + (BP_TYPE,)
        return FuncType(args, reverse_type(ty.ret_type), getattr(ty, "type_params", ()),
                        getattr(ty, "type_constraints", ()))
    if isinstance(ty, RelayRefType):
        return RelayRefType(reverse_type(ty.value))
    if isinstance(ty, TypeCall):
        return TypeCall(ty.func, tuple(reverse_type(a) for a in ty.args))
    return ty


class _Lets:
    """Let bindings collected in order; :meth:`wrap` nests a body inside them."""

    def __init__(self):
        self.bindings: list = []

    def push(self, value, ty=None, name="x"):
        if isinstance(value, Var | Constant):
            return value
        var = Var(f"{name}{len(self.bindings)}", ty, checked_type_=ty)
        self.bindings.append((var, value))
        return var

    def wrap(self, body):
        for var, value in reversed(self.bindings):
            body = Let(var, value, body)
        return body


def _lift(ty, value, lets, tensor_fn, name):
    """``tensor_fn`` applied to every tensor of ``value`` (of the original type ``ty``), keeping tuple structure."""
    if isinstance(ty, TensorType):
        return lets.push(tensor_fn(value), name=name)
    if isinstance(ty, TupleType):
        return lets.push(Tuple(tuple(_lift(t, lets.push(TupleGetItem(value, i)), lets, tensor_fn, name)
                                     for i, t in enumerate(ty.fields))), name=name)
    raise KilnError(f"gradient: an operator argument or result of type {ty} (only tensors and tuples of them)")


def _value(ty, ad, lets):
    """The original value inside an AD value (typed, for the gradient functions that read argument types)."""
    if isinstance(ty, TensorType):
        return lets.push(TupleGetItem(ad, 0), ty, "v")
    fields = tuple(_value(t, lets.push(TupleGetItem(ad, i)), lets) for i, t in enumerate(ty.fields))
    return lets.push(Tuple(fields), ty, "v")


def _update(ty, ad, grad, lets):
    """Add ``grad`` into the adjoint cells of the AD value ``ad``."""
    if isinstance(ty, TensorType):
        cell = TupleGetItem(ad, 1)
        lets.push(RefWrite(cell, add(RefRead(cell), grad)), name="u")
        return
    grad = lets.push(grad, name="g")
    for i, t in enumerate(ty.fields):
        _update(t, lets.push(TupleGetItem(ad, i)), lets.push(TupleGetItem(grad, i)), lets)


class _Replace(ExprMutator):
    def __init__(self, old, new):
        super().__init__()
        self.memo_map[old] = new


class ReverseAD(ExprMutator):
    """The transformation of one function body, whose backward-pass cell is ``bp``; variables and global functions
    are mapped the same way in every body (``var_map``, ``global_map``)."""

    def __init__(self, mod, bp, var_map, global_map):
        super().__init__()
        self.mod, self.bp, self.var_map, self.global_map = mod, bp, var_map, global_map

    def visit_var(self, var):
        new = self.var_map.get(var)
        if new is None:
            ty = var.checked_type_ if var.checked_type_ is not None else var.type_annotation
            new = self.var_map[var] = Var(var.name_hint, None if ty is None else reverse_type(ty))
        return new

    def visit_constant(self, const):
        return Tuple((const, RefCreate(zeros_like(const))))

    def visit_op(self, op):
        raise KilnError(f"gradient: the operator {op.name} is used as a value; operators can only be called")

    def visit_if(self, node):
        return node.with_fields(cond=TupleGetItem(self.visit(node.cond), 0), true_branch=self.visit(node.true_branch),
                                false_branch=self.visit(node.false_branch))

    def visit_function(self, fn):
        params = tuple(self.visit(p) for p in fn.params)
        bp = Var("bp", BP_TYPE)
        body = ReverseAD(self.mod, bp, self.var_map, self.global_map).visit(fn.body)
        ret = None if fn.ret_type is None else reverse_type(fn.ret_type)
        return Function(params + (bp,), body, ret, fn.attrs, fn.type_params, span=fn.span)

    def visit_global_var(self, gv):
        new = self.global_map.get(gv.name_hint)
        if new is None:
            if self.mod is None or gv.name_hint not in self.mod:
                raise KilnError(f"gradient: {gv} is called, but no module holding it was given (mod=...)")
            new = self.global_map[gv.name_hint] = GlobalVar(gv.name_hint + "_grad")
            func = self.mod[gv.name_hint]
            if not isinstance(func, Function):
                raise KilnError(f"gradient: {gv} is not a Relay function")
            self.mod[new] = self.visit_function(func)
        return new

    def visit_call(self, call):
        if isinstance(call.op, Constructor):
            return call.with_fields(args=tuple(self.visit(a) for a in call.args))
        if not isinstance(call.op, Op):
            return Call(self.visit(call.op), tuple(self.visit(a) for a in call.args) + (self.bp,), call.attrs,
                        span=call.span)
        return self._op_call(call)

    def _op_call(self, call):
        op = call.op
        fgrad = op.get_attr("FPrimalGradient")
        if fgrad is None:
            raise KilnError(f"gradient: the operator {op.name} does not have a registered gradient "
                            f"(relay.op.register_gradient)")
        lets = _Lets()
        types = [a.checked_type for a in call.args]
        args = [lets.push(self.visit(a), name="a") for a in call.args]
        values = [_value(t, a, lets) for t, a in zip(types, args, strict=True)]
        ty = call.checked_type
        orig = Call(op, tuple(values), call.attrs, span=call.span, checked_type_=ty)
        result = lets.push(orig, ty, "v")
        ret = _lift(ty, result, lets, lambda v: Tuple((v, RefCreate(zeros_like(v)))), "r")
        previous = lets.push(RefRead(self.bp), name="bp")

        back = _Lets()
        grad = _lift(ty, ret, back, lambda r: RefRead(TupleGetItem(r, 1)), "d")
        grads = fgrad(orig, grad)
        if len(grads) != len(args):
            raise KilnError(f"gradient: the gradient of {op.name} returned {len(grads)} values for {len(args)} "
                            f"arguments")
        for t, a, g in zip(types, args, grads, strict=True):
            _update(t, a, _Replace(orig, result).visit(g), back)
        step = Function((), back.wrap(Call(previous, ())), UNIT)
        lets.push(RefWrite(self.bp, step), name="u")
        return lets.wrap(ret)


def higher_order_gradient(func, mod=None):
    """The gradient function of a typed ``func`` built with references (see the module docstring): it returns
    ``(result, (d result / d param, ...))``; the adjoint of a tuple result is seeded in its first tensor only, as
    TVM's higher-order mode does. Global functions ``func`` calls are differentiated into ``mod``."""
    for p in func.params:
        if not isinstance(p.checked_type, TensorType):
            raise KilnError(f"gradient: higher-order AD needs tensor parameters, but %{p.name_hint} has type "
                            f"{p.checked_type}")
    lets = _Lets()
    bp = lets.push(RefCreate(Function((), Tuple(()), UNIT)), BP_TYPE, "bp")
    reverse = ReverseAD(mod, bp, {}, {}).visit(func)
    cells = [lets.push(Tuple((p, RefCreate(zeros_like(p)))), name="p") for p in func.params]
    result = lets.push(Call(reverse, tuple(cells) + (bp,)), name="result")

    seed, seed_type = result, func.body.checked_type
    while isinstance(seed_type, TupleType) and seed_type.fields:
        seed, seed_type = lets.push(TupleGetItem(seed, 0)), seed_type.fields[0]
    if isinstance(seed_type, TensorType):
        lets.push(RefWrite(TupleGetItem(seed, 1), ones_like(TupleGetItem(seed, 0))), name="u")
    lets.push(Call(RefRead(bp), ()), name="u")

    def value_of(ad, ty):
        if isinstance(ty, TensorType):
            return TupleGetItem(ad, 0)
        return Tuple(tuple(value_of(lets.push(TupleGetItem(ad, i)), t) for i, t in enumerate(ty.fields)))

    forward = value_of(result, func.body.checked_type)
    grads = Tuple(tuple(RefRead(TupleGetItem(c, 1)) for c in cells))
    ret = TupleType((func.body.checked_type, TupleType(tuple(p.checked_type for p in func.params))))
    return Function(func.params, lets.wrap(Tuple((forward, grads))), ret, func.attrs, span=func.span)
