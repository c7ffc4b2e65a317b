"""The model-zoo workloads TVM ships (inception_v3, mobilenet, squeezenet, densenet, vgg, dcgan, lstm, dqn,
synthetic): architecture (layer counts of the published networks), TVM's parameter names and shapes, types, and
results of compiled code against the reference interpreter or a numpy formula."""

import collections

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.error import KilnError
from kiln.relay.testing import dcgan, densenet, dqn, inception_v3, lstm, mobilenet, squeezenet, synthetic, vgg


def _op_counts(mod):
    counts = collections.Counter()
    relay.analysis.post_order_visit(
        mod["main"], lambda e: counts.update([e.op.name]) if isinstance(e, relay.Call) and
        isinstance(e.op, kiln.ir.Op) else None)
    return counts


def _check_params(mod, params):
    main = mod["main"]
    assert {p.name_hint for p in main.params} - {"data"} == set(params)
    for p in main.params:
        if p.name_hint != "data":
            assert params[p.name_hint].shape == p.type_annotation.shape


@pytest.mark.parametrize("build,convs,ret", [
    (lambda: inception_v3.get_workload(), 94, (1, 1000)),
    (lambda: mobilenet.get_workload(), 27, (1, 1000)),
    (lambda: mobilenet.get_workload(image_shape=(224, 224, 3), layout="NHWC"), 27, (1, 1000)),
    (lambda: squeezenet.get_workload(version="1.0"), 26, (1, 1000)),
    (lambda: squeezenet.get_workload(version="1.1", num_classes=10), 26, (1, 10)),
    (lambda: densenet.get_workload(batch_size=2), 120, (2, 1000)),
    (lambda: densenet.get_workload(densenet_size=169, batch_size=1), 168, (1, 1000)),
    (lambda: vgg.get_workload(1, image_shape=(3, 32, 32), num_layers=11), 8, (1, 1000)),
    (lambda: vgg.get_workload(1, image_shape=(3, 32, 32), num_layers=19, batch_norm=True), 16, (1, 1000)),
    (lambda: dqn.get_workload(1), 3, (1, 18)),
    (lambda: synthetic.get_workload(), 2, (1, 3, 24, 12)),
])
def test_architectures_type_check_with_tvm_parameters(build, convs, ret):
    mod, params = build()
    _check_params(mod, params)
    assert _op_counts(mod)["nn.conv2d"] == convs
    assert tuple(mod["main"].checked_type.ret_type.shape) == ret


def test_tvm_parameter_names():
    _, params = inception_v3.get_workload()
    assert params["mixed_10_tower_1_mixed_conv_1_conv1_weight"].shape == (384, 384, 3, 1)
    assert params["fc1_weight"].shape == (1000, 2048) and "fc2_bias" in params
    _, params = mobilenet.get_workload()
    assert params["separable_conv_block_13_weight"].shape == (1024, 1, 3, 3)
    assert params["separable_conv_block_13_conv2_weight"].shape == (1024, 1024, 1, 1)
    _, params = densenet.get_workload(batch_size=1)
    # as in TVM, a dense block outputs the concatenation of its layers only (16 x 32 channels for the last)
    assert params["conv2d_2_3_15_weight"].shape == (32, 128, 3, 3) and params["dense_weight"].shape == (1000, 512)
    _, params = squeezenet.get_workload()
    assert params["fire8_right_conv_weight"].shape == (256, 64, 3, 3) and "conv_final_bias" in params
    _, params = dcgan.get_workload(1)
    assert params["g2_deconv_weight"].shape == (1024, 512, 4, 4) and params["dense_weight"].shape == (16384, 100)


def test_synthetic_weights_are_tvms_constants():
    _, params = synthetic.get_workload()
    np.testing.assert_allclose(params["conv_weight"].numpy(), np.full((3, 3, 3, 3), 1 / 81, "float32"))
    np.testing.assert_array_equal(params["batch_norm_moving_var"].numpy(), np.ones(3, "float32"))


def _compiled_matches_interpreter(mod, params, seed=0):
    main = mod["main"]
    rng = np.random.default_rng(seed)
    data = rng.uniform(-1, 1, size=main.params[0].type_annotation.shape).astype("float32")
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    m.set_input("data", data)
    m.run()
    want = relay.create_executor("debug", mod=mod).evaluate()(data, *[params[p.name_hint] for p in main.params[1:]])
    np.testing.assert_allclose(m.get_output(0).numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("build", [
    lambda: dqn.get_workload(1, image_shape=(84, 84, 4), layout="NHWC"),
    lambda: dcgan.get_workload(1, ngf=8),
    lambda: synthetic.get_workload(),
    lambda: squeezenet.get_workload(version="1.1", image_shape=(3, 48, 48)),
])
def test_small_workloads_compile_and_match_the_interpreter(build):
    _compiled_matches_interpreter(*build())


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def test_lstm_matches_a_numpy_lstm():
    steps, hidden = 3, 8
    mod, params = lstm.get_workload(steps, hidden)
    rng = np.random.default_rng(1)
    xs = [rng.uniform(-1, 1, size=(1, hidden)).astype("float32") for _ in range(steps)]
    h = c = np.zeros((1, hidden), "float32")
    for k, x in enumerate(xs):
        p = {name: params[f"{name[:3]}_{k}_{name[4:]}"].numpy() for name in ("i2h_weight", "i2h_bias", "h2h_weight",
                                                                               "h2h_bias")}
        gates = x @ p["i2h_weight"].T + p["i2h_bias"] + h @ p["h2h_weight"].T + p["h2h_bias"]
        i, f, t, o = np.split(gates, 4, axis=1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(t)
        h = _sigmoid(o) * np.tanh(c)
    exe = relay.vm.compile(mod, target="llvm", params=params)
    vm = kiln.runtime.vm.VirtualMachine(exe, kiln.cpu(0))
    np.testing.assert_allclose(vm.invoke("main", *xs).numpy(), h, rtol=1e-5, atol=1e-6)


def test_unknown_variants_are_named():
    with pytest.raises(KilnError, match="densenet"):
        densenet.get_workload(densenet_size=100)
    with pytest.raises(KilnError, match="vgg"):
        vgg.get_workload(1, num_layers=12)
    with pytest.raises(KilnError, match="squeezenet"):
        squeezenet.get_workload(version="2.0")
    with pytest.raises(KilnError, match="64x64"):
        dcgan.get_workload(1, oshape=(3, 32, 32))


@pytest.mark.slow
@pytest.mark.parametrize("build", [lambda: mobilenet.get_workload(), lambda: inception_v3.get_workload()])
def test_big_workloads_compile_and_match_the_interpreter(build):
    _compiled_matches_interpreter(*build())

