"""``relay.Any`` (SPEC §9): dimensions known only at run time, through types, relations, lowering and the VM."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError, TypeInferenceError
from kiln.ir import Op
from kiln.ir.type import Any, TensorType, TupleType
from kiln.relay.op.tensor import reshape_shape
from kiln.runtime.vm import Executable, VirtualMachine

from .op import test_every_op_every_dtype as every_op

# operators whose relations still refuse a dynamic leading dimension of their first argument, each with a clear
# TypeInferenceError (the list may only shrink)
REFUSE_DYNAMIC_BATCH: set = set()


def test_any_prints_as_question_mark_and_parses_back():
    x = relay.var("x", shape=(relay.Any(), 3))
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([x], relay.nn.relu(x))))
    text = str(mod)
    assert "%x: Tensor[(?, 3), float32]) -> Tensor[(?, 3), float32]" in text
    assert kiln.ir.structural_equal(relay.parse(text), mod)


def test_any_dimensions_equal_each_other_only():
    dynamic, static = TensorType((Any(), 3)), TensorType((2, 3))
    assert dynamic == TensorType((relay.Any(), 3)) and dynamic != static
    assert kiln.ir.structural_hash(dynamic) == kiln.ir.structural_hash(TensorType((Any(), 3)))
    assert not kiln.ir.structural_equal(dynamic, static)
    assert dynamic.is_dynamic and not static.is_dynamic
    assert dynamic.admits((7, 3)) and not dynamic.admits((7, 4)) and not dynamic.admits((3,))
    with pytest.raises(TypeInferenceError, match="dynamic dimension"):
        int(Any())
    with pytest.raises(TypeInferenceError, match="known only at run time"):
        _ = dynamic.size


@pytest.mark.parametrize("in_shape, newshape, expected", [
    ((Any(), 3, 2), (0, -1), (Any(), 6)),
    ((Any(), 3, 2), (-1, 6), (Any(), 6)),
    ((Any(), 3, 2), (3, -1), (3, Any())),
    ((Any(), 3, 2), (-3, -1), (Any(), Any())),
    ((Any(), 6), (0, -4, 2, -1), (Any(), 2, 3)),
])
def test_reshape_with_dynamic_dimensions(in_shape, newshape, expected):
    assert reshape_shape(in_shape, newshape) == expected


def test_broadcast_takes_the_static_size():
    x, y = relay.var("x", shape=(Any(), 1, 4)), relay.var("y", shape=(3, 1))
    assert relay.infer_type(relay.Function([x, y], x + y)).ret_type == TensorType((Any(), 3, 4))


def _result_type(name, dynamic):
    """The result type of ``name``'s sample call, with the first argument's leading dimension dynamic or not."""
    sample = every_op.SAMPLES[name]
    groups = every_op._groups(Op.get(name).get_attr("dtypes"))
    dtypes = {g: every_op._default(g) for g in groups}
    out_dtype = every_op._default(sample.out_dtypes) if sample.out_dtypes else None

    def v(index, shape, role=None):
        shape = tuple(shape)
        if dynamic and index == 0 and len(shape) >= 2:
            shape = (Any(), *shape[1:])
        return relay.var(f"a{index}", shape=shape, dtype=dtypes[groups[min(index, len(groups) - 1)]])

    body = sample.build(v, out_dtype)
    return relay.infer_type(relay.Function(relay.analysis.free_vars(body), body)).ret_type


def _tensors(ttype):
    return [t for f in ttype.fields for t in _tensors(f)] if isinstance(ttype, TupleType) else [ttype]


def test_every_relation_accepts_a_dynamic_batch():
    """Each operator's relation types its sample call with a dynamic leading dimension: the result has the static
    result's rank, and every dimension it keeps static is the static one."""
    refused = set()
    for name in every_op.operators():
        try:
            static = _result_type(name, False)
        except TypeInferenceError:
            continue  # the sample needs dtypes this test does not pick (e.g. float boxes, int indices)
        try:
            dynamic = _result_type(name, True)
        except TypeInferenceError:
            refused.add(name)
            continue
        for s, d in zip(_tensors(static), _tensors(dynamic), strict=True):
            assert s.ndim == d.ndim and all(type(y) is Any or x == y for x, y in zip(s.shape, d.shape, strict=True)), (name, s, d)
    assert refused == REFUSE_DYNAMIC_BATCH


def _mlp():
    x = relay.var("x", shape=(relay.Any(), 8))
    w, b = relay.var("w", shape=(16, 8)), relay.var("b", shape=(16,))
    y = relay.nn.softmax(relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), b)))
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((16, 8)).astype("float32"), "b": rng.standard_normal(16).astype("float32")}
    return kiln.IRModule.from_expr(relay.Function([x, w, b], y)), params


def _small_cnn():
    x = relay.var("x", shape=(relay.Any(), 3, 16, 16))
    w1, w2 = relay.var("w1", shape=(8, 3, 3, 3)), relay.var("w2", shape=(10, 8 * 8 * 8))
    y = relay.nn.max_pool2d(relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1))), (2, 2), (2, 2))
    y = relay.nn.dense(relay.nn.batch_flatten(y), w2)
    rng = np.random.default_rng(1)
    params = {"w1": rng.standard_normal((8, 3, 3, 3)).astype("float32"),
              "w2": rng.standard_normal((10, 512)).astype("float32")}
    return kiln.IRModule.from_expr(relay.Function([x, w1, w2], y)), params


def test_mlp_with_a_dynamic_batch_compiles_once_and_runs_at_every_batch():
    mod, params = _mlp()
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm", params=params), kiln.cpu(0))
    reference = relay.create_executor("debug", mod=mod).evaluate()
    rng = np.random.default_rng(2)
    for batch in (1, 3, 8):
        x = rng.standard_normal((batch, 8)).astype("float32")
        z = np.maximum(x @ params["w"].T + params["b"], 0)
        e = np.exp(z - z.max(1, keepdims=True))
        got = vm.invoke("main", x).numpy()
        np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, reference(x, params["w"], params["b"]).numpy(), rtol=1e-5, atol=1e-6)


def test_small_cnn_with_a_dynamic_batch_matches_the_interpreter():
    mod, params = _small_cnn()
    exe = relay.vm.compile(mod, target="llvm", params=params)
    code, lib = exe.save()
    vm = VirtualMachine(Executable.load_exec(code, lib), kiln.cpu(0))  # the dynamic types survive a round trip
    reference = relay.create_executor("debug", mod=mod).evaluate()
    rng = np.random.default_rng(3)
    for batch in (1, 3, 8):
        x = rng.standard_normal((batch, 3, 16, 16)).astype("float32")
        got = vm.invoke("main", x).numpy()
        assert got.shape == (batch, 10)
        np.testing.assert_allclose(got, reference(x, params["w1"], params["w2"]).numpy(), rtol=1e-4, atol=1e-4)


def test_vm_refuses_an_argument_of_the_wrong_static_size():
    mod, params = _mlp()
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm", params=params), kiln.cpu(0))
    with pytest.raises(KilnError, match="x"):
        vm.invoke("main", np.zeros((2, 9), "float32"))


def test_graph_executor_build_of_a_dynamic_module_points_to_the_vm():
    mod, params = _mlp()
    with pytest.raises(KilnError, match=r"dynamic type Tensor\[\(\?, 8\), float32\].*relay.vm.compile"):
        relay.build(mod, target="llvm", params=params)


def test_a_broadcast_the_run_time_sizes_do_not_allow_is_refused_by_the_shape_function():
    x, y = relay.var("x", shape=(relay.Any(), 3)), relay.var("y", shape=(relay.Any(), 3))
    vm = VirtualMachine(relay.vm.compile(kiln.IRModule.from_expr(relay.Function([x, y], x + y)), "llvm"), kiln.cpu(0))
    a, b = np.ones((4, 3), "float32"), np.full((1, 3), 2, "float32")
    np.testing.assert_array_equal(vm.invoke("main", a, b).numpy(), np.full((4, 3), 3))
    np.testing.assert_array_equal(vm.invoke("main", b, a).numpy(), np.full((4, 3), 3))
    with pytest.raises(KilnError, match=r"fused_add_shape_func: Invalid broadcast shapes.*does not broadcast"):
        vm.invoke("main", np.ones((2, 3), "float32"), a)


def test_the_interpreter_refuses_operands_that_do_not_broadcast_in_tvms_words():
    cond = relay.var("c", shape=(relay.Any(), relay.Any()), dtype="bool")
    x, y = relay.var("x", shape=(relay.Any(), relay.Any())), relay.var("y", shape=(relay.Any(), relay.Any()))
    run = relay.create_executor("debug", kiln.IRModule.from_expr(relay.Function([cond, x, y], relay.where(cond, x, y))))
    c, a, b = np.ones((3, 4), bool), np.ones((3, 1), "float32"), np.zeros((1, 4), "float32")
    np.testing.assert_array_equal(run.evaluate()(c, a, b).numpy(), np.ones((3, 4)))
    with pytest.raises(KilnError, match=r"where: Invalid broadcast shapes \(3, 4\), \(3, 1\), \(2, 4\)"):
        run.evaluate()(c, a, np.zeros((2, 4), "float32"))


@pytest.mark.parametrize("target, lanes", [("llvm -mcpu=haswell", 8), ("llvm -mcpu=skylake-avx512", 16)])
def test_a_dynamic_batch_keeps_the_static_axes_vectorized(target, lanes):
    """The dense kernel over a dynamic batch is the packed GEMM (row blocks outside the column panels, so the
    column guards fold away and whole vectors remain); the convolution keeps its blocked layout."""
    from kiln.relay.backend.vm.compiler import lower_for_vm
    from kiln.tir.function import PrimFunc

    x = relay.var("x", shape=(relay.Any(), 3, 8, 8))
    w, d = relay.var("w", shape=(32, 3, 3, 3)), relay.var("d", shape=(64, 32 * 8 * 8))
    y = relay.nn.dense(relay.nn.batch_flatten(relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))), d)
    rng = np.random.default_rng(4)
    params = {"w": rng.standard_normal((32, 3, 3, 3)).astype("float32"),
              "d": rng.standard_normal((64, 2048)).astype("float32")}
    with kiln.transform.PassContext(opt_level=3), kiln.target.Target(target):
        lowered = lower_for_vm(kiln.IRModule.from_expr(relay.Function([x, w, d], y)), kiln.target.Target(target), params)
    kernels = {gv.name_hint: str(f) for gv, f in lowered.functions.items()
               if isinstance(f, PrimFunc) and not gv.name_hint.endswith("_shape_func")}
    (dense,) = [text for name, text in kernels.items() if "dense_pack" in name]
    assert f"T.Broadcast(T.float32(0.0), {2 * lanes})" in dense and "< 64" not in dense
    (conv,) = [text for name, text in kernels.items() if "conv2d" in name]
    # a buffer with a symbolic size prints as TVM prints it: a handle parameter and a match_buffer
    assert "T.Broadcast" in conv and f"T.match_buffer(T_relu, (p0_dim0, {32 // lanes}, 8, 8, {lanes}), \"float32\")" in conv


def test_batch_matmul_over_dynamic_batches_broadcasts_and_checks_at_run_time():
    x, y = relay.var("x", shape=(relay.Any(), 4, 8)), relay.var("y", shape=(relay.Any(), 6, 8))
    mod = kiln.IRModule.from_expr(relay.Function([x, y], relay.nn.batch_matmul(x, y)))
    vm = VirtualMachine(relay.vm.compile(mod, "llvm"), kiln.cpu(0))
    rng = np.random.default_rng(5)
    for bx, by in ((3, 3), (1, 3), (3, 1)):
        a, b = rng.standard_normal((bx, 4, 8)).astype("float32"), rng.standard_normal((by, 6, 8)).astype("float32")
        np.testing.assert_allclose(vm.invoke("main", a, b).numpy(), a @ b.transpose(0, 2, 1), rtol=1e-5, atol=1e-5)
    with pytest.raises(KilnError, match="does not broadcast"):
        vm.invoke("main", np.zeros((2, 4, 8), "float32"), np.zeros((3, 6, 8), "float32"))


def test_a_static_value_fits_where_a_dynamic_type_is_declared():
    """A function whose parameter is ``Tensor[(?, 1)]`` takes a ``Tensor[(2, 1)]``; branches of different sizes
    join into a dynamic type; a declared dynamic result stays dynamic."""
    x = relay.var("x", shape=(relay.Any(), 1), dtype="int32")
    f = relay.Function([x], x + relay.const(1, "int32"), ret_type=relay.TensorType((relay.Any(), 1), "int32"))
    y = relay.var("y", shape=(2, 1), dtype="int32")
    c = relay.var("c", shape=(), dtype="bool")
    z = relay.var("z", shape=(3, 1), dtype="int32")
    body = relay.If(c, relay.Call(f, [y]), z)
    typed = relay.infer_type(relay.Function([y, z, c], body))
    assert typed.ret_type == TensorType((Any(), 1), "int32")
    with pytest.raises(TypeInferenceError, match="argument 0 expected"):
        relay.infer_type(relay.Function([y], relay.Call(f, [relay.cast(y, "float32")])))
