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
from typing import ClassVar

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
    OPCODE: ClassVar[Opcode]
    OPERANDS: ClassVar[tuple]

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


@dataclass(frozen=True, slots=True)
class Move(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.Move
    OPERANDS: ClassVar[tuple] = (("src", "reg"), ("dst", "reg"))
    src: int
    dst: int


@dataclass(frozen=True, slots=True)
class Ret(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.Ret
    OPERANDS: ClassVar[tuple] = (("result", "reg"),)
    result: int


@dataclass(frozen=True, slots=True)
class Fatal(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.Fatal
    OPERANDS: ClassVar[tuple] = (("message", "text"),)
    message: str


@dataclass(frozen=True, slots=True)
class InvokePacked(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.InvokePacked
    OPERANDS: ClassVar[tuple] = (
        ("packed_index", "packed"), ("arity", "count"), ("output_size", "count"), ("args", "regs"))
    packed_index: int
    arity: int
    output_size: int
    args: tuple


@dataclass(frozen=True, slots=True)
class AllocStorage(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.AllocStorage
    OPERANDS: ClassVar[tuple] = (
        ("size", "reg"), ("alignment", "count"), ("dtype_hint", "dtype"), ("device_index", "count"), ("dst", "reg"))
    size: int
    alignment: int
    dtype_hint: str
    device_index: int
    dst: int


@dataclass(frozen=True, slots=True)
class AllocTensor(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.AllocTensor
    OPERANDS: ClassVar[tuple] = (
        ("storage", "reg"), ("offset", "count"), ("shape", "shape"), ("dtype", "dtype"), ("dst", "reg"))
    storage: int
    offset: int
    shape: tuple
    dtype: str
    dst: int


@dataclass(frozen=True, slots=True)
class AllocTensorReg(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.AllocTensorReg
    OPERANDS: ClassVar[tuple] = (
        ("storage", "reg"), ("offset", "count"), ("shape_register", "reg"), ("dtype", "dtype"), ("dst", "reg"))
    storage: int
    offset: int
    shape_register: int
    dtype: str
    dst: int


@dataclass(frozen=True, slots=True)
class AllocADT(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.AllocADT
    OPERANDS: ClassVar[tuple] = (("tag", "count"), ("fields", "regs"), ("dst", "reg"))
    tag: int
    fields: tuple
    dst: int


@dataclass(frozen=True, slots=True)
class AllocClosure(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.AllocClosure
    OPERANDS: ClassVar[tuple] = (("func_index", "func"), ("free_vars", "regs"), ("dst", "reg"))
    func_index: int
    free_vars: tuple
    dst: int


@dataclass(frozen=True, slots=True)
class InvokeFunc(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.Invoke
    OPERANDS: ClassVar[tuple] = (("func_index", "func"), ("args", "regs"), ("dst", "reg"))
    func_index: int
    args: tuple
    dst: int


@dataclass(frozen=True, slots=True)
class InvokeClosure(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.InvokeClosure
    OPERANDS: ClassVar[tuple] = (("closure", "reg"), ("args", "regs"), ("dst", "reg"))
    closure: int
    args: tuple
    dst: int


@dataclass(frozen=True, slots=True)
class If(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.If
    OPERANDS: ClassVar[tuple] = (("cond", "reg"), ("true_offset", "jump"), ("false_offset", "jump"))
    cond: int
    true_offset: int
    false_offset: int


@dataclass(frozen=True, slots=True)
class Goto(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.Goto
    OPERANDS: ClassVar[tuple] = (("pc_offset", "jump"),)
    pc_offset: int


@dataclass(frozen=True, slots=True)
class LoadConst(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.LoadConst
    OPERANDS: ClassVar[tuple] = (("const_index", "const"), ("dst", "reg"))
    const_index: int
    dst: int


@dataclass(frozen=True, slots=True)
class LoadConsti(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.LoadConsti
    OPERANDS: ClassVar[tuple] = (("value", "int"), ("dst", "reg"))
    value: int
    dst: int


@dataclass(frozen=True, slots=True)
class GetField(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.GetField
    OPERANDS: ClassVar[tuple] = (("obj", "reg"), ("field_index", "count"), ("dst", "reg"))
    obj: int
    field_index: int
    dst: int


@dataclass(frozen=True, slots=True)
class GetTag(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.GetTag
    OPERANDS: ClassVar[tuple] = (("obj", "reg"), ("dst", "reg"))
    obj: int
    dst: int


@dataclass(frozen=True, slots=True)
class ShapeOf(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.ShapeOf
    OPERANDS: ClassVar[tuple] = (("tensor", "reg"), ("dst", "reg"))
    tensor: int
    dst: int


@dataclass(frozen=True, slots=True)
class ReshapeTensor(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.ReshapeTensor
    OPERANDS: ClassVar[tuple] = (("tensor", "reg"), ("newshape", "reg"), ("dst", "reg"))
    tensor: int
    newshape: int
    dst: int


@dataclass(frozen=True, slots=True)
class KillRegister(Instruction):
    OPCODE: ClassVar[Opcode] = Opcode.KillRegister
    OPERANDS: ClassVar[tuple] = (("dst", "reg"),)
    dst: int


INSTRUCTIONS: dict[str, type[Instruction]] = {cls.__name__: cls for cls in (
    Move, Ret, Fatal, InvokePacked, AllocStorage, AllocTensor, AllocTensorReg, AllocADT, AllocClosure, InvokeFunc,
    InvokeClosure, If, Goto, LoadConst, LoadConsti, GetField, GetTag, ShapeOf, ReshapeTensor, KillRegister)}
"""Instruction classes by name (the name is what the serialized form records)."""

for _cls in INSTRUCTIONS.values():  # the serializer and the loader rely on OPERANDS naming the fields in order
    if tuple(f.name for f in fields(_cls)) != tuple(name for name, _ in _cls.OPERANDS):  # type: ignore[arg-type]
        raise TypeError(f"{_cls.__name__}: OPERANDS must list the fields in order")
