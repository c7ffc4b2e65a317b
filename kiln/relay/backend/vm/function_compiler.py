"""Bytecode for one Relay function (TVM's ``VMFunctionCompiler``).

The input is a function after the VM pipeline (A-normal form, lambda lifting, LowerTE, ManifestAlloc, MemoryPlan):
every kernel call is ``vm.invoke_tvm_op`` of a PrimFunc's GlobalVar on tensors the memory dialect allocated.
Every value gets a fresh register (the arguments take the first ones); a let binds its variable to its value's
register, so variables cost no instruction.

=====================================  ==============================================================================
expression                             instructions
=====================================  ==============================================================================
constant                               ``LoadConst`` (the executable's constant table)
tuple / ``t.i``                        ``AllocADT`` tag 0 / ``GetField``
``memory.alloc_storage(size)``         ``LoadConsti`` of a constant size, then ``AllocStorage``
``memory.alloc_tensor(s, off, shape)`` ``AllocTensor`` for a constant shape, ``AllocTensorReg`` for a computed one
``vm.invoke_tvm_op(@k, ins, outs)``    ``InvokePacked`` on the inputs then outputs, tuples flattened by ``GetField``
``vm.shape_of`` / ``vm.reshape_tensor``  ``ShapeOf`` / ``ReshapeTensor``; ``memory.kill(x)``: ``KillRegister``
``@f(args)``                           ``InvokeFunc``; ``@lifted(captured)`` of a lifted closure: ``AllocClosure``
``%closure(args)``                     ``InvokeClosure``; a global function used as a value: ``AllocClosure``
``if (c) {a} else {b}``                ``If``, the true branch, ``Move`` + ``Goto``, the false branch, ``Move``
``Ctor(fields)``                       ``AllocADT`` of the constructor's tag
``match (d) { p => e, ... }``          per clause: the pattern's tests (``IsTag`` + ``If`` to the next clause,
                                       ``GetField`` for sub-patterns and variables), the right-hand side, ``Move`` +
                                       ``Goto`` to the end; ``Fatal`` when no clause applies
=====================================  ==============================================================================

The function's result is compiled in *tail position*: an ``if`` or a ``match`` there ends each branch with its own
``Ret`` and a
let chain's body stays in tail position, so a call that computes the result is directly followed by ``Ret`` (the VM
runs it as a tail call, in constant stack and memory: a loop written as tail recursion). A lifted closure
``fn (captured...) { fn (params..., Closure=1) { body } }`` compiles to one function taking the captured values
and then the parameters, as ``AllocClosure``/``InvokeClosure`` pass them.
"""

import numpy as np

from ....error import CodegenError, InternalError
from ....ir.adt import Constructor
from ....ir.expr import GlobalVar
from ....ir.op import Op
from ....ir.type import TensorType, TupleType, is_any
from ....ir.type_poly import GlobalTypeVar, TypeCall
from ....runtime.vm import instruction as I
from ....runtime.vm.function import DATA, OBJECT, TENSOR, TUPLE, VMFunction
from ....tir.function import PrimFunc
from ...adt import Match, PatternConstructor, PatternTuple, PatternVar, PatternWildcard
from ...expr import Call, Constant, If, Let, Tuple, TupleGetItem, Var
from ...function import Function

__all__ = ["FunctionCompiler", "closure_body", "param_type"]

_UNIT = -1  # the register of a value nothing reads: the empty tuple vm.invoke_tvm_op and memory.kill return


def closure_body(func):
    """The inner function of a lifted closure ``fn (captured) { fn (params, Closure=1) {...} }``, else None."""
    body = func.body
    if isinstance(body, Function) and body.attrs.get("Closure", 0):
        return body
    return None


def param_type(ttype):
    """The runtime description of a parameter type (see :mod:`kiln.runtime.vm.function`); a ``relay.Any``
    dimension is ``None`` there, which the VM's argument check skips."""
    if isinstance(ttype, TensorType):
        return TENSOR, tuple(None if is_any(d) else d for d in ttype.shape), ttype.dtype
    if isinstance(ttype, TupleType):
        return TUPLE, tuple(param_type(f) for f in ttype.fields)
    if isinstance(ttype, TypeCall | GlobalTypeVar):
        return (DATA,)
    return (OBJECT,)


class FunctionCompiler:
    """Compiles one global function; ``context`` is the module-wide :class:`~.compiler.ModuleContext`."""

    def __init__(self, context, name):
        self.context = context
        self.name = name
        self.code: list = []
        self.num_registers = 0
        self.registers: dict = {}  # Var -> register
        self.let_constants: dict = {}  # Var -> the Constant a let binds it to

    def new_register(self) -> int:
        self.num_registers += 1
        return self.num_registers - 1

    def emit(self, instr) -> int:
        self.code.append(instr)
        return len(self.code) - 1

    def compile(self, func) -> VMFunction:
        inner = closure_body(func)
        params = func.params + (inner.params if inner is not None else ())
        body = inner.body if inner is not None else func.body
        for param in params:
            self.registers[param] = self.new_register()
        self.tail(body)
        types = tuple(param_type(p.checked_type_) for p in params)
        return VMFunction(self.name, tuple(p.name_hint for p in params), tuple(self.code), self.num_registers, types)

    # ------------------------------------------------------------------------------------------- control
    def tail(self, expr):
        """Compile ``expr`` as the function's result (see the module docstring)."""
        while isinstance(expr, Let):
            if expr.body is expr.var:  # let %r = e; %r (what A-normal form makes of a result): e is the result
                expr = expr.value
                break
            self._bind(expr)
            expr = expr.body
        if isinstance(expr, Let):
            self.tail(expr)
        elif isinstance(expr, If):
            cond = self.value(expr.cond)
            branch = self.emit(I.If(cond, 1, 0))
            self.tail(expr.true_branch)
            self.code[branch] = I.If(cond, 1, len(self.code) - branch)
            self.tail(expr.false_branch)
        elif isinstance(expr, Match):
            self._match(expr, tail=True)
        else:
            self.emit(I.Ret(self.register(expr)))

    def _match(self, node, tail=False):
        """Each clause in turn: its pattern's tests (a failed one jumps to the next clause), then its right-hand
        side, returned (in tail position) or moved to the result register; ``Fatal`` after the last clause."""
        data = self.register(node.data)
        result = -1 if tail else self.new_register()  # no result register in tail position: each clause returns
        ends = []
        for clause in node.clauses:
            fails: list = []
            self._test(clause.lhs, data, fails)
            if tail:
                self.tail(clause.rhs)
            else:
                self.emit(I.Move(self.register(clause.rhs), result))
                ends.append(self.emit(I.Goto(0)))
            for at in fails:
                self.code[at] = I.If(self.code[at].cond, 1, len(self.code) - at)
        self.emit(I.Fatal(f"match in {self.name}: no clause applies to the value"))
        for at in ends:
            self.code[at] = I.Goto(len(self.code) - at)
        return result

    def _test(self, pattern, reg, fails):
        """Emit the tests of ``pattern`` on the value in ``reg``; each failing ``If`` is recorded in ``fails``."""
        if isinstance(pattern, PatternVar):
            self.registers[pattern.var] = reg
        elif isinstance(pattern, PatternConstructor):
            fits = self._store(lambda dst: I.IsTag(reg, pattern.constructor.tag, dst))
            fails.append(self.emit(I.If(fits, 1, 0)))
            self._test_fields(pattern.patterns, reg, fails)
        elif isinstance(pattern, PatternTuple):
            self._test_fields(pattern.patterns, reg, fails)

    def _test_fields(self, patterns, reg, fails):
        for i, sub in enumerate(patterns):
            if not isinstance(sub, PatternWildcard):
                self._test(sub, self._store(lambda dst, i=i: I.GetField(reg, i, dst)), fails)

    def _if(self, node) -> int:
        cond = self.value(node.cond)
        result = self.new_register()
        branch = self.emit(I.If(cond, 1, 0))
        self.emit(I.Move(self.register(node.true_branch), result))
        jump = self.emit(I.Goto(0))
        self.code[branch] = I.If(cond, 1, len(self.code) - branch)
        self.emit(I.Move(self.register(node.false_branch), result))
        self.code[jump] = I.Goto(len(self.code) - jump)
        return result

    # ------------------------------------------------------------------------------------------- values
    def register(self, expr) -> int:
        """The register holding ``expr``'s value (an empty tuple made for a value nothing was meant to read)."""
        reg = self.value(expr)
        if reg == _UNIT:
            reg = self.new_register()
            self.emit(I.AllocADT(0, (), reg))
        return reg

    def _bind(self, let):
        self.registers[let.var] = self.value(let.value)
        if isinstance(let.value, Constant):  # A-normal form binds constants; memory ops need them as attributes
            self.let_constants[let.var] = let.value

    def _constant(self, expr):
        """``expr``, or the constant a let bound to it."""
        return self.let_constants.get(expr, expr) if isinstance(expr, Var) else expr

    def value(self, expr) -> int:
        """Emit the instructions computing ``expr``; returns its register (``_UNIT`` for the empty result)."""
        kind = type(expr)
        if kind is Var:
            reg = self.registers.get(expr)
            if reg is None:
                raise InternalError(f"VM compiler: variable %{expr.name_hint} of {self.name} has no register")
            return reg
        if kind is Let:
            while isinstance(expr, Let):
                self._bind(expr)
                expr = expr.body
            return self.value(expr)
        if kind is Constant:
            return self._load(I.LoadConst, self.context.constant_index(expr))
        if kind is Tuple:
            fields = tuple(self.register(f) for f in expr.fields)
            return self._store(lambda dst: I.AllocADT(0, fields, dst))
        if kind is TupleGetItem:
            obj = self.register(expr.tuple_value)
            return self._store(lambda dst: I.GetField(obj, expr.index, dst))
        if kind is If:
            return self._if(expr)
        if kind is Match:
            return self._match(expr)
        if kind is Constructor:
            raise CodegenError(f"VM compiler: constructor {expr.name_hint} is used as a value in {self.name}; only "
                               f"its calls compile (wrap it in a function)")
        if kind is GlobalVar:
            index = self.context.function_index(expr, self.name)
            return self._store(lambda dst: I.AllocClosure(index, (), dst))
        if kind is Call:
            return self._call(expr)
        if kind is Function:
            raise CodegenError(f"VM compiler: {self.name} holds a nested function; run LambdaLift before compiling")
        raise CodegenError(f"VM compiler: cannot compile a {kind.__name__} in {self.name}")

    def _load(self, cls, operand) -> int:
        return self._store(lambda dst: cls(operand, dst))

    def _store(self, make) -> int:
        dst = self.new_register()
        self.emit(make(dst))
        return dst

    def _call(self, call) -> int:
        op = call.op
        if isinstance(op, Op):
            return self._dialect(call)
        args = tuple(self.register(a) for a in call.args)
        if isinstance(op, Constructor):
            return self._store(lambda dst: I.AllocADT(op.tag, args, dst))
        if isinstance(op, GlobalVar):
            index = self.context.function_index(op, self.name)
            if self.context.is_closure(op):
                return self._store(lambda dst: I.AllocClosure(index, args, dst))
            return self._store(lambda dst: I.InvokeFunc(index, args, dst))
        if isinstance(op, Function):
            raise CodegenError(f"VM compiler: {self.name} calls a nested function; run LambdaLift before compiling")
        closure = self.register(op)
        return self._store(lambda dst: I.InvokeClosure(closure, args, dst))

    def _flat_registers(self, expr) -> list:
        """The registers of the tensors of ``expr`` in order (tuple values taken apart with GetField)."""
        if isinstance(expr, Tuple):
            return [r for f in expr.fields for r in self._flat_registers(f)]
        reg = self.register(expr)
        return self._unpack(reg, expr.checked_type_)

    def _unpack(self, reg, ttype) -> list:
        if not isinstance(ttype, TupleType):
            return [reg]
        out = []
        for i, field in enumerate(ttype.fields):
            out.extend(self._unpack(self._store(lambda dst, i=i: I.GetField(reg, i, dst)), field))
        return out

    def _dialect(self, call) -> int:
        name = call.op.name
        args, attrs = call.args, call.attrs
        if name == "vm.invoke_tvm_op":
            kernel = args[0]
            if not isinstance(kernel, GlobalVar) or not isinstance(self.context.mod[kernel], PrimFunc):
                raise CodegenError(f"VM compiler: vm.invoke_tvm_op in {self.name} calls {kernel}, which is not a "
                                   f"lowered kernel (run LowerTE before ManifestAlloc)")
            inputs, outputs = self._flat_registers(args[1]), self._flat_registers(args[2])
            index = self.context.kernel_index(kernel)
            self.emit(I.InvokePacked(index, len(inputs) + len(outputs), len(outputs), (*inputs, *outputs)))
            return _UNIT
        if name == "memory.alloc_storage":
            size = self._constant(args[0])
            if isinstance(size, Constant):
                size_reg = self._load(I.LoadConsti, int(size.data.handle))
            else:
                size_reg = self.register(size)
            return self._store(lambda dst: I.AllocStorage(size_reg, attrs.alignment, attrs.dtype_hint, 0, dst))
        if name == "memory.alloc_tensor":
            storage, offset, shape = args[0], self._constant(args[1]), self._constant(args[2])
            if not isinstance(offset, Constant):
                raise CodegenError(f"VM compiler: memory.alloc_tensor in {self.name} has an offset computed at run "
                                   f"time; offsets must be constants")
            storage_reg, start = self.register(storage), int(offset.data.handle)
            if isinstance(shape, Constant):
                dims = tuple(int(d) for d in np.asarray(shape.data.handle).reshape(-1))
                return self._store(lambda dst: I.AllocTensor(storage_reg, start, dims, attrs.dtype, dst))
            shape_reg = self.register(shape)
            return self._store(lambda dst: I.AllocTensorReg(storage_reg, start, shape_reg, attrs.dtype, dst))
        if name == "vm.shape_of":
            tensor = self.register(args[0])
            return self._store(lambda dst: I.ShapeOf(tensor, dst))
        if name == "vm.reshape_tensor":
            tensor, shape = self.register(args[0]), self.register(args[1])
            return self._store(lambda dst: I.ReshapeTensor(tensor, shape, dst))
        if name == "memory.kill":
            self.emit(I.KillRegister(self.register(args[0])))
            return _UNIT
        if name == "call_lowered":
            raise CodegenError(f"VM compiler: {self.name} still calls kernels through call_lowered; run ManifestAlloc "
                               f"before compiling")
        raise CodegenError(f"VM compiler: operator {name} in {self.name} was not lowered to a kernel (run FuseOps "
                           f"and LowerTE before compiling)")
