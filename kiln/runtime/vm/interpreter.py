"""The VM's interpreter loop: runs an executable's bytecode, calling the compiled kernels.

Before the first run each function's instructions are *prepared* once (:class:`PreparedFunction`): every
instruction that neither jumps nor calls becomes a small function of the register file (its operands, dtype, byte
size and kernel resolved ahead), and the control instructions become tuples the loop reads directly. Running is
then one list index, one tuple unpacking and one call per instruction.

Calls do not use the Python stack: ``InvokeFunc``/``InvokeClosure`` push the caller's state on a list of frames and
``Ret`` pops it, so a loop written as deep recursion runs as deep as memory allows (``max_call_depth`` frames). A call
directly followed by ``Ret`` of its result is a tail call and replaces the caller's frame instead, so a counted loop
written as tail recursion runs in constant memory: the finished iteration's registers, and the storage they held,
are released at once.

Errors: every failure becomes a :class:`~kiln.error.KilnError` (its subclass kept) whose message names the VM
function, the instruction index and the instruction; nothing reaches memory it should not (the loader checked every
index, tensors are checked against their storage, kernels check their arguments).
"""

import math

import numpy as np

from ...error import KilnError
from ..ndarray import _aligned_empty
from . import instruction as I
from .kernel_call import KernelCall
from .memory import nbytes_of, tensor_in
from .objects import ADT, VMClosure

__all__ = ["PreparedFunction", "prepare", "run", "DEFAULT_MAX_CALL_DEPTH"]

STEP, IF, GOTO, RET, INVOKE, INVOKE_CLOSURE, FATAL = range(7)
DEFAULT_MAX_CALL_DEPTH = 100_000


class PreparedFunction:
    """A VM function ready to run: ``code`` is a list of ``(kind, payload)`` (see the module docstring)."""

    __slots__ = ("function", "code", "size", "arity")

    def __init__(self, function, code):
        self.function = function
        self.code = code
        self.size = function.register_file_size
        self.arity = len(function.params)


def _shape_from(value, what) -> tuple:
    """The shape held in a 1-D integer tensor register, checked."""
    if type(value) is not np.ndarray or value.ndim != 1 or value.dtype.kind not in "iu":
        raise KilnError(f"{what}: the shape operand must be a 1-D integer tensor, got "
                        f"{getattr(value, 'shape', type(value).__name__)}")
    shape = tuple(int(d) for d in value)
    if any(d < 0 for d in shape):
        raise KilnError(f"{what}: negative dimension in shape {shape}")
    return shape


def _size_from(value) -> int:
    if type(value) is not np.ndarray or value.size != 1 or value.dtype.kind not in "iu":
        raise KilnError(f"AllocStorage: the size operand must be an integer scalar tensor, got "
                        f"{getattr(value, 'shape', type(value).__name__)}")
    return int(value.reshape(()))


def _adt(value, what) -> ADT:
    if type(value) is not ADT:
        raise KilnError(f"{what}: the operand is a {type(value).__name__}, not a tuple (ADT)")
    return value


def _step(instr, vm, constants):
    """The function of the register file that performs a straight-line instruction (``constants``: the registers
    only ``LoadConst`` writes, and the array each always holds)."""
    kind = type(instr)
    if kind is I.InvokePacked:
        return KernelCall(vm.kernel(instr.packed_index), vm.kernel_name(instr.packed_index), instr.args, constants)
    if kind is I.AllocTensor:
        storage, offset, shape, dst = instr.storage, instr.offset, instr.shape, instr.dst
        dtype = np.dtype(instr.dtype)
        nbytes = nbytes_of(shape, dtype)
        return lambda regs: regs.__setitem__(dst, tensor_in(regs[storage], offset, shape, dtype, nbytes))
    if kind is I.LoadConst:
        value, dst = vm.constant(instr.const_index), instr.dst
        return lambda regs: regs.__setitem__(dst, value)
    if kind is I.AllocStorage:
        size, alignment, hint, dst, pool = instr.size, instr.alignment, instr.dtype_hint, instr.dst, vm.pool
        return lambda regs: regs.__setitem__(dst, pool.alloc(_size_from(regs[size]), alignment, hint))
    if kind is I.Move:
        src, dst = instr.src, instr.dst
        return lambda regs: regs.__setitem__(dst, regs[src])
    if kind is I.LoadConsti:
        value, dst = np.array(instr.value, "int64"), instr.dst
        value.flags.writeable = False  # shared by every run
        return lambda regs: regs.__setitem__(dst, value)
    if kind is I.AllocADT:
        tag, fields, dst = instr.tag, instr.fields, instr.dst
        return lambda regs: regs.__setitem__(dst, ADT(tag, [regs[r] for r in fields]))
    if kind is I.GetField:
        obj, index, dst = instr.obj, instr.field_index, instr.dst

        def get_field(regs):
            fields = _adt(regs[obj], "GetField")  # an ADT is the tuple of its fields
            if index >= len(fields):
                raise KilnError(f"GetField: field {index} of a value with {len(fields)} fields")
            regs[dst] = fields[index]

        return get_field
    if kind is I.AllocClosure:
        func_index, free_vars, dst, exe = instr.func_index, instr.free_vars, instr.dst, vm.exe
        return lambda regs: regs.__setitem__(dst, VMClosure(func_index, [regs[r] for r in free_vars], exe))
    if kind is I.KillRegister:
        dst = instr.dst
        return lambda regs: regs.__setitem__(dst, None)
    if kind is I.GetTag:
        obj, dst = instr.obj, instr.dst
        return lambda regs: regs.__setitem__(dst, np.array(_adt(regs[obj], "GetTag").tag, "int64"))
    if kind is I.IsTag:
        obj, tag, dst = instr.obj, instr.tag, instr.dst
        return lambda regs: regs.__setitem__(dst, np.array(_adt(regs[obj], "IsTag").tag == tag))
    if kind is I.ShapeOf:
        return _shape_of(instr.tensor, instr.dst)
    if kind is I.ReshapeTensor:
        return _reshape_tensor(instr.tensor, instr.newshape, instr.dst)
    if kind is I.AllocTensorReg:
        return _alloc_tensor_reg(instr)
    raise KilnError(f"the VM cannot run the instruction {kind.__name__}")


def _shape_of(tensor, dst):
    def shape_of(regs):
        value = regs[tensor]
        if type(value) is not np.ndarray:
            raise KilnError(f"ShapeOf: the operand is a {type(value).__name__}, not a tensor")
        out = _aligned_empty((value.ndim,), np.int64)  # aligned: a shape function kernel may read it
        out[:] = value.shape
        regs[dst] = out

    return shape_of


def _reshape_tensor(tensor, newshape, dst):
    def reshape_tensor(regs):
        value = regs[tensor]
        if type(value) is not np.ndarray:
            raise KilnError(f"ReshapeTensor: the operand is a {type(value).__name__}, not a tensor")
        shape = _shape_from(regs[newshape], "ReshapeTensor")
        if math.prod(shape) != value.size:
            raise KilnError(f"ReshapeTensor: cannot view a tensor of shape {value.shape} ({value.size} elements) as "
                            f"shape {shape} ({math.prod(shape)} elements)")
        regs[dst] = value.reshape(shape)

    return reshape_tensor


def _alloc_tensor_reg(instr):
    storage, offset, shape_register, dst = instr.storage, instr.offset, instr.shape_register, instr.dst
    dtype = np.dtype(instr.dtype)

    def alloc_tensor_reg(regs):
        shape = _shape_from(regs[shape_register], "AllocTensorReg")
        regs[dst] = tensor_in(regs[storage], offset, shape, dtype, nbytes_of(shape, dtype))

    return alloc_tensor_reg


def _constant_registers(function, vm) -> dict:
    """The registers whose only writer is one ``LoadConst`` (not a parameter), and the constant each holds."""
    writers: dict = {}
    for instr in function.instructions:
        dst = getattr(instr, "dst", None)
        if dst is not None:
            writers.setdefault(dst, []).append(instr)
    return {reg: vm.constant(w[0].const_index) for reg, w in writers.items()
            if len(w) == 1 and type(w[0]) is I.LoadConst and reg >= len(function.params)}


def prepare(function, vm) -> PreparedFunction:
    """``function`` (a VMFunction) prepared to run on ``vm`` (see the module docstring)."""
    instructions = function.instructions
    constants = _constant_registers(function, vm)
    code: list = []
    for pc, instr in enumerate(instructions):
        kind = type(instr)
        following = instructions[pc + 1] if pc + 1 < len(instructions) else None
        if kind is I.If:
            code.append((IF, (instr.cond, instr.true_offset, instr.false_offset)))
        elif kind is I.Goto:
            code.append((GOTO, instr.pc_offset))
        elif kind is I.Ret:
            code.append((RET, instr.result))
        elif kind is I.InvokeFunc or kind is I.InvokeClosure:
            tail = type(following) is I.Ret and following.result == instr.dst
            target = instr.func_index if kind is I.InvokeFunc else instr.closure
            code.append((INVOKE if kind is I.InvokeFunc else INVOKE_CLOSURE, (target, instr.args, instr.dst, tail)))
        elif kind is I.Fatal:
            code.append((FATAL, instr.message))
        else:
            try:
                code.append((STEP, _step(instr, vm, constants)))
            except KilnError as exc:
                raise type(exc)(f"VM function {function.name!r} instruction {pc} ({instr}): {exc}") from None
    return PreparedFunction(function, code)


def run(vm, func_index, args):
    """Run function ``func_index`` of ``vm`` on ``args`` (register values); returns its result."""
    functions = vm.prepared_functions()
    fn = functions[func_index]
    regs = [None] * fn.size
    regs[:len(args)] = args
    code, pc = fn.code, 0
    frames: list = []
    max_depth = vm.max_call_depth
    try:
        while True:
            kind, payload = code[pc]
            if kind == STEP:
                payload(regs)
                pc += 1
            elif kind == RET:
                if not frames:
                    return regs[payload]
                result = regs[payload]
                fn, code, regs, pc, dst = frames.pop()
                regs[dst] = result
                pc += 1
            elif kind == INVOKE or kind == INVOKE_CLOSURE:
                target, arg_regs, dst, tail = payload
                values = [regs[r] for r in arg_regs]
                if kind == INVOKE_CLOSURE:
                    closure = regs[target]
                    if type(closure) is not VMClosure:
                        raise KilnError(f"InvokeClosure: the callee is a {type(closure).__name__}, not a closure")
                    target, values = closure.func_index, [*closure.captured, *values]
                callee = functions[target]
                if len(values) != callee.arity:
                    raise KilnError(f"call of {callee.function.name!r} with {len(values)} values; it takes "
                                    f"{callee.arity}")
                if not tail:
                    if len(frames) >= max_depth:
                        raise KilnError(f"the call stack is deeper than {max_depth} frames (max_call_depth); is "
                                        f"the recursion unbounded?")
                    frames.append((fn, code, regs, pc, dst))
                fn, code, pc = callee, callee.code, 0
                regs = [None] * fn.size
                regs[:len(values)] = values
            elif kind == IF:
                cond, true_offset, false_offset = payload
                value = regs[cond]
                if type(value) is not np.ndarray or value.size != 1:
                    raise KilnError(f"If: the condition must be a scalar tensor, got "
                                    f"{getattr(value, 'shape', type(value).__name__)}")
                pc += true_offset if value.reshape(()) else false_offset
            elif kind == GOTO:
                pc += payload
            else:  # FATAL
                raise KilnError(f"Fatal: {payload}")
    except KilnError as exc:
        raise type(exc)(f"VM function {fn.function.name!r} instruction {pc} ({fn.function.instructions[pc]}): "
                        f"{exc}") from exc
    except Exception as exc:  # a bad value met a Python operation: report where, as a KilnError
        raise KilnError(f"VM function {fn.function.name!r} instruction {pc} ({fn.function.instructions[pc]}): "
                        f"{type(exc).__name__}: {exc}") from exc
