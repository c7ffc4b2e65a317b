"""relay.build (kiln/relay/build.py) end to end: models compiled for llvm and c and run by the graph executor agree
with the reference interpreter on random inputs; the factory module's API; create_executor("graph")."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.error import KilnError
from kiln.relay.testing import resnet, transformer

RNG = np.random.default_rng(7)


def _random(ttype):
    shape, dtype = ttype.shape, ttype.dtype
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    if dtype.startswith(("int", "uint")):
        return RNG.integers(0, 4, shape).astype(dtype)
    return RNG.uniform(-1, 1, shape).astype(dtype)


def _flat(value):
    if isinstance(value, tuple | list):
        return [a for v in value for a in _flat(v)]
    return [value.numpy()]


def check_build(func, params=None, target="llvm", opt_level=3, rtol=1e-5, atol=1e-5, inputs=None):
    """Build ``func`` and compare every output of the graph executor with the interpreter; returns the factory."""
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(func))
    bound = set(params or {})
    free = [p for p in mod["main"].params if p.name_hint not in bound]
    inputs = inputs or {p.name_hint: _random(p.checked_type) for p in free}
    with kiln.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, target=target, params=params)
    m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    m.set_input(**inputs)
    m.run()
    want = _flat(relay.create_executor("debug", mod=mod, params=params).evaluate()(**inputs))
    assert m.get_num_outputs() == len(want)
    for i, w in enumerate(want):
        got = m.get_output(i).numpy()
        assert got.dtype == w.dtype and got.shape == w.shape
        np.testing.assert_allclose(got, w, rtol=rtol, atol=atol)
    return lib


def _tuple_of(*exprs):
    body = relay.Tuple(list(exprs))
    return relay.Function(relay.analysis.free_vars(body), body)


def v(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_elementwise_and_broadcast(target):
    x, y, z = v("x", (2, 3, 4)), v("y", (3, 1)), v("z", (2, 3, 4))
    pos = relay.abs(x) + relay.const(0.5)
    f = _tuple_of(relay.exp(x), relay.log(pos), relay.sqrt(pos), relay.tanh(x), relay.sigmoid(x), relay.nn.relu(x),
                  relay.negative(x), relay.floor(x), relay.ceil(x), relay.erf(x), relay.rsqrt(pos),
                  relay.add(x, y), relay.subtract(y, x), relay.multiply(x, z), relay.divide(x, pos),
                  relay.power(pos, y), relay.maximum(x, z), relay.minimum(x, y), relay.clip(x, -0.2, 0.3),
                  relay.nn.leaky_relu(x, 0.1), relay.where(relay.greater(x, z), x, z), relay.less_equal(x, y),
                  relay.equal(relay.floor(x), relay.floor(z)), relay.logical_not(relay.greater(x, y)))
    check_build(f, target=target, rtol=2e-5, atol=2e-5)


def test_integer_ops_and_casts():
    a, b = v("a", (4, 5), "int32"), v("b", (5,), "int32")
    f = _tuple_of(relay.add(a, b), relay.multiply(a, b), relay.floor_mod(a, b + relay.const(1)),
                  relay.floor_divide(a, b + relay.const(1)), relay.cast(a, "float32"),
                  relay.cast(relay.cast(a, "float32") * relay.const(0.5), "int64"), relay.bitwise_and(a, b),
                  relay.maximum(a, b))
    check_build(f)


def test_reductions():
    x = v("x", (3, 4, 5))
    f = _tuple_of(relay.sum(x, axis=1), relay.mean(x, axis=(0, 2), keepdims=True), relay.max(x), relay.min(x, axis=2),
                  relay.prod(x, axis=0), relay.argmax(x, axis=1), relay.argmin(x, axis=2), relay.sum(relay.exp(x)))
    check_build(f, rtol=1e-5, atol=1e-5)


def test_shape_transforms():
    x, y = v("x", (2, 3, 4)), v("y", (2, 5, 4))
    i = v("i", (3,), "int32")
    parts = relay.split(x, 3, axis=1)
    f = _tuple_of(relay.reshape(x, (6, 4)), relay.transpose(x, (2, 0, 1)), relay.concatenate([x, y], axis=1),
                  parts[0], parts[2], relay.strided_slice(y, (0, 1, 0), (2, 5, 4), (1, 2, 1)),
                  relay.expand_dims(x, 1), relay.squeeze(relay.expand_dims(x, 0), axis=[0]),
                  relay.take(x, i, axis=1), relay.tile(x, (1, 2, 1)), relay.repeat(x, 2, axis=2),
                  relay.reverse(x, axis=1), relay.nn.batch_flatten(x), relay.broadcast_to(v("s", (1, 4)), (3, 4)),
                  relay.cast(relay.shape_of(x), "float32"))
    check_build(f, inputs={"x": _random(kiln.ir.TensorType((2, 3, 4), "float32")),
                           "y": _random(kiln.ir.TensorType((2, 5, 4), "float32")),
                           "i": np.array([2, 0, 1], "int32"), "s": _random(kiln.ir.TensorType((1, 4), "float32"))})


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_nn_ops(target):
    x, w = v("x", (1, 4, 9, 9)), v("w", (6, 4, 3, 3))
    dw = v("dw", (4, 1, 3, 3))
    d, dwt = v("d", (3, 16)), v("dwt", (8, 16))
    a, b = v("a", (2, 3, 4)), v("b", (2, 5, 4))
    g, beta = v("g", (4,)), v("beta", (4,))
    f = _tuple_of(relay.nn.conv2d(x, w, padding=(1, 1), strides=(2, 2)),
                  relay.nn.conv2d(x, dw, padding=(1, 1), groups=4),
                  relay.nn.max_pool2d(x, (3, 3), (2, 2), padding=(1, 1)),
                  relay.nn.avg_pool2d(x, (2, 2), (2, 2)), relay.nn.global_avg_pool2d(x),
                  relay.nn.dense(d, dwt), relay.nn.batch_matmul(a, b), relay.nn.softmax(d),
                  relay.nn.log_softmax(d, axis=0), relay.nn.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1))),
                  relay.nn.layer_norm(a, v("lg", (4,)), v("lb", (4,))),
                  relay.nn.batch_norm(x, g, beta, v("mu", (4,)), relay.abs(v("var", (4,))) + relay.const(0.5))[0],
                  relay.nn.bias_add(x, g))
    check_build(f, target=target, rtol=1e-4, atol=1e-4)


def test_algorithm_and_image_ops():
    x = v("x", (2, 6))
    img = v("img", (1, 2, 4, 4))
    f = _tuple_of(relay.cumsum(x, axis=1), relay.topk(x, k=2, axis=1, ret_type="values"),
                  relay.image.resize2d(img, (8, 6), method="linear"),
                  relay.image.resize2d(img, (2, 3), method="nearest_neighbor"))
    check_build(f)


def test_fused_chain_and_shared_kernels():
    x, w = v("x", (4, 8)), v("w", (8, 8))
    y = x
    for _ in range(6):  # the same element-wise group six times: one kernel, called six times
        y = relay.nn.relu(relay.add(relay.multiply(relay.nn.dense(y, w), relay.const(0.5)),
                                    relay.const(0.1)))
    func = relay.Function(relay.analysis.free_vars(y), y)
    lib = check_build(func, params={"w": RNG.uniform(-1, 1, (8, 8)).astype("float32")})
    graph = __import__("json").loads(lib.get_graph_json())
    kernels = [n["attrs"]["func_name"] for n in graph["nodes"] if n["op"] == "tvm_op"]
    assert len(kernels) == 6 and len(set(kernels)) == 1
    assert kernels[0] == "tvmgen_default_fused_nn_dense_add_nn_relu"  # FoldScaleAxis moved the scale into w
    assert lib.get_lib().list_functions() == [kernels[0]]


def test_small_cnn_conv_bias_relu_pool_dense_softmax():
    data = v("data", (1, 3, 16, 16))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(data, v("c1_w", (8, 3, 3, 3)), padding=(1, 1)),
                                        v("c1_b", (8,))))
    y = relay.nn.max_pool2d(y, (2, 2), (2, 2))
    y = relay.nn.relu(relay.nn.conv2d(y, v("c2_w", (16, 8, 3, 3)), padding=(1, 1)))
    y = relay.nn.avg_pool2d(y, (2, 2), (2, 2))
    y = relay.nn.bias_add(relay.nn.dense(relay.nn.batch_flatten(y), v("fc_w", (10, 256))), v("fc_b", (10,)))
    func = relay.Function(relay.analysis.free_vars(y), relay.nn.softmax(y))
    params = {p.name_hint: RNG.uniform(-0.5, 0.5, p.type_annotation.shape).astype("float32")
              for p in func.params if p.name_hint != "data"}
    for target in ("llvm", "c"):
        lib = check_build(func, params=params, target=target, rtol=1e-4, atol=1e-5)
    assert sorted(lib.get_params()) == [f"p{i}" for i in range(len(lib.get_params()))]


def test_resnet8_cifar_image():
    mod, params = resnet.get_workload(num_layers=8, image_shape=(3, 16, 16), num_classes=10)
    check_build(mod["main"], params=params, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
def test_resnet18_small_image():
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    check_build(mod["main"], params=params, rtol=1e-4, atol=1e-5)


def test_transformer_block():
    mod, params = transformer.get_workload(batch=1, seq=8, hidden=32, heads=2, ffn=64)
    check_build(mod["main"], params=params, rtol=1e-4, atol=1e-5)


def test_tuple_outputs_nested_and_repeated():
    x = v("x", (2, 3))
    e = relay.exp(x)
    body = relay.Tuple([relay.Tuple([e, relay.nn.relu(x)]), e, x, relay.const(np.arange(3, dtype="float32"))])
    check_build(relay.Function([x], body))


def test_identity_and_constant_models():
    x = v("x", (2, 2))
    check_build(relay.Function([x], x))
    lib = check_build(relay.Function([x], relay.Tuple([x, relay.const(np.ones((2,), "float32"))])))
    assert lib.get_lib() is None and list(lib.get_params()) == ["p0"]


def test_let_bound_values_and_opt_levels():
    x = v("x", (3,))
    t = relay.var("t")
    body = relay.Let(t, relay.exp(x), relay.add(t, t))
    for level in (0, 1, 2, 3):
        check_build(relay.Function([x], body), opt_level=level)
    with kiln.transform.PassContext(opt_level=3, disabled_pass=["FuseOps"]):
        lib = relay.build(relay.Function([x], relay.nn.relu(relay.exp(x) + relay.const(1.0))), "llvm")
    kernels = lib.get_lib().list_functions()
    assert len(kernels) == 3 and "tvmgen_default_fused_exp" in kernels  # one kernel per operator


def test_build_arguments_and_errors():
    x = v("x", (2,))
    w = v("w", (2,))
    func = relay.Function([x, w], relay.add(x, w))
    for params in ({"w": np.ones(2, "float32")}, {"w": kiln.nd.array(np.ones(2, "float32"))}):
        lib = relay.build(func, target=kiln.target.Target("llvm"), params=params)
        assert list(lib.get_params()) == ["p0"]
    with kiln.target.Target("c"):
        assert relay.build(func).target.kind.name == "c"
    assert relay.build(func, target={"cpu": "llvm"}).target.kind.name == "llvm"
    with pytest.raises(KilnError, match="cuda"):
        relay.build(func, target="cuda")
    assert kiln.transform.PassContext.list_configs()["relay.backend.use_auto_scheduler"]["type"] == "IntImm"
    with kiln.transform.PassContext(config={"relay.backend.use_auto_scheduler": False}):
        assert relay.build(func).target.kind.name == "llvm"
    with kiln.transform.PassContext(config={"relay.backend.use_auto_scheduler": True}):
        with pytest.raises(KilnError, match="kiln has no auto-scheduler"):
            relay.build(func)
    with pytest.raises(KilnError, match="IRModule or a relay.Function"):
        relay.build(relay.add(x, w))
    with pytest.raises(KilnError, match="'w' must be an NDArray"):
        relay.build(func, params={"w": [1.0, 2.0]})
    cond = v("c", (), "bool")
    with pytest.raises(KilnError, match="cannot run a If"):
        relay.build(relay.Function([cond, x], relay.If(cond, x, relay.exp(x))))


def test_modules_that_need_the_vm_are_refused():
    x, c = v("x", (2,)), v("c", (), "bool")
    vm_hint = "compile the module with relay.vm.compile"
    with pytest.raises(KilnError, match=rf"cannot run a If \(control flow .*\) in @main; {vm_hint}"):
        relay.build(relay.Function([c, x], relay.If(c, x, relay.exp(x))))
    y, f = v("y", (2,)), relay.var("f")
    closure = relay.Let(f, relay.Function([y], y * x), relay.Call(f, [x]))
    with pytest.raises(KilnError, match=rf"cannot run a closure .* {vm_hint}"):
        relay.build(relay.Function([x], closure))
    mod = kiln.IRModule()
    mod["helper"] = relay.Function([y], relay.exp(y))
    mod["main"] = relay.Function([x], relay.Call(mod.get_global_var("helper"), [x]))
    with pytest.raises(KilnError, match=rf"cannot run a call of the global function @helper in @main; {vm_hint}"):
        relay.build(mod)
    check_build(relay.Function([x], relay.If(relay.const(False), x, relay.exp(x))))  # FoldConstant takes the branch


def test_factory_accessors_and_legacy_unpacking():
    x = v("x", (2, 3))
    func = relay.Function([x], relay.nn.relu(x + relay.const(np.ones((2, 3), "float32"))))
    lib = relay.build(func, "llvm", mod_name="net")
    assert lib.get_graph_json() == lib.get_executor_config() == lib["get_graph_json"]()
    assert lib.get_lib().list_functions() == ["tvmgen_net_fused_add_nn_relu"]
    assert set(lib.get_params()) == {"p0"} and isinstance(lib.get_params()["p0"], kiln.nd.NDArray)
    assert lib.ir_mod["main"] is func
    m = graph_executor.GraphModule(lib["net"](kiln.cpu(0)))
    m.run(x=-np.ones((2, 3), "float32"))
    assert np.array_equal(m.get_output(0).numpy(), np.zeros((2, 3), "float32"))
    with pytest.raises(KilnError, match="has no function 'default'"):
        lib["default"]
    with pytest.warns(DeprecationWarning):
        graph_json, libmod, params = lib
    assert graph_json == lib.get_graph_json() and libmod is lib.get_lib() and set(params) == {"p0"}


def test_create_executor_graph():
    x, w = v("x", (3, 4)), v("w", (5, 4))
    func = relay.Function([x, w], relay.Tuple([relay.nn.dense(x, w), relay.sum(x)]))
    mod = kiln.IRModule.from_expr(func)
    xs, ws = RNG.uniform(-1, 1, (3, 4)).astype("float32"), RNG.uniform(-1, 1, (5, 4)).astype("float32")
    want = relay.create_executor("debug", mod=mod).evaluate()(xs, ws)
    got = relay.create_executor("graph", mod, kiln.cpu(0), "llvm").evaluate()(xs, w=ws)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w_ in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w_.numpy(), rtol=1e-5, atol=1e-6)
    bound = relay.create_executor("graph", mod, kiln.cpu(0), "c", params={"w": ws}).evaluate()
    np.testing.assert_allclose(bound(xs)[0].numpy(), want[0].numpy(), rtol=1e-5, atol=1e-6)
    other = relay.Function([x], relay.exp(x))
    np.testing.assert_allclose(relay.create_executor("graph", mod).evaluate(other)(xs).numpy(), np.exp(xs), rtol=1e-6)
    with pytest.raises(KilnError, match="missing arguments"):
        relay.create_executor("graph", mod).evaluate()(xs)
    # as in TVM, a numpy input of another dtype is converted into the input tensor (the interpreter refuses it)
    ints = np.arange(12, dtype="int64").reshape(3, 4)
    np.testing.assert_allclose(relay.create_executor("graph", mod).evaluate(other)(ints).numpy(),
                               np.exp(ints.astype("float32")), rtol=1e-6)


@pytest.mark.slow
def test_resnet50_imagenet_size():
    mod, params = resnet.get_workload(num_layers=50, image_shape=(3, 224, 224))
    check_build(mod["main"], params=params, rtol=1e-3, atol=1e-5)


def test_executor_and_runtime_descriptions():
    from kiln.relay.backend import Executor, Runtime

    x = v("x", (2,))
    func = relay.Function([x], relay.exp(x))
    lib = relay.build(func, "llvm", executor=Executor("graph", {"link-params": False}), runtime=Runtime("cpp"))
    assert lib.get_lib().list_functions() == ["tvmgen_default_fused_exp"]
    assert Executor("graph", {"link-params": True})["link-params"] is True and str(Runtime()) == "cpp"
    with pytest.raises(KilnError, match="executor aot is not supported"):
        relay.build(func, "llvm", executor=Executor("aot"))
    with pytest.raises(KilnError, match="runtime crt is not supported"):
        relay.build(func, "llvm", runtime=Runtime("crt"))
    with pytest.raises(KilnError, match="options must be a dict"):
        Executor("graph", ["link-params"])


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("opt_level", [0, 3])
def test_empty_split_parts_build_and_run(target, opt_level):
    """``split`` at indices that leave a part empty (found by the fuzzer of issue #10: the fused loop over the empty
    part divided by its zero extent)."""
    x = relay.var("x", shape=(2, 1, 3), dtype="int32")
    parts = relay.split(relay.add(x, x), [0, 1], axis=1)
    lib = check_build(relay.Function([x], parts.astuple()), target=target, opt_level=opt_level)
    m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    m.run(x=np.ones((2, 1, 3), "int32"))
    assert [m.get_output(i).numpy().shape for i in range(3)] == [(2, 0, 3), (2, 1, 3), (2, 0, 3)]


def test_build_config_is_a_pass_context():
    with relay.build_config(opt_level=3, disabled_pass=["AlterOpLayout"]):
        ctx = kiln.transform.PassContext.current()
        assert ctx.opt_level == 3 and "AlterOpLayout" in ctx.disabled_pass
    with pytest.raises(kiln.error.KilnError, match="trace"):
        relay.build_config(trace=print)
