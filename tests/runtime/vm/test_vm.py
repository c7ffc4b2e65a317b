"""VirtualMachine's API (kiln/runtime/vm/vm.py): invoke/run/set_input/invoke_stateful/get_outputs/benchmark, the
PackedFuncs of the VM module, and arguments checked against the parameter types."""

import numpy as np
import pytest

import kiln
from kiln.error import KilnError, RuntimeArgumentError
from kiln.runtime.module import ProfileResult
from kiln.runtime.vm import ADT, Executable, VirtualMachine, VMFunction
from kiln.runtime.vm import instruction as I

X = ("tensor", (2, 3), "float32")
PAIR = ("tuple", (X, ("tensor", (), "int32")))


@pytest.fixture
def vm():
    """main(x, pair) = (pair.1, x); first(pair) = pair.0"""
    main = VMFunction("main", ("x", "pair"), (I.GetField(1, 1, 2), I.AllocADT(0, (2, 0), 3), I.Ret(3)), 4, (X, PAIR))
    first = VMFunction("first", ("pair",), (I.GetField(0, 0, 1), I.Ret(1)), 2, (PAIR,))
    return VirtualMachine(Executable([main, first], [], []), kiln.cpu(0))


def test_invoke_run_and_keyword_arguments(vm):
    x = np.arange(6, dtype="float32").reshape(2, 3)
    n, same = vm.invoke("main", x, (x, np.array(7, "int32")))
    assert n.numpy() == 7 and isinstance(same, kiln.nd.NDArray) and same.device == kiln.cpu(0)
    np.testing.assert_array_equal(same.numpy(), x)
    n, _ = vm.run(pair=ADT(0, [x, 3]), x=x)  # an ADT, and a Python int taking the parameter's dtype
    assert n.numpy() == 3 and n.dtype == "int32"
    np.testing.assert_array_equal(vm.invoke("first", [x, 1]).numpy(), x)
    assert vm.get_input_index("pair") == 1 and vm.get_input_index("nothing") == -1


def test_tuple_results_are_adts(vm):
    """A tuple result is TVM's ADT of tag 0, which is also a Python tuple of its fields."""
    x = np.ones((2, 3), "float32")
    out = vm.run(x, (x, np.array(4, "int32")))
    assert isinstance(out, ADT) and isinstance(out, tuple) and out.tag == 0 and len(out) == 2
    assert out[0].numpy() == 4 and out.fields == tuple(out)


def test_set_input_invoke_stateful_and_outputs(vm):
    x = np.ones((2, 3), "float32")
    vm.set_input("main", x, pair=(x, 5))
    vm.invoke_stateful("main")
    outputs = vm.get_outputs()
    assert len(outputs) == vm.get_num_outputs() == 2 and outputs[0].numpy() == 5
    np.testing.assert_array_equal(vm.get_output(1).numpy(), x)
    assert vm["invoke"]("main")[0].numpy() == 5  # the VM is a module of PackedFuncs
    assert set(vm.list_functions()) >= {"invoke", "set_input", "invoke_stateful", "get_outputs", "get_bytecode"}
    result = vm.benchmark(kiln.cpu(0), func_name="main", repeat=2, number=2)
    assert isinstance(result, ProfileResult) and len(result.results) == 2 and result.mean > 0
    with pytest.raises(KilnError, match="index 2 is out of range"):
        vm.get_output(2)


def test_arguments_are_checked_against_the_parameter_types(vm):
    x = np.ones((2, 3), "float32")
    with pytest.raises(RuntimeArgumentError, match=r"main takes 2 arguments \(x, pair\), got 3"):
        vm.run(x, (x, 1), x)
    with pytest.raises(RuntimeArgumentError, match="main: missing arguments for parameters pair"):
        vm.run(x)
    with pytest.raises(RuntimeArgumentError, match="main has no parameter named 'y'"):
        vm.run(x, y=1)
    with pytest.raises(RuntimeArgumentError, match="parameter 'x' is given twice"):
        vm.run(x, (x, 1), x=x)
    with pytest.raises(RuntimeArgumentError, match=r"argument 0 \(%x\): expects dtype float32, got float64"):
        vm.run(x.astype("float64"), (x, 1))
    with pytest.raises(RuntimeArgumentError, match=r"argument 0 \(%x\): expects shape Tensor\[\(2, 3\), float32\]"):
        vm.run(np.ones((3, 2), "float32"), (x, 1))
    with pytest.raises(RuntimeArgumentError, match=r"argument 1 \(%pair\)\[1\]: the Python value 1.5 does not fit"):
        vm.run(x, (x, 1.5))
    for bad in ([[1], [2, 3]], 2**70):  # a ragged list, an int out of int32's range
        with pytest.raises(RuntimeArgumentError, match=r"argument 1 \(%pair\)\[1\]: the Python value .* does not fit"):
            vm.run(x, (x, bad))
    with pytest.raises(RuntimeArgumentError, match=r"argument 1 \(%pair\): expects a tuple of type"):
        vm.run(x, x)
    with pytest.raises(RuntimeArgumentError, match="expects a tensor"):
        vm.run("x", (x, 1))
    with pytest.raises(KilnError, match="no function 'mian'; functions: main, first"):
        vm.invoke("mian", x)
    with pytest.raises(KilnError, match="inputs of 'first' were never set"):
        vm.invoke("first")


def test_unaligned_and_strided_inputs_are_copied(vm):
    base = np.zeros(7, "float32")[1:]  # 4 bytes past an aligned address
    strided = np.arange(12, dtype="float32").reshape(2, 6)[:, ::2]
    _, same = vm.run(base.reshape(2, 3), (strided, 0))
    assert same.handle.ctypes.data % 64 == 0 and same.handle.flags.c_contiguous
    np.testing.assert_array_equal(vm.invoke("first", (strided, 0)).numpy(), strided)


def test_devices_and_executables_are_checked():
    exe = Executable([VMFunction("main", (), (I.LoadConsti(1, 0), I.Ret(0)), 1, ())], [], [])
    assert VirtualMachine(exe, [kiln.cpu(0)], memory_cfg="pooled").run().numpy() == 1
    with pytest.raises(KilnError, match="runs on the CPU only"):
        VirtualMachine(exe, kiln.device("ext_dev"))
    with pytest.raises(KilnError, match="takes an Executable"):
        VirtualMachine("exe.so", kiln.cpu(0))
    with pytest.raises(KilnError, match="unknown memory_cfg"):
        VirtualMachine(exe, kiln.cpu(0), memory_cfg="arena")


def test_set_one_input_and_outputs_given_in_advance(vm):
    x = np.arange(6, dtype="float32").reshape(2, 3)
    vm.set_one_input("main", "x", x)
    with pytest.raises(KilnError, match="the inputs pair of 'main' were never set"):
        vm.invoke("main")
    vm.set_one_input("main", 1, (x, 4))
    n, same = vm.invoke("main")
    assert n.numpy() == 4
    vm.set_one_input("main", pair=(x, 6))  # TVM's keyword form
    assert vm.invoke("main")[0].numpy() == 6
    with pytest.raises(RuntimeArgumentError, match="give one argument"):
        vm.set_one_input("main", x=x, pair=(x, 1))
    outs = [kiln.nd.empty((), "int32"), kiln.nd.empty((2, 3), "float32")]
    vm.invoke_with_outputs("main", {"x": x * 2, "pair": (x, 9)}, outs)
    assert outs[0].numpy() == 9
    np.testing.assert_array_equal(outs[1].numpy(), x * 2)
    with pytest.raises(RuntimeArgumentError, match="main has no parameter named 'z'"):
        vm.set_one_input("main", "z", x)
    with pytest.raises(RuntimeArgumentError, match="returns 2 tensors, 1 outputs were given"):
        vm.invoke_with_outputs("main", {}, outs[:1])
    with pytest.raises(RuntimeArgumentError, match="output 1 of main is float32"):
        vm.invoke_with_outputs("main", {}, [outs[0], kiln.nd.empty((3,), "float32")])


def test_vm_module_protocol_of_the_executable(vm):
    # what a VirtualMachine over a module (an RPC server's executable) calls
    exe = vm.exe
    assert exe["get_function_params"]("main") == ["x", "pair"]
    fresh = exe["vm_load_executable"]()
    fresh["init"](kiln.cpu(0), None)
    x = np.ones((2, 3), "float32")
    fresh["set_input"]("main", x, (x, 2))
    assert fresh["invoke"]("main")[0].numpy() == 2
