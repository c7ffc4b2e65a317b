"""The VM executable's file format (kiln/runtime/vm/serialize.py, executable.py): round trips, and every kind of
damaged or malformed file refused with a KilnError naming what is wrong (never another exception, never a crash)."""

import json
import random

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.error import KilnError
from kiln.runtime.params import save_param_dict
from kiln.runtime.vm import Executable, VirtualMachine, VMFunction, serialize
from kiln.runtime.vm import instruction as I

F32 = ("tensor", (4,), "float32")


@pytest.fixture(scope="module")
def addone():
    a = te.placeholder((4,), name="A")
    b = te.compute((4,), lambda i: a[i] + tir.const(1.0, "float32"), name="B")
    return kiln.build(te.create_schedule(b.op), [a, b], target="llvm", name="addone")


def _program():
    """main(x) = if c0 { addone(x) } else { (x, c1).0 }, with a helper function called through a closure."""
    helper = VMFunction("helper", ("x",), (I.Ret(0),), 1, (F32,))
    main = VMFunction("main", ("x",), (
        I.LoadConst(0, 1), I.If(1, 1, 6), I.LoadConsti(16, 2), I.AllocStorage(2, 64, "float32", 0, 3),
        I.AllocTensor(3, 0, (4,), "float32", 4), I.InvokePacked(0, 2, 1, (0, 4)), I.Ret(4),
        I.LoadConst(1, 5), I.AllocADT(0, (0, 5), 6), I.GetField(6, 0, 7), I.AllocClosure(1, (), 8),
        I.InvokeClosure(8, (7,), 9), I.Ret(9)), 10, (F32,))
    return [main, helper], [np.array(True), np.arange(3, dtype="int64")], ["addone"]


def test_save_and_load_round_trip(addone):
    functions, constants, kernels = _program()
    exe = Executable(functions, constants, kernels, addone)
    code, lib = exe.save()
    assert isinstance(code, bytes) and code.startswith(b"KILNVMEX") and lib is addone
    back = Executable.load_exec(code, lib)
    assert back.functions == exe.functions and back.primitive_ops == ["addone"]
    assert [c.numpy().tolist() for c in back.constants] == [True, [0, 1, 2]]
    assert back.bytecode == exe.bytecode and "InvokePacked packed_index=0" in back.bytecode
    assert back.get_function_arity("main") == 1 and back.get_function_param_name("main", 0) == "x"
    assert back.get_function_param_type("main", 0) == "Tensor[(4), float32]"
    x = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(VirtualMachine(back, kiln.cpu(0)).run(x).numpy(), x + 1)
    assert "Kernels (1): addone" in back.stats


def _raw(functions=None, primitives=("addone",), num_constants=2, constants=None):
    header = {"functions": functions if functions is not None else
              [serialize._encode_function(f) for f in _program()[0]],
              "primitives": list(primitives), "num_constants": num_constants}
    consts = constants if constants is not None else save_param_dict({"0": np.array(True), "1": np.arange(3)})
    return header, consts


def _with(change):
    header, consts = _raw()
    change(header)
    return serialize.pack(header, consts)


def _set_instruction(fn, pc, value):
    return lambda h: h["functions"][fn]["instructions"].__setitem__(pc, value)


CORRUPTIONS = [
    ("bad magic", lambda code: b"NOTKILN!" + code[8:], "bad magic"),
    ("too short", lambda code: code[:20], "bad magic number or too short"),
    ("newer version", lambda code: code[:8] + (99).to_bytes(4, "little") + code[12:], "format version 99"),
    ("truncated", lambda code: code[:-5], "do not add up to its length"),
    ("trailing bytes", lambda code: code + b"xx", "do not add up to its length"),
    ("flipped byte", lambda code: code[:100] + bytes([code[100] ^ 1]) + code[101:], "SHA-256"),
]


@pytest.mark.parametrize("name,mutate,message", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_damaged_files_are_refused(addone, name, mutate, message):
    functions, constants, kernels = _program()
    code, _ = Executable(functions, constants, kernels, addone).save()
    with pytest.raises(KilnError, match=message):
        Executable.load_exec(mutate(code), addone)


MALFORMED = [
    ("register out of range", _set_instruction(0, 0, ["LoadConst", 0, 10]), r"register 10 is out of range"),
    ("jump outside", _set_instruction(0, 1, ["If", 1, 1, 40]), r"jump 40 does not land ahead inside the function"),
    ("jump backward", _set_instruction(0, 1, ["If", 1, 0, 6]), r"jump 0 does not land ahead"),
    ("function index", _set_instruction(0, 10, ["AllocClosure", 7, [], 8]), r"function index 7 is out of range"),
    ("kernel index", _set_instruction(0, 5, ["InvokePacked", 3, 2, 1, [0, 4]]), r"kernel index 3 is out of range"),
    ("constant index", _set_instruction(0, 7, ["LoadConst", 2, 5]), r"constant index 2 is out of range"),
    ("unknown instruction", _set_instruction(0, 0, ["Teleport", 1]), r"unknown instruction 'Teleport'"),
    ("operand count", _set_instruction(0, 0, ["LoadConst", 0]), r"LoadConst takes 2 operands, got 1"),
    ("dtype", _set_instruction(0, 4, ["AllocTensor", 3, 0, [4], "float128", 4]), r"unknown dtype 'float128'"),
    ("negative shape", _set_instruction(0, 4, ["AllocTensor", 3, 0, [-4], "float32", 4]), r"expected a shape"),
    ("negative offset", _set_instruction(0, 4, ["AllocTensor", 3, -8, [4], "float32", 4]), r"non-negative int"),
    ("arity", _set_instruction(0, 5, ["InvokePacked", 0, 3, 1, [0, 4]]), r"arity 3 and output_size 1 do not match"),
    ("alignment", _set_instruction(0, 3, ["AllocStorage", 2, 48, "float32", 0, 3]), r"alignment 48 is not a power"),
    ("falls off the end", lambda h: h["functions"][1]["instructions"].__setitem__(0, ["Move", 0, 0]),
     r"'helper': its last instruction \(Move\) would run off the end"),
    ("call arity", lambda h: h["functions"][0]["instructions"].__setitem__(11, ["InvokeFunc", 1, [7, 7], 9]),
     r"InvokeFunc passes 2 arguments to 'helper', which takes 1"),
    ("captures too many", _set_instruction(0, 10, ["AllocClosure", 1, [7, 7], 8]), r"captures 2 values for 'helper'"),
    ("duplicate names", lambda h: h["functions"][1].__setitem__("name", "main"), r"two functions have the same name"),
    ("registers", lambda h: h["functions"][0].__setitem__("register_file_size", 0), r"register_file_size 0 must hold"),
    ("huge register file", lambda h: h["functions"][0].__setitem__("register_file_size", 1 << 40), r"at most"),
    ("param types", lambda h: h["functions"][0].__setitem__("param_types", [["tensor", [4], "f32"]]),
     r"parameter 'x'.*unknown dtype 'f32'"),
    ("param count", lambda h: h["functions"][0].__setitem__("param_types", []), r"one parameter type per parameter"),
    ("no functions table", lambda h: h.pop("functions"), r"'functions' is missing"),
    ("kernel names", lambda h: h.__setitem__("primitives", [3]), r"kernel names must be str"),
    ("constant count", lambda h: h.__setitem__("num_constants", 3), r"expected 3 constants named 0..2, got 2"),
    ("bool as int", _set_instruction(0, 0, ["LoadConst", True, 1]), r"constant index True is out of range"),
    # found by the bad-input probe (vm.load_exec.resealed): a TypeError, and a count to 2**40 that never ended
    ("dtype not a str", _set_instruction(0, 4, ["AllocTensor", 3, 0, [4], [-1], 4]), r"unknown dtype \[-1\]"),
    ("param dtype not a str", lambda h: h["functions"][0].__setitem__("param_types", [["tensor", [4], {"a": 1}]]),
     r"parameter 'x': has the unknown dtype \{'a': 1\}"),
    ("late-bound dtype not a str", lambda h: h.__setitem__("late_bound", {"0": ["c", [1], {}]}),
     r"late-bound constant '0': malformed entry"),
    ("huge constant count", lambda h: h.__setitem__("num_constants", 1 << 40),
     r"expected 1099511627776 constants named 0..1099511627775, got 2"),
]


@pytest.mark.parametrize("name,change,message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_executables_are_refused_naming_the_problem(addone, name, change, message):
    with pytest.raises(KilnError, match=message):
        Executable.load_exec(_with(change), addone)


def test_header_that_is_not_json_and_constants_that_are_not_parameters(addone):
    _, consts = _raw()
    with pytest.raises(KilnError, match="header is not valid JSON"):
        Executable.load_exec(serialize.pack(b"{not json", consts), addone)
    with pytest.raises(KilnError, match="header is not valid JSON"):  # found by the probe: a RecursionError
        Executable.load_exec(serialize.pack(b"[" * 200000, consts), addone)
    header, _ = _raw()
    with pytest.raises(KilnError, match="load_param_dict"):
        Executable.load_exec(serialize.pack(header, b"\x00" * 40), addone)
    with pytest.raises(KilnError, match="bytecode must be bytes"):
        Executable.load_exec("KILNVMEX", addone)
    with pytest.raises(KilnError, match="lib must be a runtime Module"):
        Executable.load_exec(b"", "lib.so")


def test_executables_built_in_memory_get_the_same_checks():
    bad = VMFunction("main", ("x",), (I.Move(0, 5), I.Ret(5)), 2, (F32,))
    with pytest.raises(KilnError, match=r"Executable: function 'main' instruction 0 .*register 5 is out of range"):
        Executable([bad], [], [])
    with pytest.raises(KilnError, match="must be VMFunctions"):
        Executable(["main"], [], [])


def test_random_mutations_never_escape_as_other_errors(addone):
    """Operands changed at random (with a valid digest): each file is refused with a KilnError, or loads and then
    runs or fails with a KilnError; no other exception, no crash."""
    rng = random.Random(12)
    header, consts = _raw()
    text = json.dumps(header)
    x = np.arange(4, dtype="float32")
    outcomes = set()
    for _ in range(300):
        mutated = json.loads(text)
        code = mutated["functions"][rng.randrange(2)]["instructions"]
        instr = code[rng.randrange(len(code))]
        slot = rng.randrange(1, len(instr)) if len(instr) > 1 else 0
        instr[slot] = rng.choice([-1, 0, 1, 2, 3, 7, 9, 1 << 40, "float32", [0, 1], [], None])
        try:
            exe = Executable.load_exec(serialize.pack(mutated, consts), addone)
        except KilnError:
            outcomes.add("refused")
            continue
        try:
            VirtualMachine(exe, kiln.cpu(0)).run(x)
            outcomes.add("ran")
        except KilnError:
            outcomes.add("failed at run time")
    assert outcomes == {"refused", "ran", "failed at run time"}
