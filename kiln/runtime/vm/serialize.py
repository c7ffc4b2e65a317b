"""The VM executable's file format: writing it, and reading it back with every field checked.

Layout (little endian)::

    0   8 bytes   magic b"KILNVMEX"
    8   uint32    format version (FORMAT_VERSION)
    12  uint32    reserved, 0
    16  uint64    H, the size of the header
    24  uint64    C, the size of the constants
    32  32 bytes  SHA-256 of the H + C bytes that follow
    64  H bytes   the header: UTF-8 JSON {"functions": [...], "primitives": [...], "num_constants": N,
                  "late_bound": {index: [name, shape, dtype]}}
    ..  C bytes   the constants: a parameter dictionary (kiln.runtime.params, TVM's format) named "0" .. "N-1",
                  without the late-bound ones

A late-bound constant (TVM's: ``Executable.move_late_bound_consts``) is stored apart from the executable and
loaded into it by name before it runs; the file records its name, shape and dtype (:class:`LateBound`).

A function is ``{"name", "params", "param_types", "register_file_size", "instructions"}``; an instruction is the list
``[name, operand, ...]`` with the operands in the order of its class's ``OPERANDS`` (see
:mod:`~kiln.runtime.vm.instruction`). No pickle: nothing in the file is ever executed as Python.

Reading checks, in this order, and raises :class:`~kiln.error.KilnError` naming the first problem: the magic, the
version, the sizes against the data's length, the digest (accidental damage), the JSON, then every function:
unique names, parameters, a register file that holds them, every instruction's name and operand kinds, every
register, kernel, constant and function index in range, every jump landing ahead inside the function (the compiler
only jumps forward: loops are recursion), a last instruction that cannot fall off the end, the arity of each
``InvokeFunc`` and the constants' names. A file that passes can still fail at run time only with an error naming
the instruction (a wrong shape, say), never a crash.
"""

import hashlib
import json
import struct
from typing import NoReturn

from ...error import KilnError
from ..params import load_param_dict, save_param_dict
from .function import DATA, OBJECT, TENSOR, TUPLE, VMFunction
from .instruction import INSTRUCTIONS, AllocClosure, AllocStorage, Fatal, Goto, If, InvokeFunc, InvokePacked, Ret

__all__ = ["MAGIC", "FORMAT_VERSION", "LateBound", "check", "dump", "load", "pack"]

MAGIC = b"KILNVMEX"
FORMAT_VERSION = 1
_FIXED = struct.Struct("<8sIIQQ32s")
DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                    "float32", "float64"})
MAX_REGISTERS = 1 << 24
"""A register file larger than this is refused (a corrupt count would otherwise exhaust memory)."""
_TERMINATORS = (Ret, Goto, Fatal, If)


class LateBound:
    """The place of a late-bound constant: its ``name`` (``const_<index>``, TVM's), ``shape`` and ``dtype``."""

    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = str(name), tuple(int(d) for d in shape), str(dtype)

    def __eq__(self, other):
        return isinstance(other, LateBound) and (self.name, self.shape, self.dtype) == (other.name, other.shape,
                                                                                        other.dtype)

    def __hash__(self):
        return hash((self.name, self.shape, self.dtype))

    def __repr__(self):
        return f"LateBound({self.name}, {self.shape}, {self.dtype})"


def _encode_type(ptype):
    if ptype[0] == TENSOR:
        return [TENSOR, list(ptype[1]), ptype[2]]
    if ptype[0] == TUPLE:
        return [TUPLE, [_encode_type(f) for f in ptype[1]]]
    return [ptype[0]]  # OBJECT or DATA


def _encode_function(func: VMFunction) -> dict:
    code = [[type(instr).__name__, *(list(v) if isinstance(v, tuple) else v for v in instr.operands())]
            for instr in func.instructions]
    return {"name": func.name, "params": list(func.params), "param_types": [_encode_type(t) for t in func.param_types],
            "register_file_size": func.register_file_size, "instructions": code}


def pack(header, constants: bytes) -> bytes:
    """The file holding ``header`` (a JSON-able dict, or its text as bytes) and the serialized ``constants``, with
    its fixed part and digest."""
    text = header if isinstance(header, bytes) else json.dumps(header, separators=(",", ":")).encode()
    digest = hashlib.sha256(text)
    digest.update(constants)
    return _FIXED.pack(MAGIC, FORMAT_VERSION, 0, len(text), len(constants), digest.digest()) + text + constants


def dump(functions, constants, primitives) -> bytes:
    """Serialize an executable's functions, constants (NDArrays, numpy arrays, or :class:`LateBound` places) and
    kernel names."""
    late = {str(i): [c.name, list(c.shape), c.dtype] for i, c in enumerate(constants) if isinstance(c, LateBound)}
    header = {"functions": [_encode_function(f) for f in functions], "primitives": list(primitives),
              "num_constants": len(constants), "late_bound": late}
    return pack(header, save_param_dict({str(i): c for i, c in enumerate(constants) if str(i) not in late}))


class _Checker:
    """Checks one decoded header (see the module docstring); ``fail`` raises with the location."""

    def __init__(self, header, what):
        self.header = header
        self.what = what

    def fail(self, where, message) -> NoReturn:
        raise KilnError(f"{self.what}: {where}: {message}")

    def expect(self, condition, where, message):
        if not condition:
            self.fail(where, message)

    @staticmethod
    def is_int(value) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    def table(self, key, kind):
        value = self.header.get(key)
        self.expect(isinstance(value, kind), "header", f"{key!r} is missing or not a {kind.__name__}")
        return value

    def param_type(self, value, where, depth=0):
        self.expect(depth < 64 and isinstance(value, list) and value, where, "is not a parameter type")
        kind = value[0]
        if kind == TENSOR and len(value) == 3 and isinstance(value[1], list):
            self.expect(all(d is None or self.is_int(d) and d >= 0 for d in value[1]), where,
                        f"has the invalid shape {value[1]!r}")
            self.expect(isinstance(value[2], str) and value[2] in DTYPES, where,
                        f"has the unknown dtype {value[2]!r:.60}")
            return TENSOR, tuple(value[1]), value[2]
        if kind == TUPLE and len(value) == 2 and isinstance(value[1], list):
            return TUPLE, tuple(self.param_type(f, where, depth + 1) for f in value[1])
        self.expect(kind in (OBJECT, DATA) and len(value) == 1, where, f"is not a parameter type ({value!r:.60})")
        return (kind,)

    def operand(self, kind, value, where, limits):
        is_int = self.is_int
        if kind == "reg":
            self.expect(is_int(value) and 0 <= value < limits["reg"], where,
                        f"register {value!r} is out of range (the function has {limits['reg']} registers)")
            return value
        if kind == "regs":
            self.expect(isinstance(value, list), where, "expected a list of registers")
            return tuple(self.operand("reg", r, where, limits) for r in value)
        if kind in ("func", "packed", "const"):
            what = {"func": "function", "packed": "kernel", "const": "constant"}[kind]
            self.expect(is_int(value) and 0 <= value < limits[kind], where,
                        f"{what} index {value!r} is out of range (the executable has {limits[kind]})")
            return value
        if kind == "jump":  # forward only, as the compiler emits them: no loop hides inside a function
            target = limits["pc"] + value if is_int(value) else -1
            self.expect(limits["pc"] < target < limits["length"], where,
                        f"jump {value!r} does not land ahead inside the function ({limits['length']} instructions)")
            return value
        if kind == "count":
            self.expect(is_int(value) and value >= 0, where, f"expected a non-negative int, got {value!r}")
            return value
        if kind == "int":
            self.expect(is_int(value) and -(1 << 63) <= value < (1 << 63), where, f"expected an int64, got {value!r}")
            return value
        if kind == "shape":
            self.expect(isinstance(value, list) and len(value) <= 64 and all(is_int(d) and d >= 0 for d in value),
                        where, f"expected a shape (non-negative ints), got {value!r:.60}")
            return tuple(value)
        if kind == "dtype":
            self.expect(isinstance(value, str) and value in DTYPES, where, f"unknown dtype {value!r:.60}")
            return value
        self.expect(isinstance(value, str), where, f"expected a str, got {value!r:.60}")
        return value

    def instruction(self, raw, where, limits):
        self.expect(isinstance(raw, list) and raw and isinstance(raw[0], str), where, "is not an instruction")
        cls = INSTRUCTIONS.get(raw[0])
        if cls is None:
            self.fail(where, f"unknown instruction {raw[0]!r}")
        self.expect(len(raw) == 1 + len(cls.OPERANDS), where,
                    f"{raw[0]} takes {len(cls.OPERANDS)} operands, got {len(raw) - 1}")
        values = [self.operand(kind, value, f"{where} ({raw[0]} operand {name!r})", limits)
                  for (name, kind), value in zip(cls.OPERANDS, raw[1:], strict=True)]
        instr = cls(*values)
        if isinstance(instr, InvokePacked):
            self.expect(instr.arity == len(instr.args) and instr.output_size <= instr.arity, where,
                        f"InvokePacked: arity {instr.arity} and output_size {instr.output_size} do not match its "
                        f"{len(instr.args)} arguments")
        if isinstance(instr, AllocStorage):
            self.expect(instr.alignment > 0 and instr.alignment & (instr.alignment - 1) == 0, where,
                        f"AllocStorage: alignment {instr.alignment} is not a power of two")
        return instr

    def function(self, raw, index, limits) -> VMFunction:
        where = f"function #{index}"
        self.expect(isinstance(raw, dict), where, "is not an object")
        name = raw.get("name")
        self.expect(isinstance(name, str) and name, where, "has no name")
        where = f"function {name!r}"
        params, ptypes, size, code = (raw.get(k) for k in ("params", "param_types", "register_file_size",
                                                            "instructions"))
        self.expect(isinstance(params, list) and all(isinstance(p, str) for p in params), where,
                    "has no parameter list")
        self.expect(isinstance(ptypes, list) and len(ptypes) == len(params), where,
                    "needs one parameter type per parameter")
        types = tuple(self.param_type(t, f"{where} parameter {p!r}") for t, p in zip(ptypes, params, strict=True))
        self.expect(self.is_int(size) and len(params) <= size <= MAX_REGISTERS, where,
                    f"register_file_size {size!r} must hold its {len(params)} parameters (at most {MAX_REGISTERS})")
        self.expect(isinstance(code, list) and code, where, "has no instructions")
        instructions = []
        for pc, instr in enumerate(code):
            limits.update(reg=size, pc=pc, length=len(code))
            instructions.append(self.instruction(instr, f"{where} instruction {pc}", limits))
        self.expect(isinstance(instructions[-1], _TERMINATORS), where,
                    f"its last instruction ({type(instructions[-1]).__name__}) would run off the end")
        return VMFunction(name, tuple(params), tuple(instructions), size, types)


def load(data) -> tuple:
    """``(functions, constants, primitives)`` read from ``data`` (bytes), every field checked."""
    if isinstance(data, bytearray | memoryview):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise KilnError(f"load_exec: the bytecode must be bytes, got {type(data).__name__}")
    if len(data) < _FIXED.size or not data.startswith(MAGIC):
        raise KilnError("load_exec: not a kiln VM executable (bad magic number or too short)")
    _, version, _, header_size, const_size, digest = _FIXED.unpack_from(data)
    if version != FORMAT_VERSION:
        raise KilnError(f"load_exec: the executable has format version {version}; this kiln reads version "
                        f"{FORMAT_VERSION} (compile it again)")
    if _FIXED.size + header_size + const_size != len(data):
        raise KilnError(f"load_exec: the executable's sizes (header {header_size}, constants {const_size} bytes) do "
                        f"not add up to its length {len(data)} (truncated or damaged)")
    body = memoryview(data)[_FIXED.size:]
    if hashlib.sha256(body).digest() != digest:
        raise KilnError("load_exec: the executable is damaged (its content does not match its SHA-256 digest)")
    try:
        header = json.loads(bytes(body[:header_size]).decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:  # [[[... nested past the limit
        raise KilnError(f"load_exec: the executable's header is not valid JSON ({exc})") from None
    functions, primitives, num_constants = _check_header(header if isinstance(header, dict) else {}, "load_exec")
    late = _late_bound(header.get("late_bound", {}), num_constants)
    constants = load_param_dict(bytes(body[header_size:])) if const_size else {}
    # the counts first: a damaged num_constants (2**40) must not be counted up to
    if len(constants) + len(late) != num_constants or list(constants) != [
            str(i) for i in range(num_constants) if i not in late]:
        but = f" but the late-bound {', '.join(map(str, sorted(late)))}" if late else ""
        raise KilnError(f"load_exec: constants: expected {num_constants - len(late)} constants named "
                        f"0..{num_constants - 1}{but}, got {len(constants)}")
    return functions, tuple(late[i] if i in late else constants[str(i)] for i in range(num_constants)), primitives


def _late_bound(table, num_constants) -> dict:
    """The late-bound constants a header lists, by index, each entry checked."""
    if not isinstance(table, dict):
        raise KilnError("load_exec: late_bound is not a table")
    out = {}
    for key, entry in table.items():
        ok = (key.isdigit() and int(key) < num_constants and isinstance(entry, list) and len(entry) == 3
              and isinstance(entry[0], str) and isinstance(entry[1], list)
              and all(isinstance(d, int) and d >= 0 for d in entry[1]) and isinstance(entry[2], str)
              and entry[2] in DTYPES)
        if not ok:
            raise KilnError(f"load_exec: late-bound constant {key!r}: malformed entry {entry!r:.80}")
        out[int(key)] = LateBound(*entry)
    return out


def check(functions, num_constants, primitives) -> tuple:
    """The functions (VMFunctions) after the checks a loaded executable gets (KilnError naming the first problem)."""
    header = {"functions": [_encode_function(f) for f in functions], "primitives": list(primitives),
              "num_constants": num_constants}
    return _check_header(header, "Executable")[0]


def _check_header(header, what) -> tuple:
    """``(functions, primitives, num_constants)`` from a decoded header, every field checked (errors start with
    ``what``)."""
    checker = _Checker(header, what)
    raw_functions = checker.table("functions", list)
    primitives = checker.table("primitives", list)
    num_constants = header.get("num_constants")
    checker.expect(all(isinstance(p, str) for p in primitives), "header", "kernel names must be str")
    checker.expect(checker.is_int(num_constants) and num_constants >= 0, "header", "num_constants is not a count")
    limits = {"func": len(raw_functions), "packed": len(primitives), "const": num_constants}
    functions = [checker.function(raw, i, limits) for i, raw in enumerate(raw_functions)]
    names = [f.name for f in functions]
    checker.expect(len(set(names)) == len(names), "header", "two functions have the same name")
    for func in functions:
        for pc, instr in enumerate(func.instructions):
            where = f"function {func.name!r} instruction {pc}"
            if isinstance(instr, InvokeFunc):
                callee = functions[instr.func_index]
                checker.expect(len(instr.args) == len(callee.params), where,
                               f"InvokeFunc passes {len(instr.args)} arguments to {callee.name!r}, which takes "
                               f"{len(callee.params)}")
            elif isinstance(instr, AllocClosure):
                callee = functions[instr.func_index]
                checker.expect(len(instr.free_vars) <= len(callee.params), where,
                               f"AllocClosure captures {len(instr.free_vars)} values for {callee.name!r}, which takes "
                               f"{len(callee.params)} parameters")
    return tuple(functions), tuple(primitives), num_constants
