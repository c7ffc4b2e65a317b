"""relay.vm.compile (kiln/relay/backend/vm/) end to end: programs compiled for llvm and c, run by the VM, against
numpy and the reference interpreter; control flow, recursion, closures, tuples; save/load and export round trips."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import CodegenError, KilnError
from kiln.ir import FuncType, IRModule, TensorType
from kiln.runtime.vm import Executable, VirtualMachine, VMClosure
from kiln.runtime.vm import instruction as I

RNG = np.random.default_rng(5)
I32 = TensorType((), "int32")


def _flat(value):
    if isinstance(value, tuple):
        return [a for v in value for a in _flat(v)]
    return [value.numpy()]


def run_vm(mod, *args, target="llvm", params=None, opt_level=3, rtol=1e-5, atol=1e-6):
    """Compile ``mod``, run ``@main`` on ``args`` and compare with the reference interpreter; returns (result, exe)."""
    if isinstance(mod, relay.Function):
        mod = IRModule.from_expr(mod)
    with kiln.transform.PassContext(opt_level=opt_level):
        exe = relay.vm.compile(mod, target=target, params=params)
    got = VirtualMachine(exe, kiln.cpu(0)).run(*args)
    want = relay.create_executor("debug", mod, params=params).evaluate()(*args)
    flat_got, flat_want = _flat(got), _flat(want)
    assert len(flat_got) == len(flat_want)
    for g, w in zip(flat_got, flat_want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return got, exe


def _uniform(*shape):
    return RNG.uniform(-1, 1, shape).astype("float32")


def mlp():
    x = relay.var("x", shape=(2, 16))
    w1, b1, w2 = relay.var("w1", shape=(32, 16)), relay.var("b1", shape=(32,)), relay.var("w2", shape=(4, 32))
    hidden = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w1), b1))
    func = relay.Function([x, w1, b1, w2], relay.nn.softmax(relay.nn.dense(hidden, w2)))
    params = {"w1": _uniform(32, 16), "b1": _uniform(32), "w2": _uniform(4, 32)}
    return func, params


def small_cnn():
    data = relay.var("data", shape=(1, 3, 12, 12))
    y = relay.nn.relu(relay.nn.conv2d(data, relay.var("c1", shape=(8, 3, 3, 3)), padding=(1, 1)))
    y = relay.nn.max_pool2d(y, (2, 2), (2, 2))
    y = relay.nn.relu(relay.nn.conv2d(y, relay.var("c2", shape=(8, 8, 3, 3)), padding=(1, 1)))
    y = relay.nn.global_avg_pool2d(y)
    y = relay.nn.dense(relay.nn.batch_flatten(y), relay.var("fc", shape=(10, 8)))
    func = relay.Function(relay.analysis.free_vars(y), relay.nn.log_softmax(y))
    params = {p.name_hint: _uniform(*p.type_annotation.shape) for p in func.params if p.name_hint != "data"}
    return func, params


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_mlp_and_small_cnn(target):
    func, params = mlp()
    x = _uniform(2, 16)
    out, exe = run_vm(func, x, target=target, params=params)
    hidden = np.maximum(x @ params["w1"].T + params["b1"], 0) @ params["w2"].T
    want = np.exp(hidden) / np.exp(hidden).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    main = exe.function("main")
    kinds = {type(i).__name__ for i in main.instructions}
    assert kinds <= {"LoadConst", "LoadConsti", "AllocStorage", "AllocTensor", "InvokePacked", "Ret"}
    assert sum(type(i) is I.AllocStorage for i in main.instructions) == 2  # the planned region and the result
    func, params = small_cnn()
    run_vm(func, _uniform(1, 3, 12, 12), target=target, params=params, rtol=1e-4, atol=1e-5)


def _counting_loop():
    """@loop(i, n, acc) = if i < n { @loop(i + 1, n, acc + acc * 0.5 + i) } else { acc }, a counted loop."""
    mod = IRModule()
    loop = relay.GlobalVar("loop")
    i, n, acc = relay.var("i", I32), relay.var("n", I32), relay.var("acc", shape=(3,))
    step = acc * relay.const(0.5) + relay.cast(i, "float32")
    body = relay.If(relay.less(i, n), relay.Call(loop, [i + relay.const(1), n, step]), acc)
    mod[loop] = relay.Function([i, n, acc], body, ret_type=TensorType((3,)))
    x, count = relay.var("x", shape=(3,)), relay.var("count", I32)
    mod["main"] = relay.Function([x, count], relay.Call(loop, [relay.const(0), count, x]))
    return mod


def test_counted_loop_written_as_recursion():
    mod = _counting_loop()
    x = _uniform(3)
    for count in (0, 1, 7):
        out, exe = run_vm(mod, x, np.array(count, "int32"))
        want = x.copy()
        for k in range(count):
            want = want * np.float32(0.5) + np.float32(k)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
    code = exe.function("loop").instructions
    calls = [pc for pc, instr in enumerate(code) if type(instr) is I.InvokeFunc]
    assert calls and all(type(code[pc + 1]) is I.Ret and code[pc + 1].result == code[pc].dst for pc in calls)
    vm = VirtualMachine(exe, kiln.cpu(0))
    vm.max_call_depth = 2  # a tail call needs no frame: ten thousand iterations in constant stack and memory
    vm.run(x, np.array(10_000, "int32"))
    assert vm.pool.allocated_bytes < 1024


def test_recursion_that_is_not_a_tail_call():
    mod = IRModule()
    fact = relay.GlobalVar("fact")
    n = relay.var("n", I32)
    body = relay.If(relay.cast(n, "bool"), n * relay.Call(fact, [n - relay.const(1)]), relay.const(1))
    mod[fact] = relay.Function([n], body, ret_type=I32)
    m = relay.var("m", I32)
    mod["main"] = relay.Function([m], relay.Call(fact, [m]))
    out, _ = run_vm(mod, np.array(10, "int32"), target="c")
    assert out.numpy() == 3628800


def test_if_on_an_input_with_work_shared_by_the_branches():
    c, x = relay.var("c", shape=(), dtype="bool"), relay.var("x", shape=(2, 3))
    shared = relay.exp(x)
    func = relay.Function([c, x], relay.If(c, shared * relay.const(2.0), relay.negative(shared)) + shared)
    x0 = _uniform(2, 3)
    for flag in (True, False):
        out, exe = run_vm(func, np.array(flag), x0)
        np.testing.assert_allclose(out.numpy(), np.exp(x0) * (3 if flag else 0), rtol=1e-6, atol=1e-6)
    assert any(type(i) is I.If for i in exe.function("main").instructions)
    cond = relay.var("cond", shape=(), dtype="bool")
    computed = relay.Function([cond, x], relay.If(relay.logical_not(cond), relay.sum(x), relay.max(x)))
    out, _ = run_vm(computed, np.array(False), x0, target="c")
    np.testing.assert_allclose(out.numpy(), x0.sum(), rtol=1e-6)


def test_closures_capturing_returned_and_recursive():
    x, y, f = relay.var("x", shape=(2,)), relay.var("y", shape=(2,)), relay.var("f")
    add_x = relay.Function([y], y * x + relay.const(1.0))
    twice = relay.Function([x], relay.Let(f, add_x, relay.Call(f, [relay.Call(f, [x])])))
    out, exe = run_vm(twice, np.array([1.0, 2.0], "float32"))
    np.testing.assert_allclose(out.numpy(), [3.0, 11.0])
    kinds = {type(i) for i in exe.function("main").instructions}
    assert I.AllocClosure in kinds and I.InvokeClosure in kinds
    # a function returning a closure, and the closure passed back in
    mod = IRModule()
    k = relay.var("k", shape=(2,))
    mod["make"] = relay.Function([k], relay.Function([y], y + k))
    g = relay.var("g", FuncType([TensorType((2,))], TensorType((2,))))
    z = relay.var("z", shape=(2,))
    mod["main"] = relay.Function([g, z], relay.Call(g, [relay.Call(g, [z])]))
    vm = VirtualMachine(relay.vm.compile(mod, "llvm"), kiln.cpu(0))
    adder = vm.invoke("make", np.full(2, 3.0, "float32"))
    assert isinstance(adder, VMClosure)
    np.testing.assert_allclose(vm.invoke("main", adder, np.ones(2, "float32")).numpy(), [7.0, 7.0])
    # a recursive closure bound by a let
    n, k2 = relay.var("n", I32), relay.var("k", I32)
    loop = relay.var("loop", FuncType([I32], I32))
    fbody = relay.If(relay.cast(k2, "bool"), relay.Call(loop, [k2 - relay.const(1)]) + relay.const(2), k2)
    body = relay.Let(loop, relay.Function([k2], fbody, ret_type=I32), relay.Call(loop, [n]))
    out, _ = run_vm(relay.Function([n], body), np.array(7, "int32"))
    assert out.numpy() == 14


def test_tuples_in_and_out():
    x = relay.var("x", shape=(4, 2))
    pair = relay.var("pair", relay.TupleType([TensorType((4, 2)), I32]))
    parts = relay.split(x, 2, axis=0)
    first = relay.TupleGetItem(pair, 0)
    body = relay.Tuple([relay.Tuple([parts[1], first + x]), relay.TupleGetItem(pair, 1), x])
    x0 = _uniform(4, 2)
    out, _ = run_vm(relay.Function([x, pair], body), x0, (x0, np.array(3, "int32")))
    (low, doubled), three, same = out
    np.testing.assert_array_equal(low.numpy(), x0[2:])
    np.testing.assert_allclose(doubled.numpy(), 2 * x0)
    assert three.numpy() == 3 and np.array_equal(same.numpy(), x0)
    run_vm(relay.Function([x], relay.Tuple([x, relay.const(np.ones(2, "float32"))])), x0)  # no kernel at all
    # unfused (opt_level 0), concatenate's kernel takes a tuple value: the VM passes its fields
    _, exe = run_vm(relay.Function([x], relay.concatenate([relay.exp(x), x], axis=1)), x0, opt_level=0)
    assert any(type(i) is I.GetField for i in exe.function("main").instructions)


def test_save_load_and_exported_library_round_trips(tmp_path):
    mod = _counting_loop()
    x, count = _uniform(3), np.array(4, "int32")
    exe = relay.vm.compile(mod, target="llvm")
    want = VirtualMachine(exe, kiln.cpu(0)).run(x, count).numpy()
    code, lib = exe.save()
    lib_path = str(tmp_path / "kernels.so")
    lib.export_library(lib_path)
    reloaded = Executable.load_exec(code, kiln.runtime.load_module(lib_path))
    np.testing.assert_array_equal(VirtualMachine(reloaded, kiln.cpu(0)).run(x, count).numpy(), want)
    path = str(tmp_path / "program.so")
    exe.mod.export_library(path)
    loaded = kiln.runtime.load_module(path)
    assert isinstance(loaded, Executable) and loaded.bytecode == exe.bytecode
    np.testing.assert_array_equal(VirtualMachine(loaded, kiln.cpu(0)).run(x, count).numpy(), want)
    y = relay.var("y", shape=(1,))
    other_lib = relay.vm.compile(relay.Function([y], relay.exp(y)), "llvm").lib
    with pytest.raises(KilnError, match="the executable's library has no kernel 'tvmgen_vm_mod_fused_less'"):
        VirtualMachine(Executable.load_exec(code, other_lib), kiln.cpu(0))


def test_create_executor_vm_and_compiler_api():
    func, params = mlp()
    mod = IRModule.from_expr(func)
    x = _uniform(2, 16)
    want = relay.create_executor("debug", mod, params=params).evaluate()(x)
    got = relay.create_executor("vm", mod, kiln.cpu(0), "llvm", params=params).evaluate()(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    y = relay.var("y", shape=(3,))
    other = relay.create_executor("vm", mod, kiln.cpu(0), "c").evaluate(relay.Function([y], relay.exp(y)))
    np.testing.assert_allclose(other(np.zeros(3, "float32")).numpy(), np.ones(3))
    compiler = relay.vm.VMCompiler()
    compiler.set_params(params)
    compiler.lower(mod, "llvm")
    compiler.codegen()
    np.testing.assert_allclose(VirtualMachine(compiler.get_exec(), kiln.cpu(0)).run(x).numpy(), want.numpy(),
                               rtol=1e-5, atol=1e-6)
    optimized, _ = compiler.optimize(mod, "llvm", params)
    assert "memory.alloc_storage" in str(optimized["main"]) and "vm.invoke_tvm_op" in str(optimized["main"])


def test_instruments_see_every_pass_of_the_pipeline():
    seen = []

    @kiln.ir.instrument.pass_instrument
    class Record:
        def run_before_pass(self, mod, info):
            seen.append(info.name)

    with kiln.transform.PassContext(opt_level=3, instruments=[Record()]):
        relay.vm.compile(_counting_loop(), "llvm")
    after_fusion = seen[len(seen) - 1 - seen[::-1].index("FuseOps") + 1:]
    assert after_fusion[:len(relay.vm.VM_PIPELINE)] == list(relay.vm.VM_PIPELINE)  # then the kernels' TIR passes


def test_compile_errors():
    x = relay.var("x", shape=(2,))
    with pytest.raises(KilnError, match="takes an IRModule or a relay.Function"):
        relay.vm.compile(relay.exp(x))
    mod = IRModule()
    mod["other"] = relay.Function([x], x)
    with pytest.raises(KilnError, match="no @main"):
        relay.vm.compile(mod)
    with pytest.raises(KilnError, match="cuda"):
        relay.vm.compile(relay.Function([x], x), target="cuda")
    with pytest.raises(KilnError, match="relay.vm.compile: parameter 'w' must be an NDArray"):
        relay.vm.compile(relay.Function([x], x), params={"w": [1.0]})
    from kiln.relay.backend.vm.compiler import codegen

    unlowered = relay.transform.InferType()(IRModule.from_expr(relay.Function([x], relay.exp(x))))
    with pytest.raises(CodegenError, match="operator exp in main was not lowered"):
        codegen(unlowered, None)


def _closure_call(c, x):
    y = relay.var("y", shape=(2,))
    return relay.Call(relay.Function([y], y * x), [x])


@pytest.mark.parametrize("name,body", [("if", lambda c, x: relay.If(c, x, relay.exp(x))), ("closure", _closure_call)])
def test_what_relay_build_refuses_runs_on_the_vm(name, body):
    c, x = relay.var("c", shape=(), dtype="bool"), relay.var("x", shape=(2,))
    func = relay.Function([c, x], body(c, x))
    with pytest.raises(KilnError, match=r"graph executor cannot run .* compile the module with relay.vm.compile"):
        relay.build(func, "llvm")
    run_vm(func, np.array(True), _uniform(2))
    with pytest.raises(KilnError, match=r"cannot run a call of the global function @loop in @main"):
        relay.build(_counting_loop(), "llvm")


@pytest.mark.slow
def test_resnet18_against_the_graph_executor():
    from kiln.contrib import graph_executor
    from kiln.relay.testing import resnet

    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    x = _uniform(1, 3, 32, 32)
    with kiln.transform.PassContext(opt_level=3):
        exe = relay.vm.compile(mod, "llvm", params=params)
        lib = relay.build(mod, "llvm", params=params)
    graph = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    graph.run(data=x)
    np.testing.assert_allclose(VirtualMachine(exe, kiln.cpu(0)).run(x).numpy(), graph.get_output(0).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_allocations_sized_at_run_time():
    """What relay.Any will need, from the dialect: a size computed by kernels from vm.shape_of (AllocStorage of a
    register), a tensor of a computed shape (AllocTensorReg) and a view of a computed shape (ReshapeTensor)."""
    from kiln.relay.op import memory, vm

    x = relay.var("x", shape=(2, 3))
    shape = vm.shape_of(x)
    size = relay.prod(shape) * relay.const(4, "int64")
    tensor = memory.alloc_tensor(memory.alloc_storage(size), 0, shape, assert_shape=(2, 3))
    flat = relay.reshape(shape, (1, 2))  # a kernel-computed shape for the view
    func = relay.Function([x], relay.Tuple([vm.shape_of(tensor), vm.reshape_tensor(x, relay.prod(flat, axis=0),
                                                                                     (2, 3))]))
    exe = relay.vm.compile(func, "llvm")
    kinds = {type(i) for i in exe.function("main").instructions}
    assert {I.ShapeOf, I.AllocStorage, I.AllocTensorReg, I.ReshapeTensor} <= kinds
    code = exe.function("main").instructions
    constant_sizes = {i.dst for i in code if type(i) is I.LoadConsti}
    assert any(type(i) is I.AllocStorage and i.size not in constant_sizes for i in code)  # a size a kernel computed
    x0 = _uniform(2, 3)
    tensor_shape, view = VirtualMachine(exe, kiln.cpu(0)).run(x0)
    assert tensor_shape.numpy().tolist() == [2, 3]
    np.testing.assert_array_equal(view.numpy(), x0)


def test_reshapes_are_views_listed_with_tvms_mnemonics():
    # a primitive function of reshape-like operators (contrib_reverse_reshape among them) runs as reshape_tensor;
    # the bytecode lists each instruction in kiln's form and, after '#', as TVM prints it
    x = relay.var("x", shape=(8, 16))
    body = relay.reverse_reshape(relay.reshape(x, [16, -1]), [-1, 4, 0])
    with kiln.transform.PassContext(opt_level=3):
        exe = relay.vm.compile(kiln.IRModule.from_expr(relay.Function([x], body)), "llvm")
    assert exe.bytecode.count("reshape_tensor") == 1 and "# ret $" in exe.bytecode
    data = np.arange(128, dtype="float32").reshape(8, 16)
    out = kiln.runtime.vm.VirtualMachine(exe, kiln.cpu(0)).invoke("main", data)
    np.testing.assert_array_equal(out.numpy(), data.reshape(4, 4, 8))
    n = kiln.tir.Any()
    y = relay.var("y", shape=(n, 16))
    chain = relay.reshape(relay.reshape(y, [-1, 4]), [0, 2, -1])  # dynamic: not folded into one reshape
    with kiln.transform.PassContext(opt_level=3):
        exe = relay.vm.compile(kiln.IRModule.from_expr(relay.Function([y], chain)), "llvm")
    out = kiln.runtime.vm.VirtualMachine(exe, kiln.cpu(0)).invoke("main", np.ones((3, 16), "float32"))
    assert out.shape == (12, 2, 2)


def test_dyn_reshape_is_a_view_of_the_shape_its_shape_function_computes():
    """As in TVM, a ``dyn.reshape`` to a shape read at run time runs as ``reshape_tensor`` (no kernel copies the
    data): its shape function computes the shape (0 and -1 resolved) and the view takes it; a bad shape is refused."""
    x, s = relay.var("x", shape=(8, 16)), relay.var("s", shape=(3,), dtype="int32")
    func = relay.Function([x, s], relay.reshape(relay.reshape(x, [-1, 4, 8]), s))
    with kiln.transform.PassContext(opt_level=3):
        exe = relay.vm.compile(kiln.IRModule.from_expr(func), "llvm")
    assert exe.bytecode.count("reshape_tensor") == 2
    vm = kiln.runtime.vm.VirtualMachine(exe, kiln.cpu(0))
    data = np.random.default_rng(0).standard_normal((8, 16)).astype("float32")
    for shape, want in (([8, 2, 8], (8, 2, 8)), ([0, -1, 2], (4, 16, 2))):
        out = vm.invoke("main", data, np.array(shape, "int32"))
        np.testing.assert_array_equal(out.numpy(), data.reshape(want))
    with pytest.raises(kiln.error.KilnError, match="dyn.reshape"):
        vm.invoke("main", data, np.array([3, 3, 3], "int32"))
