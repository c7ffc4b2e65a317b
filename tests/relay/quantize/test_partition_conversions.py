"""partition_conversions (kiln/relay/quantize/_partition_conversions.py): a quantized module split into input
quantization, integer core and output dequantization computes what the unpartitioned one computes; a core left in
float fails the fully-integral check. Also calibration data as users pass it (float64, extra names)."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.relay import quantize as q

RNG = np.random.default_rng(3)
CFG = {"skip_conv_layers": [], "dtype_input": "int8", "dtype_weight": "int8", "dtype_activation": "int32"}


def _two_convs():
    x1, x2 = relay.var("x1", shape=(1, 4, 8, 8)), relay.var("x2", shape=(1, 4, 8, 8))
    w1, w2 = relay.var("w1", shape=(4, 4, 3, 3)), relay.var("w2", shape=(4, 4, 3, 3))
    conv = [relay.nn.conv2d(x, w, padding=(1, 1), channels=4, kernel_size=(3, 3)) for x, w in ((x1, w1), (x2, w2))]
    params = {n: RNG.uniform(0, 1, (4, 4, 3, 3)).astype("float32") for n in ("w1", "w2")}
    return kiln.IRModule.from_expr(relay.Function([x1, w1, x2, w2], relay.add(*conv))), params


def _calls(func):
    names = []
    relay.analysis.post_order_visit(func, lambda e: names.append(getattr(e.op, "name", None))
                                    if isinstance(e, relay.Call) else None)
    return names


def test_fully_integral_partition_computes_as_the_unpartitioned_module():
    mod, params = _two_convs()
    with q.qconfig(**CFG):
        whole = q.quantize(mod, params)
    with q.qconfig(**CFG, partition_conversions="fully_integral"):
        parts = q.quantize(mod, params)
    assert len(whole.get_global_vars()) == 1
    assert {gv.name_hint for gv in parts.get_global_vars()} == {"main", "quantize_inputs", "quantized_main",
                                                                 "dequantize_outputs"}
    assert set(_calls(parts["quantize_inputs"])) <= {"multiply", "round", "clip", "cast"}
    assert "nn.conv2d" in _calls(parts["quantized_main"])
    assert [p.name_hint for p in parts["main"].params] == ["x1", "x2"]
    args = [RNG.uniform(0, 1, (1, 4, 8, 8)).astype("float32") for _ in range(2)]
    run = [relay.create_executor("vm", mod=m, target="llvm").evaluate()(*args).numpy() for m in (whole, parts)]
    np.testing.assert_allclose(run[1], run[0])


def test_a_float_core_is_not_fully_integral():
    x, b, w = relay.var("x", shape=(1, 4, 8, 8)), relay.var("b", shape=(4,)), relay.var("w", shape=(4, 4, 3, 3))
    body = relay.nn.conv2d(relay.nn.bias_add(x, b), w, padding=(1, 1), channels=4, kernel_size=(3, 3))
    mod = kiln.IRModule.from_expr(relay.Function([x, b, w], body))
    params = {"b": RNG.uniform(0, 1, 4).astype("float32"), "w": RNG.uniform(0, 1, (4, 4, 3, 3)).astype("float32")}
    with q.qconfig(**CFG, partition_conversions="enabled"):
        assert len(q.quantize(mod, params).get_global_vars()) == 4
    with q.qconfig(**CFG, partition_conversions="fully_integral"):
        with pytest.raises(AssertionError, match="float32 .*add"):  # the bias addition stays in float
            q.quantize(mod, params)
    y = relay.var("y", shape=(2, 2))
    with q.qconfig(**CFG, partition_conversions="fully_integral"):
        with pytest.raises(AssertionError, match="float32"):
            q.quantize(kiln.IRModule.from_expr(relay.Function([y], relay.add(y, y))), {})


def test_calibration_converts_inputs_and_skips_unknown_names():
    mod, params = _two_convs()
    dataset = [{"x1": RNG.uniform(0, 1, (1, 4, 8, 8)), "x2": RNG.uniform(0, 1, (1, 4, 8, 8)),
                "unused": np.zeros(3)}]  # float64, and a name the model does not read: as TVM accepts them
    with q.qconfig(**CFG, calibrate_mode="kl_divergence"):
        qmod = q.quantize(mod, params, dataset)
    args = [d.astype("float32") for d in (dataset[0]["x1"], dataset[0]["x2"])]
    want = relay.create_executor("debug", mod=mod).evaluate()(args[0], params["w1"], args[1], params["w2"]).numpy()
    got = relay.create_executor("graph", mod=qmod, target="llvm").evaluate()(*args).numpy()
    assert np.abs(got - want).max() < 0.2 * np.abs(want).max()
