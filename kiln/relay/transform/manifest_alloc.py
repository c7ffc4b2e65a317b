"""ManifestAlloc: make every allocation of a kernel's outputs explicit (TVM's ``relay.transform.ManifestAlloc``).

Each kernel call, ``call_lowered(@kernel, (args...))`` after LowerTE or a call of a primitive Relay function before
it, becomes, for each output tensor (a tuple result has several)::

    let %storage = memory.alloc_storage(<bytes>i64, alignment=64, dtype_hint=<dtype>);
    let %tensor = memory.alloc_tensor(%storage, 0i64, <shape as an int64 constant>, const_shape=<shape>, dtype=...);

then ``let %_ = vm.invoke_tvm_op(@kernel, (args...), (%tensor, ...))``, and the call's value is the tensor (or the
tuple of them). A kernel that only reshapes its one input (``call_lowered`` records ``reshape_only``) becomes
``vm.reshape_tensor(%x, <shape>)``, a view of its input with no allocation and no kernel. An operator called
directly (FuseOps disabled) is first wrapped in a one-operator primitive function, as LowerTE does.

The new bindings go into the innermost enclosing scope (a function body, an ``if`` branch, a ``match`` clause) just
before the binding that used the call, so the program keeps its evaluation order; run it on A-normal form, where
every value shared by two scopes is bound in their common scope. Sizes come from the static result types; shape
functions computing them at run time (``relay.Any``) plug in at :meth:`_DialectRewriter.allocate`, emitting
``alloc_storage`` of a computed size and ``alloc_tensor`` of a computed shape, which the VM compiler already turns
into ``AllocStorage`` of a register and ``AllocTensorReg``.
"""

from dataclasses import dataclass

import numpy as np

from ...error import CodegenError
from ...ir.attrs import DictAttrs
from ...ir.expr import GlobalVar
from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ...ir.type import TensorType, TupleType, has_dynamic_shape
from ..backend.call_lowered import is_call_lowered
from ..backend.te_compiler import flatten_type
from ..expr import Call, Constant, If, Let, Tuple, TupleGetItem, Var, const
from ..expr_functor import ExprMutator
from ..function import Function
from ..op.memory import StorageType, alloc_storage, alloc_tensor
from ..op.vm import invoke_tvm_op, is_reshape_only, reshape_tensor, shape_of
from .function_pass import FunctionPass
from .infer_type import infer_type

__all__ = ["ManifestAlloc", "manifest_alloc", "ALIGNMENT"]

ALIGNMENT = 64
"""Byte alignment of every storage block (what the kernels' argument checks require)."""


def _regroup(ttype, flat):
    """The value of type ``ttype`` built from the flat list of its tensors (consumed from the front)."""
    if isinstance(ttype, TupleType):
        return Tuple(tuple(_regroup(field, flat) for field in ttype.fields))
    return flat.pop(0)


def _operator_function(call):
    """A bare operator call as a one-operator primitive function and its arguments (scalar constants stay inside)."""
    params: list = []
    operands: list = []
    args: list = []
    for arg in call.args:
        if isinstance(arg, Constant) and arg.data.handle.ndim == 0:
            operands.append(arg)
            continue
        var = Var(f"p{len(params)}", arg.checked_type_)
        params.append(var)
        operands.append(var)
        args.append(arg)
    body = Call(call.op, tuple(operands), call.attrs)
    return infer_type(Function(tuple(params), body, attrs=DictAttrs.make({"Primitive": 1}))), args


class _DialectRewriter(ExprMutator):
    """Rewrites kernel calls (see the module docstring); ``scopes`` is the stack of binding lists being built."""

    def __init__(self):
        super().__init__()
        self.scopes: list = [[]]
        self.count = 0

    def _bind(self, name, value, ttype) -> Var:
        var = Var(f"{name}{self.count}", ttype, checked_type_=ttype)
        self.count += 1
        self.scopes[-1].append((var, value))
        return var

    def _scoped(self, expr):
        """``expr`` rewritten in a scope of its own, with the bindings it needed wrapped around it."""
        self.scopes.append([])
        result = self.visit(expr)
        for var, value in reversed(self.scopes.pop()):
            result = Let(var, value, result)
        return result

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        for binding in chain:
            value = self.visit(binding.value)
            if isinstance(value, Var) and binding.value is not value:
                self.memo_map[binding.var] = value  # the call became this tensor: use it directly
            else:
                self.scopes[-1].append((binding.var, value))
        return self.visit(body)

    def visit_if(self, node):
        return If(self.visit(node.cond), self._scoped(node.true_branch), self._scoped(node.false_branch))

    def visit_match(self, node):
        clauses = tuple(c.with_fields(lhs=self.visit_pattern(c.lhs), rhs=self._scoped(c.rhs)) for c in node.clauses)
        return node.with_fields(data=self.visit(node.data), clauses=clauses)

    def visit_function(self, fn):
        if fn.is_primitive():
            return fn
        return fn.with_fields(body=self._scoped(fn.body))

    def visit_call(self, call):
        if is_call_lowered(call):
            args = self.visit(call.args[1]).fields
            if call.attrs.shape_func is not None:
                return self.allocate_dynamic(call.args[0], call.attrs, args, call.checked_type_)
            return self.allocate(call.args[0], args, call.checked_type_, call.attrs.reshape_only)
        # a call of a Relay function (global or closure) allocates its own results, whatever their shapes
        if has_dynamic_shape(call.checked_type_) and not isinstance(call.op, GlobalVar | Var):
            raise CodegenError(f"ManifestAlloc: the call of {call.op} has the dynamic type {call.checked_type_}; "
                               f"run LowerTE first (it derives the shape function that allocation needs)")
        if isinstance(call.op, Function) and call.op.is_primitive():
            args = tuple(self.visit(a) for a in call.args)
            return self.allocate(call.op, args, call.checked_type_, is_reshape_only(call.op))
        if isinstance(call.op, Op) and not call.op.get_attr("TNonComputational") and call.op.name != "call_lowered":
            func, args = _operator_function(call)
            return self.allocate(func, tuple(self.visit(a) for a in args), call.checked_type_, is_reshape_only(func))
        return super().visit_call(call)

    def allocate(self, kernel, args, out_type, reshape_only):
        """The bindings that run ``kernel`` on ``args`` into new tensors; returns the result (a Var or a Tuple)."""
        if reshape_only:
            shape = const(np.array(out_type.shape, dtype="int64"), "int64")
            return self._bind("view", reshape_tensor(args[0], shape, out_type.shape), out_type)
        outputs = []
        for ttype in flatten_type(out_type):
            nbytes = ttype.size * np.dtype(ttype.dtype).itemsize
            storage = self._bind("storage", alloc_storage(nbytes, ALIGNMENT, dtype_hint=ttype.dtype), StorageType())
            outputs.append(self._bind("tensor", alloc_tensor(storage, 0, ttype.shape, ttype.dtype), ttype))
        # typed here: the kernel's GlobalVar has a type only in its module, and the function may be typed alone
        inputs = Tuple(args, checked_type_=TupleType(tuple(a.checked_type_ for a in args)))
        results = Tuple(tuple(outputs), checked_type_=TupleType(tuple(o.checked_type_ for o in outputs)))
        invoke = invoke_tvm_op(kernel, inputs, results).with_fields(checked_type_=TupleType(()))
        self._bind("_", invoke, TupleType(()))
        return _regroup(out_type, outputs)


    def allocate_dynamic(self, kernel, attrs, args, out_type):
        """:meth:`allocate` for a result with dynamic dimensions: the shape function runs first (on the arguments
        themselves when it is data-dependent, else on the shapes of those with dynamic dimensions, in the kernel's
        parameter order), and each output is allocated with the size and shape it computed."""
        if attrs.shape_func_reads_data:
            shapes = _flat_tensors(args)
        else:
            shapes = []
            for tensor in _flat_tensors(args):
                if tensor.checked_type_.is_dynamic:
                    shape_type = TensorType((tensor.checked_type_.ndim,), "int64")
                    shapes.append(self._bind("in_shape", shape_of(tensor), shape_type))
        outputs = flatten_type(out_type)
        computed_types = TupleType(tuple(t for o in outputs for t in (TensorType((max(o.ndim, 1),), "int64"),
                                                                      TensorType((), "int64"))))
        computed = self.allocate(attrs.shape_func, tuple(shapes), computed_types, False).fields
        if attrs.reshape_only:
            return self._bind("view", reshape_tensor(args[0], computed[0], out_type.shape), out_type)
        tensors = []
        for k, ttype in enumerate(outputs):
            shape, nbytes = computed[2 * k], computed[2 * k + 1]
            if not ttype.is_dynamic:  # the shape function ran for the checks it asserts; the result is static
                shape, nbytes = ttype.shape, ttype.size * np.dtype(ttype.dtype).itemsize
            storage = self._bind("storage", alloc_storage(nbytes, ALIGNMENT, dtype_hint=ttype.dtype), StorageType())
            tensor = alloc_tensor(storage, 0, shape, ttype.dtype,
                                  assert_shape=ttype.shape if ttype.is_dynamic else None)
            tensors.append(self._bind("tensor", tensor, ttype))
        inputs = Tuple(args, checked_type_=TupleType(tuple(a.checked_type_ for a in args)))
        results = Tuple(tuple(tensors), checked_type_=TupleType(tuple(o.checked_type_ for o in tensors)))
        self._bind("_", invoke_tvm_op(kernel, inputs, results).with_fields(checked_type_=TupleType(())), TupleType(()))
        return _regroup(out_type, tensors)


def _flat_tensors(args) -> list:
    """The tensor-typed expressions of ``args`` in order, tuple-typed ones taken apart with projections."""
    out = []
    for arg in args:
        if isinstance(arg.checked_type_, TupleType):
            fields = [TupleGetItem(arg, i, checked_type_=f) for i, f in enumerate(arg.checked_type_.fields)]
            out.extend(_flat_tensors(fields))
        else:
            out.append(arg)
    return out


def manifest_alloc(func: Function, mod=None) -> Function:
    """``func`` with explicit allocations (see the module docstring); typed."""
    if func.is_primitive():
        return func
    rewritten = _DialectRewriter().visit(func)
    return infer_type(rewritten.with_fields(ret_type=None, checked_type_=None), mod)


@register_pass("ManifestAlloc")
@dataclass(frozen=True)
class ManifestAlloc(FunctionPass):
    """Allocate kernel outputs explicitly with the memory dialect (TVM's ``relay.transform.ManifestAlloc``).

    Examples
    --------
    >>> mod = relay.transform.ManifestAlloc()(relay.transform.ToANormalForm()(fused))   # doctest: +SKIP
    """

    info = PassInfo(0, "ManifestAlloc", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return manifest_alloc(func, mod)
