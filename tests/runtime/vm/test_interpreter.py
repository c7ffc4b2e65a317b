"""The VM's interpreter loop (kiln/runtime/vm/interpreter.py) on hand-assembled bytecode: every instruction's
semantics, kernels called with registers, tail calls, and run-time errors that name the function and instruction."""

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.error import KilnError, RuntimeArgumentError
from kiln.runtime.vm import Executable, VirtualMachine, VMClosure, VMFunction
from kiln.runtime.vm import instruction as I

F32 = ("tensor", (4,), "float32")
I32 = ("tensor", (), "int32")


def _run(functions, *args, constants=(), kernels=(), lib=None, entry="main"):
    exe = Executable(functions, constants, kernels, lib)
    return VirtualMachine(exe, kiln.cpu(0)).invoke(entry, *args)


def _fn(name, params, code, types, registers=None):
    return VMFunction(name, tuple(params), tuple(code), registers or 16, tuple(types))


@pytest.fixture(scope="module")
def kernels():
    """``addone`` on 4 floats and ``double`` on (n, 2) floats of any n (a symbolic shape)."""
    a = te.placeholder((4,), name="A")
    b = te.compute((4,), lambda i: a[i] + tir.const(1.0, "float32"), name="B")
    mod = kiln.lower(te.create_schedule(b.op), [a, b], name="addone")
    n = te.var("n")
    x = te.placeholder((n, 2), name="X")
    y = te.compute((n, 2), lambda i, j: x[i, j] * 2.0, name="Y")
    mod.update(kiln.lower(te.create_schedule(y.op), [x, y], name="double"))
    return kiln.build(mod, target="llvm")


def test_storage_tensors_and_a_kernel(kernels):
    code = [I.LoadConsti(64, 1), I.AllocStorage(1, 64, "float32", 0, 2), I.AllocTensor(2, 0, (4,), "float32", 3),
            I.InvokePacked(0, 2, 1, (0, 3)), I.Ret(3)]
    out = _run([_fn("main", ["x"], code, [F32])], np.arange(4, dtype="float32"), kernels=["addone"], lib=kernels)
    np.testing.assert_array_equal(out.numpy(), np.arange(4) + 1)


def test_dynamic_shapes_through_registers(kernels):
    """ShapeOf, AllocStorage of a computed size, AllocTensorReg and ReshapeTensor: what relay.Any needs."""
    x_type = ("tensor", (None, 2), "float32")
    code = [I.ShapeOf(0, 1), I.LoadConsti(4096, 2), I.AllocStorage(2, 64, "float32", 0, 3),
            I.AllocTensorReg(3, 0, 1, "float32", 4), I.InvokePacked(0, 2, 1, (0, 4)),
            I.LoadConst(0, 5), I.ReshapeTensor(4, 5, 6), I.Ret(6)]
    main = _fn("main", ["x"], code, [x_type])
    for rows in (1, 3, 8):
        x = np.arange(rows * 2, dtype="float32").reshape(rows, 2)
        out = _run([main], x, constants=[np.array([rows * 2], "int64")], kernels=["double"],
                   lib=kernels)
        np.testing.assert_array_equal(out.numpy(), 2 * x.reshape(-1))


def test_adts_closures_moves_and_tags():
    # main(x) = let t = (x, x); let c = closure(pick, t); c(1) -> t.1; GetTag of t is 0
    pick = _fn("pick", ["t", "i"], [I.GetField(0, 1, 2), I.Ret(2)], [("tuple", (F32, F32)), I32])
    main = _fn("main", ["x"], [I.AllocADT(0, (0, 0), 1), I.AllocClosure(1, (1,), 2), I.LoadConsti(1, 3),
                               I.InvokeClosure(2, (3,), 4), I.GetTag(1, 5), I.Move(4, 6),
                               I.AllocADT(0, (6, 5), 7), I.Ret(7)], [F32])
    value, tag = _run([main, pick], np.ones(4, "float32"))
    np.testing.assert_array_equal(value.numpy(), np.ones(4))
    assert tag.numpy() == 0 and tag.dtype == "int64"


def test_if_goto_and_kill():
    # main(c, x) = if c { x } else { (x is killed) 7 }
    code = [I.If(0, 1, 3), I.Move(1, 2), I.Goto(4), I.KillRegister(1), I.LoadConsti(7, 3), I.Move(3, 2), I.Ret(2)]
    main = _fn("main", ["c", "x"], code, [("tensor", (), "bool"), F32])
    assert _run([main], True, np.ones(4, "float32")).shape == (4,)
    assert _run([main], False, np.ones(4, "float32")).numpy() == 7


def test_if_refuses_a_condition_that_is_not_a_scalar():
    main = _fn("main", ["t"], [I.If(0, 1, 2), I.Ret(0), I.Ret(0)], [("tuple", ())])
    with pytest.raises(KilnError, match=r"'main' instruction 0 \(If .*\): If: the condition must be a scalar"):
        _run([main], ())
    vector = _fn("main", ["t"], [I.If(0, 1, 2), I.Ret(0), I.Ret(0)], [F32])
    with pytest.raises(KilnError, match=r"the condition must be a scalar tensor, got \(4,\)"):
        _run([vector], np.ones(4, "float32"))


def test_recursion_deeper_than_the_limit_is_refused():
    # f(x) = f(x) + nothing: a non-tail self call (the Move after it keeps it out of tail position)
    f = _fn("f", ["x"], [I.InvokeFunc(0, (0,), 1), I.Move(1, 2), I.Ret(2)], [F32])
    vm = VirtualMachine(Executable([f], [], []), kiln.cpu(0))
    vm.max_call_depth = 50
    with pytest.raises(KilnError, match="call stack is deeper than 50 frames"):
        vm.invoke("f", np.ones(4, "float32"))


def test_tail_recursion_needs_no_frames():
    # loop(c, x) = if c { loop(false, x) } else { x }: with no frames allowed, only a tail call can run
    code = [I.If(0, 1, 4), I.LoadConst(0, 2), I.InvokeFunc(0, (2, 1), 3), I.Ret(3), I.Ret(1)]
    loop = _fn("loop", ["c", "x"], code, [("tensor", (), "bool"), F32])
    vm = VirtualMachine(Executable([loop], [np.array(False)], []), kiln.cpu(0))
    vm.max_call_depth = 0
    np.testing.assert_array_equal(vm.invoke("loop", True, np.ones(4, "float32")).numpy(), np.ones(4))


def test_run_time_errors_name_the_function_and_instruction(kernels):
    f32 = np.ones(4, "float32")
    fatal = _fn("main", ["x"], [I.Fatal("no branch matched")], [F32])
    with pytest.raises(KilnError, match=r"'main' instruction 0 \(Fatal .*\): Fatal: no branch matched"):
        _run([fatal], f32)
    too_small = _fn("main", ["x"], [I.LoadConsti(8, 1), I.AllocStorage(1, 64, "float32", 0, 2),
                                    I.AllocTensor(2, 0, (4,), "float32", 3), I.Ret(3)], [F32])
    with pytest.raises(KilnError, match=r"AllocTensor .*16 bytes\) at offset 0 does not fit its storage of 8 bytes"):
        _run([too_small], f32)
    bad_reshape = _fn("main", ["x"], [I.LoadConst(0, 1), I.ReshapeTensor(0, 1, 2), I.Ret(2)], [F32])
    with pytest.raises(KilnError, match=r"ReshapeTensor: cannot view a tensor of shape \(4,\).* as shape \(3,\)"):
        _run([bad_reshape], f32, constants=[np.array([3], "int64")])
    negative = _fn("main", ["x"], [I.LoadConst(0, 1), I.LoadConsti(64, 2), I.AllocStorage(2, 64, "float32", 0, 3),
                                   I.AllocTensorReg(3, 0, 1, "float32", 4), I.Ret(4)], [F32])
    with pytest.raises(KilnError, match="AllocTensorReg: negative dimension in shape"):
        _run([negative], f32, constants=[np.array([-2, 2], "int64")])
    huge = _fn("main", ["x"], [I.LoadConsti(1 << 62, 1), I.AllocStorage(1, 64, "float32", 0, 2), I.Ret(0)], [F32])
    with pytest.raises(KilnError, match="more than this machine's memory"):
        _run([huge], f32)
    wrong_arg = _fn("main", ["x"], [I.AllocADT(0, (), 1), I.InvokePacked(0, 2, 1, (1, 0)), I.Ret(0)], [F32])
    with pytest.raises(RuntimeArgumentError, match="addone: argument 0 is a ADT, not a tensor"):
        _run([wrong_arg], f32, kernels=["addone"], lib=kernels)
    wrong_shape = _fn("main", ["x"], [I.InvokePacked(0, 2, 1, (0, 0)), I.Ret(0)], [("tensor", (2,), "float32")])
    with pytest.raises(RuntimeArgumentError, match="'main' instruction 0 .*addone"):
        _run([wrong_shape], np.ones(2, "float32"), kernels=["addone"], lib=kernels)
    not_closure = _fn("main", ["x"], [I.InvokeClosure(0, (), 1), I.Ret(1)], [F32])
    with pytest.raises(KilnError, match="InvokeClosure: the callee is a ndarray, not a closure"):
        _run([not_closure], f32)
    arity = _fn("main", ["x"], [I.AllocClosure(0, (0,), 1), I.InvokeClosure(1, (0,), 2), I.Ret(2)], [F32])
    with pytest.raises(KilnError, match="call of 'main' with 2 values; it takes 1"):
        _run([arity], f32)
    field = _fn("main", ["x"], [I.AllocADT(0, (0,), 1), I.GetField(1, 3, 2), I.Ret(2)], [F32])
    with pytest.raises(KilnError, match="GetField: field 3 of a value with 1 fields"):
        _run([field], f32)


def test_missing_kernels_and_libraries_are_reported(kernels):
    main = _fn("main", ["x"], [I.InvokePacked(0, 2, 1, (0, 0)), I.Ret(0)], [F32])
    with pytest.raises(KilnError, match="calls kernel 'addone' but has no library"):
        VirtualMachine(Executable([main], [], ["addone"]), kiln.cpu(0))
    with pytest.raises(KilnError, match="library has no kernel 'subtract'"):
        VirtualMachine(Executable([main], [], ["subtract"], kernels), kiln.cpu(0))


def test_closures_are_returned_and_passed_back():
    ident = _fn("ident", ["x"], [I.Ret(0)], [F32])
    make = _fn("make", [], [I.AllocClosure(0, (), 0), I.Ret(0)], [], registers=1)
    call = _fn("call", ["f", "x"], [I.InvokeClosure(0, (1,), 2), I.Ret(2)], [("object",), F32])
    vm = VirtualMachine(Executable([ident, make, call], [], []), kiln.cpu(0))
    closure = vm.invoke("make")
    assert isinstance(closure, VMClosure)
    np.testing.assert_array_equal(vm.invoke("call", closure, np.full(4, 3, "float32")).numpy(), np.full(4, 3))
    other = VirtualMachine(Executable([ident, make, call], [], []), kiln.cpu(0))
    with pytest.raises(RuntimeArgumentError, match=r"call argument 0 \(%f\): expects a closure this executable made"):
        other.invoke("call", closure, np.ones(4, "float32"))
