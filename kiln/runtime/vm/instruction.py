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
IsTag              ``dst`` = whether the ADT ``obj`` has tag ``tag``, as a bool scalar tensor (for ``If``)
ShapeOf            ``dst`` = the shape of tensor ``tensor`` as a 1-D int64 tensor
ReshapeTensor      ``dst`` = tensor ``tensor`` viewed with the shape held in register ``newshape`` (no copy)
KillRegister       drop the value of ``dst`` (its storage can be reused once nothing else holds it)
=================  ===================================================================================================

Where kiln departs from TVM: ``If`` tests a boolean tensor itself (TVM compares two registers, one loaded with
``LoadConsti 1``), so matching a constructor is ``IsTag`` then ``If`` (TVM: ``GetTag``, ``LoadConsti``, ``If``);
``AllocTensor``'s offset is an immediate (the planner computes offsets statically; a dynamic shape
gets a storage of its own, at offset 0); ``Fatal`` carries its message.

Each class lists its operands in ``OPERANDS`` by kind, and the serializer and the loader's checks are driven by that
table, so a new instruction is described once. The kinds: ``reg`` a register of the function, ``regs`` a list of
them, ``jump`` a relative jump landing inside the function, ``func``/``packed``/``const`` an index into the function,
kernel or constant table, ``count`` a non-negative int, ``int`` an int64, ``shape`` a list of non-negative ints,
``dtype`` a dtype name, ``text`` a str.
"""

from dataclasses import dataclass, fields
from typing import ClassVar

__all__ = ["Instruction", "INSTRUCTIONS", "Move", "Ret", "Fatal", "InvokePacked",
           "AllocStorage", "AllocTensor", "AllocTensorReg", "AllocADT", "AllocClosure", "InvokeFunc",
           "InvokeClosure", "If", "Goto", "LoadConst", "LoadConsti", "GetField", "GetTag", "IsTag", "ShapeOf",
           "ReshapeTensor", "KillRegister"]


class Instruction:
    """Base of instructions: ``OPERANDS`` lists ``(field, kind)`` pairs, in field order."""

    __slots__ = ()
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

    def tvm_text(self) -> str:
        """The instruction as TVM prints it in an executable's bytecode (``reshape_tensor $2 $0 $1``)."""
        return _TVM_TEXT[type(self).__name__](self)


@dataclass(frozen=True, slots=True)
class Move(Instruction):
    OPERANDS: ClassVar[tuple] = (("src", "reg"), ("dst", "reg"))
    src: int
    dst: int


@dataclass(frozen=True, slots=True)
class Ret(Instruction):
    OPERANDS: ClassVar[tuple] = (("result", "reg"),)
    result: int


@dataclass(frozen=True, slots=True)
class Fatal(Instruction):
    OPERANDS: ClassVar[tuple] = (("message", "text"),)
    message: str


@dataclass(frozen=True, slots=True)
class InvokePacked(Instruction):
    OPERANDS: ClassVar[tuple] = (
        ("packed_index", "packed"), ("arity", "count"), ("output_size", "count"), ("args", "regs"))
    packed_index: int
    arity: int
    output_size: int
    args: tuple


@dataclass(frozen=True, slots=True)
class AllocStorage(Instruction):
    OPERANDS: ClassVar[tuple] = (
        ("size", "reg"), ("alignment", "count"), ("dtype_hint", "dtype"), ("device_index", "count"), ("dst", "reg"))
    size: int
    alignment: int
    dtype_hint: str
    device_index: int
    dst: int


@dataclass(frozen=True, slots=True)
class AllocTensor(Instruction):
    OPERANDS: ClassVar[tuple] = (
        ("storage", "reg"), ("offset", "count"), ("shape", "shape"), ("dtype", "dtype"), ("dst", "reg"))
    storage: int
    offset: int
    shape: tuple
    dtype: str
    dst: int


@dataclass(frozen=True, slots=True)
class AllocTensorReg(Instruction):
    OPERANDS: ClassVar[tuple] = (
        ("storage", "reg"), ("offset", "count"), ("shape_register", "reg"), ("dtype", "dtype"), ("dst", "reg"))
    storage: int
    offset: int
    shape_register: int
    dtype: str
    dst: int


@dataclass(frozen=True, slots=True)
class AllocADT(Instruction):
    OPERANDS: ClassVar[tuple] = (("tag", "count"), ("fields", "regs"), ("dst", "reg"))
    tag: int
    fields: tuple
    dst: int


@dataclass(frozen=True, slots=True)
class AllocClosure(Instruction):
    OPERANDS: ClassVar[tuple] = (("func_index", "func"), ("free_vars", "regs"), ("dst", "reg"))
    func_index: int
    free_vars: tuple
    dst: int


@dataclass(frozen=True, slots=True)
class InvokeFunc(Instruction):
    OPERANDS: ClassVar[tuple] = (("func_index", "func"), ("args", "regs"), ("dst", "reg"))
    func_index: int
    args: tuple
    dst: int


@dataclass(frozen=True, slots=True)
class InvokeClosure(Instruction):
    OPERANDS: ClassVar[tuple] = (("closure", "reg"), ("args", "regs"), ("dst", "reg"))
    closure: int
    args: tuple
    dst: int


@dataclass(frozen=True, slots=True)
class If(Instruction):
    OPERANDS: ClassVar[tuple] = (("cond", "reg"), ("true_offset", "jump"), ("false_offset", "jump"))
    cond: int
    true_offset: int
    false_offset: int


@dataclass(frozen=True, slots=True)
class Goto(Instruction):
    OPERANDS: ClassVar[tuple] = (("pc_offset", "jump"),)
    pc_offset: int


@dataclass(frozen=True, slots=True)
class LoadConst(Instruction):
    OPERANDS: ClassVar[tuple] = (("const_index", "const"), ("dst", "reg"))
    const_index: int
    dst: int


@dataclass(frozen=True, slots=True)
class LoadConsti(Instruction):
    OPERANDS: ClassVar[tuple] = (("value", "int"), ("dst", "reg"))
    value: int
    dst: int


@dataclass(frozen=True, slots=True)
class GetField(Instruction):
    OPERANDS: ClassVar[tuple] = (("obj", "reg"), ("field_index", "count"), ("dst", "reg"))
    obj: int
    field_index: int
    dst: int


@dataclass(frozen=True, slots=True)
class GetTag(Instruction):
    OPERANDS: ClassVar[tuple] = (("obj", "reg"), ("dst", "reg"))
    obj: int
    dst: int


@dataclass(frozen=True, slots=True)
class IsTag(Instruction):
    OPERANDS: ClassVar[tuple] = (("obj", "reg"), ("tag", "int"), ("dst", "reg"))
    obj: int
    tag: int
    dst: int


@dataclass(frozen=True, slots=True)
class ShapeOf(Instruction):
    OPERANDS: ClassVar[tuple] = (("tensor", "reg"), ("dst", "reg"))
    tensor: int
    dst: int


@dataclass(frozen=True, slots=True)
class ReshapeTensor(Instruction):
    OPERANDS: ClassVar[tuple] = (("tensor", "reg"), ("newshape", "reg"), ("dst", "reg"))
    tensor: int
    newshape: int
    dst: int


@dataclass(frozen=True, slots=True)
class KillRegister(Instruction):
    OPERANDS: ClassVar[tuple] = (("dst", "reg"),)
    dst: int


INSTRUCTIONS: dict[str, type[Instruction]] = {cls.__name__: cls for cls in (
    Move, Ret, Fatal, InvokePacked, AllocStorage, AllocTensor, AllocTensorReg, AllocADT, AllocClosure, InvokeFunc,
    InvokeClosure, If, Goto, LoadConst, LoadConsti, GetField, GetTag, IsTag, ShapeOf, ReshapeTensor, KillRegister)}
"""Instruction classes by name (the name is what the serialized form records)."""


def _regs(regs) -> str:
    return ", ".join(f"${r}" for r in regs)


_TVM_TEXT = {  # TVM's mnemonics and operand order (runtime/vm/bytecode.cc), for bytecode listings
    "Move": lambda i: f"move ${i.dst} ${i.src}",
    "Ret": lambda i: f"ret ${i.result}",
    "Fatal": lambda i: "fatal",
    "InvokePacked": lambda i: f"invoke_packed PackedFunc[{i.packed_index}] "
                              f"(in: {_regs(i.args[:i.arity - i.output_size])}, "
                              f"out: {_regs(i.args[i.arity - i.output_size:])})",
    "AllocStorage": lambda i: f"alloc_storage ${i.dst} ${i.size} {i.alignment} {i.dtype_hint} {i.device_index}",
    "AllocTensor": lambda i: f"alloc_tensor ${i.dst} ${i.storage} {i.offset} [{', '.join(map(str, i.shape))}] "
                             f"{i.dtype}",
    "AllocTensorReg": lambda i: f"alloc_tensor_reg ${i.dst} ${i.storage} {i.offset} ${i.shape_register} {i.dtype}",
    "AllocADT": lambda i: f"alloc_data ${i.dst} tag({i.tag}) [{_regs(i.fields)}]",
    "AllocClosure": lambda i: f"alloc_closure ${i.dst} VMFunc[{i.func_index}]({_regs(i.free_vars)})",
    "InvokeFunc": lambda i: f"invoke ${i.dst} VMFunc[{i.func_index}]({_regs(i.args)})",
    "InvokeClosure": lambda i: f"invoke_closure ${i.dst} ${i.closure}({_regs(i.args)})",
    "If": lambda i: f"if ${i.cond} {i.true_offset} {i.false_offset}",
    "Goto": lambda i: f"goto {i.pc_offset}",
    "LoadConst": lambda i: f"load_const ${i.dst} Const[{i.const_index}]",
    "LoadConsti": lambda i: f"load_consti ${i.dst} {i.value}",
    "GetField": lambda i: f"get_field ${i.dst} ${i.obj}[{i.field_index}]",
    "GetTag": lambda i: f"get_tag ${i.dst} ${i.obj}",
    "IsTag": lambda i: f"is_tag ${i.dst} ${i.obj} tag({i.tag})",  # kiln's (TVM compares a get_tag with If)
    "ShapeOf": lambda i: f"shape_of ${i.dst} ${i.tensor}",
    "ReshapeTensor": lambda i: f"reshape_tensor ${i.dst} ${i.tensor} ${i.newshape}",
    "KillRegister": lambda i: f"kill_register ${i.dst}",
}

for _cls in INSTRUCTIONS.values():  # the serializer and the loader rely on OPERANDS naming the fields in order
    if tuple(f.name for f in fields(_cls)) != tuple(name for name, _ in _cls.OPERANDS):  # type: ignore[arg-type]
        raise TypeError(f"{_cls.__name__}: OPERANDS must list the fields in order")
