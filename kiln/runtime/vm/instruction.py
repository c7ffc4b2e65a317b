"""The Relay VM's instruction set (TVM's ``runtime/vm/bytecode.h``), as frozen dataclasses.

The VM is register based: each function activation has ``register_file_size`` registers, the first ones holding its
arguments, and every instruction names the registers it reads and the register (``dst``) it writes. A register holds
a tensor (a numpy array), a storage block, an ADT (a tuple is the ADT of tag 0) or a closure.

=================  ===================================================================================================
Move               ``dst = src``
Ret                return ``result`` to the caller
Fatal              stop with an error carrying ``message`` (what the program could not do)
InvokePacked       call kernel ``packed_index`` of the library on ``args``: the inputs, then ``output_size`` outputs
AllocStorage       ``dst`` = a new storage block of ``size`` bytes (``size`` is a register: sizes may be computed)
AllocTensor        ``dst`` = a tensor of static ``shape`` and ``dtype`` at byte ``offset`` of storage ``storage``
AllocTensorReg     the same, its shape read from the int64 tensor in register ``shape_register`` (dynamic shapes)
AllocADT           ``dst`` = ADT of ``tag`` with ``fields``
AllocClosure       ``dst`` = closure of function ``func_index`` capturing ``free_vars`` (passed before the arguments)
InvokeFunc         ``dst`` = function ``func_index`` applied to ``args``
InvokeClosure      ``dst`` = closure ``closure`` applied to its captured values and ``args``
If                 jump by ``true_offset`` when the scalar tensor ``cond`` is true, else by ``false_offset``
Goto               jump by ``pc_offset``
LoadConst          ``dst`` = constant ``const_index`` of the executable
LoadConsti         ``dst`` = the int64 scalar tensor ``value``
GetField           ``dst`` = field ``field_index`` of the ADT ``obj``
GetTag             ``dst`` = the tag of the ADT ``obj``, as an int64 scalar tensor
ShapeOf            ``dst`` = the shape of tensor ``tensor`` as a 1-D int64 tensor
ReshapeTensor      ``dst`` = tensor ``tensor`` viewed with the shape held in register ``newshape`` (no copy)
KillRegister       drop the value of ``dst`` (its storage can be reused once nothing else holds it)
=================  ===================================================================================================

Where kiln departs from TVM: ``If`` tests a boolean tensor itself (TVM compares two registers, one loaded with
``LoadConsti 1``); ``AllocTensor``'s offset is an immediate (the planner computes offsets statically; a dynamic shape
gets a storage of its own, at offset 0); ``Fatal`` carries its message.

Each class lists its operands in ``OPERANDS`` by kind; the serializer and the loader's checks (every register, jump,
function, kernel and constant index in range) are driven by that table, so a new instruction is described once.
"""

from dataclasses import dataclass, fields
from enum import IntEnum

__all__ = ["Opcode", "Instruction", "OPERAND_KINDS", "INSTRUCTIONS", "Move", "Ret", "Fatal", "InvokePacked",
           "AllocStorage", "AllocTensor", "AllocTensorReg", "AllocADT", "AllocClosure", "InvokeFunc",
           "InvokeClosure", "If", "Goto", "LoadConst", "LoadConsti", "GetField", "GetTag", "ShapeOf",
           "ReshapeTensor", "KillRegister"]


class Opcode(IntEnum):
    """Instruction numbers, TVM's where TVM has the instruction."""

    Move = 0
    Ret = 1
    Invoke = 2
    InvokeClosure = 3
    InvokePacked = 4
    AllocTensor = 5
    AllocTensorReg = 6
    AllocADT = 7
    AllocClosure = 8
    GetField = 9
    If = 10
    LoadConst = 11
    Goto = 12
    GetTag = 13
    LoadConsti = 14
    Fatal = 15
    AllocStorage = 16
    ShapeOf = 17
    ReshapeTensor = 18
    KillRegister = 19


OPERAND_KINDS = {
    "reg": "a register index of the function",
    "regs": "a list of register indices",
    "jump": "a relative jump landing inside the function",
    "func": "an index into the function table",
    "packed": "an index into the kernel table",
    "const": "an index into the constant table",
    "count": "a non-negative int",
    "int": "an int",
    "shape": "a list of non-negative ints",
    "dtype": "a dtype name",
    "text": "a str",
}
"""What each operand kind must be (the loader checks each operand against its kind)."""


class Instruction:
    """Base of instructions: ``OPCODE`` and ``OPERANDS`` (``(field, kind)`` pairs, in field order)."""

    __slots__ = ()
    OPCODE: Opcode
    OPERANDS: tuple

    def operands(self) -> tuple:
        """The operand values in ``OPERANDS`` order."""
        return tuple(getattr(self, f.name) for f in fields(self))  # type: ignore[arg-type]

    def __str__(self):
        parts = []
        for (name, kind), value in zip(self.OPERANDS, self.operands(), strict=True):
            if kind == "reg":
                parts.append(f"{name}=${value}")
            elif kind == "regs":
                parts.append(f"{name}=[{', '.join(f'${r}' for r in value)}]")
            elif kind == "text":
                parts.append(f"{name}={value!r}")
            else:
                parts.append(f"{name}={value}")
        return f"{type(self).__name__} {' '.join(parts)}".rstrip()


def _instruction(opcode, *operands):
    """Class decorator: a frozen slotted dataclass with ``OPCODE`` and ``OPERANDS`` set."""

    def wrap(cls):
        cls.OPCODE = opcode
        cls.OPERANDS = operands
        cls = dataclass(frozen=True, slots=True)(cls)
        if tuple(f.name for f in fields(cls)) != tuple(name for name, _ in operands):
            raise TypeError(f"{cls.__name__}: OPERANDS must list the fields in order")
        return cls

    return wrap


@_instruction(Opcode.Move, ("src", "reg"), ("dst", "reg"))
class Move(Instruction):
    src: int
    dst: int


@_instruction(Opcode.Ret, ("result", "reg"))
class Ret(Instruction):
    result: int


@_instruction(Opcode.Fatal, ("message", "text"))
class Fatal(Instruction):
    message: str


@_instruction(Opcode.InvokePacked, ("packed_index", "packed"), ("arity", "count"), ("output_size", "count"),
              ("args", "regs"))
class InvokePacked(Instruction):
    packed_index: int
    arity: int
    output_size: int
    args: tuple


@_instruction(Opcode.AllocStorage, ("size", "reg"), ("alignment", "count"), ("dtype_hint", "dtype"),
              ("device_index", "count"), ("dst", "reg"))
class AllocStorage(Instruction):
    size: int
    alignment: int
    dtype_hint: str
    device_index: int
    dst: int


@_instruction(Opcode.AllocTensor, ("storage", "reg"), ("offset", "count"), ("shape", "shape"), ("dtype", "dtype"),
              ("dst", "reg"))
class AllocTensor(Instruction):
    storage: int
    offset: int
    shape: tuple
    dtype: str
    dst: int


@_instruction(Opcode.AllocTensorReg, ("storage", "reg"), ("offset", "count"), ("shape_register", "reg"),
              ("dtype", "dtype"), ("dst", "reg"))
class AllocTensorReg(Instruction):
    storage: int
    offset: int
    shape_register: int
    dtype: str
    dst: int


@_instruction(Opcode.AllocADT, ("tag", "count"), ("fields", "regs"), ("dst", "reg"))
class AllocADT(Instruction):
    tag: int
    fields: tuple
    dst: int


@_instruction(Opcode.AllocClosure, ("func_index", "func"), ("free_vars", "regs"), ("dst", "reg"))
class AllocClosure(Instruction):
    func_index: int
    free_vars: tuple
    dst: int


@_instruction(Opcode.Invoke, ("func_index", "func"), ("args", "regs"), ("dst", "reg"))
class InvokeFunc(Instruction):
    func_index: int
    args: tuple
    dst: int


@_instruction(Opcode.InvokeClosure, ("closure", "reg"), ("args", "regs"), ("dst", "reg"))
class InvokeClosure(Instruction):
    closure: int
    args: tuple
    dst: int


@_instruction(Opcode.If, ("cond", "reg"), ("true_offset", "jump"), ("false_offset", "jump"))
class If(Instruction):
    cond: int
    true_offset: int
    false_offset: int


@_instruction(Opcode.Goto, ("pc_offset", "jump"))
class Goto(Instruction):
    pc_offset: int


@_instruction(Opcode.LoadConst, ("const_index", "const"), ("dst", "reg"))
class LoadConst(Instruction):
    const_index: int
    dst: int


@_instruction(Opcode.LoadConsti, ("value", "int"), ("dst", "reg"))
class LoadConsti(Instruction):
    value: int
    dst: int


@_instruction(Opcode.GetField, ("obj", "reg"), ("field_index", "count"), ("dst", "reg"))
class GetField(Instruction):
    obj: int
    field_index: int
    dst: int


@_instruction(Opcode.GetTag, ("obj", "reg"), ("dst", "reg"))
class GetTag(Instruction):
    obj: int
    dst: int


@_instruction(Opcode.ShapeOf, ("tensor", "reg"), ("dst", "reg"))
class ShapeOf(Instruction):
    tensor: int
    dst: int


@_instruction(Opcode.ReshapeTensor, ("tensor", "reg"), ("newshape", "reg"), ("dst", "reg"))
class ReshapeTensor(Instruction):
    tensor: int
    newshape: int
    dst: int


@_instruction(Opcode.KillRegister, ("dst", "reg"))
class KillRegister(Instruction):
    dst: int


INSTRUCTIONS = {cls.__name__: cls for cls in (
    Move, Ret, Fatal, InvokePacked, AllocStorage, AllocTensor, AllocTensorReg, AllocADT, AllocClosure, InvokeFunc,
    InvokeClosure, If, Goto, LoadConst, LoadConsti, GetField, GetTag, ShapeOf, ReshapeTensor, KillRegister)}
"""Instruction classes by name (the name is what the serialized form records)."""
