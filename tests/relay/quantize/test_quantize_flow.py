"""The quantization flow (partition, annotate, calibrate, realize): program structure after each step, the
integer program's values against the float model and against the float simulation, calibration modes, and the
fixed-point arithmetic realization uses."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.relay import quantize as q
from kiln.relay.quantize._calibrate import find_scale_by_kl, find_scale_by_percentile
from kiln.relay.quantize._realize import fixed_point_multiply

RNG = np.random.default_rng(0)
W1 = RNG.uniform(-0.5, 0.5, (8, 3, 3, 3)).astype("float32")
W2 = RNG.uniform(-0.3, 0.3, (8, 8, 3, 3)).astype("float32")


def _net():
    x = relay.var("data", shape=(1, 3, 12, 12))
    w1, w2 = relay.var("w1", shape=W1.shape), relay.var("w2", shape=W2.shape)
    y = relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1), channels=8, kernel_size=(3, 3)))
    y = relay.nn.relu(relay.nn.conv2d(y, w2, padding=(1, 1), channels=8, kernel_size=(3, 3)))
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2))
    y = relay.nn.global_avg_pool2d(relay.add(y, y))
    return kiln.IRModule.from_expr(relay.Function([x, w1, w2], y)), {"w1": W1, "w2": W2}


def _ops(mod):
    names = []
    relay.analysis.post_order_visit(mod["main"], lambda e: names.append(e.op.name) if isinstance(e, relay.Call) and
                                    isinstance(e.op, kiln.ir.Op) else None)
    return names


def _run(mod, *args):
    return relay.create_executor("graph", mod=mod, target="llvm").evaluate()(*args).numpy()


def test_integer_program_matches_the_float_model_and_its_simulation():
    mod, params = _net()
    data = RNG.uniform(-1, 1, (1, 3, 12, 12)).astype("float32")
    want = relay.create_executor("debug", mod=mod).evaluate()(data, W1, W2).numpy()
    with q.qconfig(skip_conv_layers=[], global_scale=8.0):
        qmod = q.quantize(mod, params)
    with q.qconfig(skip_conv_layers=[], global_scale=8.0, do_simulation=True):
        sim = q.quantize(mod, params)
    ops = _ops(qmod)
    assert "relay.op.annotation.simulated_quantize" not in ops and ops.count("nn.conv2d") == 2
    assert "relay.op.annotation.simulated_quantize" in _ops(sim)
    convs = []
    relay.analysis.post_order_visit(qmod["main"], lambda e: convs.append(e) if isinstance(e, relay.Call) and
                                    getattr(e.op, "name", "") == "nn.conv2d" else None)
    assert all(c.attrs.out_dtype == "int32" and c.args[1].checked_type.dtype == "int8" for c in convs)
    got, simulated = _run(qmod, data), _run(sim, data)
    step = 8.0 / 128  # the activations' quantization step (global_scale / 2^7)
    assert np.abs(got - want).max() < 2 * step
    # the same arithmetic, but the integer average pooling truncates its quotient: at most one step apart
    np.testing.assert_allclose(got, simulated, atol=step + 1e-6)
    assert np.abs(got - simulated).mean() < step


def test_annotation_and_calibration_steps():
    mod, params = _net()
    mod = q.prerequisite_optimize(mod, params)
    with q.qconfig(global_scale=4.0), q.quantize_context():  # skip_conv_layers=[0]: the first conv stays float
        annotated = q.annotate()(q.partition()(mod))
        calls = [c for c in _calls(annotated) if c.op.name.endswith("simulated_quantize")]
        kinds = sorted(int(c.attrs.kind) for c in calls)
        assert kinds.count(q.QAnnotateKind.WEIGHT) == 1  # only the second convolution's weight
        extra = [p.name_hint for p in annotated["main"].params[1:]]
        assert set(extra) == {"dom_scale", "clip_min", "clip_max"} and len(extra) == 3 * len(calls)
        calibrated = kiln.ir.transform.module_pass(q.calibrate(), opt_level=1, name="QuantizeCalibrate")(annotated)
    assert [p.name_hint for p in calibrated["main"].params] == ["data"]
    for call in (c for c in _calls(calibrated) if c.op.name.endswith("simulated_quantize")):
        scale = float(call.args[1].data.numpy())
        if call.attrs.kind == q.QAnnotateKind.WEIGHT:
            weight = np.abs(call.args[0].data.numpy()).max()
            assert scale == pytest.approx(2 ** np.ceil(np.log2(weight)) / 128)  # power2 weight scale
        else:
            assert scale == pytest.approx(4.0 / 128)
        assert float(call.args[3].data.numpy()) == 127 and float(call.args[2].data.numpy()) == -127


def _calls(mod):
    out = []
    relay.analysis.post_order_visit(mod["main"], lambda e: out.append(e) if isinstance(e, relay.Call) and
                                    isinstance(e.op, kiln.ir.Op) else None)
    return out


@pytest.mark.parametrize("mode", ["percentile", "kl_divergence"])
def test_dataset_calibration(mode):
    mod, params = _net()
    dataset = [{"data": RNG.uniform(-1, 1, (1, 3, 12, 12)).astype("float32")} for _ in range(2)]
    with q.qconfig(skip_conv_layers=[], calibrate_mode=mode, weight_scale="max"):
        qmod = q.quantize(mod, params, dataset)
        with pytest.raises(KilnError, match="needs a dataset"):
            q.quantize(mod, params)
    data = dataset[0]["data"]
    want = relay.create_executor("debug", mod=mod).evaluate()(data, W1, W2).numpy()
    got = _run(qmod, data)
    assert np.abs(got - want).max() < 0.15 * np.abs(want).max()  # scales fitted to the data: a coarse match


def test_scale_finders():
    uniform = RNG.uniform(-2, 2, 200_000)
    assert find_scale_by_percentile(uniform) == pytest.approx(2.0, abs=1e-3)
    spiky = np.concatenate([RNG.normal(0, 1, 100_000), [60.0, -55.0]])  # two outliers far out
    kl = find_scale_by_kl(spiky)
    assert 2.0 < kl < 20.0  # clips the outliers instead of stretching the range to them
    assert find_scale_by_kl(np.zeros(10)) == 0.0


@pytest.mark.parametrize("rounding", ["UPWARD", "TONEAREST"])
def test_fixed_point_multiply(rounding):
    values = np.array([-1000, -7, -3, -1, 0, 1, 3, 7, 1000, 123456], "int32")
    x = relay.var("x", shape=values.shape, dtype="int32")
    for multiplier in (0.3, 0.7071, 1.5, 3.999, 1 / 3):
        func = relay.Function([x], fixed_point_multiply(x, multiplier, rounding))
        got = relay.create_executor("debug", mod=kiln.IRModule.from_expr(func)).evaluate()(values).numpy()
        exact = values.astype("float64") * multiplier
        want = np.floor(exact + 0.5) if rounding == "UPWARD" else np.sign(exact) * np.floor(np.abs(exact) + 0.5)
        close = np.abs(exact - np.round(exact)) > 1e-6  # away from exact ties, where the 31-bit multiplier decides
        np.testing.assert_array_equal(got[close], want[close].astype("int32"))
