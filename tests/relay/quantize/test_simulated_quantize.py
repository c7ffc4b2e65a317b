"""relay.op.annotation.simulated_quantize: type relation and argument types, the numpy reference against an
independent formula, the compiled kernel against the reference, layouts, and attach_simulated_quantize."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import OpNotImplemented, TypeInferenceError
from kiln.relay.quantize import QAnnotateKind, attach_simulated_quantize, quantize_context, simulated_quantize


def _expected(x, scale, lo, hi):
    """Quantize to the integer grid of step ``scale`` in [lo, hi] (ties away from zero) and scale back."""
    q = np.clip(x / scale, lo, hi)
    q = np.sign(q) * np.floor(np.abs(q) + 0.5)
    return (q * scale).astype(x.dtype)


def _call(shape, kind=QAnnotateKind.INPUT, dtype="float32"):
    x = relay.var("x", shape=shape, dtype=dtype)
    s, lo, hi = (relay.var(n, shape=(), dtype="float32") for n in ("s", "lo", "hi"))
    return relay.Function([x, s, lo, hi], simulated_quantize(x, s, lo, hi, kind))


@pytest.mark.parametrize("executor", ["debug", "graph", "vm"])
def test_values_against_the_formula(executor):
    rng = np.random.default_rng(0)
    x = rng.uniform(-10, 10, size=(3, 7)).astype("float32")
    x[0, :3] = [0.625, -0.625, 1.875]  # exact ties at scale 0.25 (2.5, -2.5, 7.5 steps)
    mod = kiln.IRModule.from_expr(_call((3, 7)))
    run = relay.create_executor(executor, mod=mod, target="llvm").evaluate()
    for scale, lo, hi in ((0.25, -127.0, 127.0), (0.5, -8.0, 7.0), (0.0625, -128.0, 127.0)):
        got = run(x, np.float32(scale), np.float32(lo), np.float32(hi)).numpy()
        np.testing.assert_allclose(got, _expected(x, np.float32(scale), lo, hi), rtol=0, atol=1e-6)


def test_identity_kind_and_float16():
    x = np.linspace(-3, 3, 8).astype("float16")
    mod = kiln.IRModule.from_expr(_call((8,), QAnnotateKind.IDENTITY, "float16"))
    out = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(x, np.float32(7), np.float32(0),
                                                                             np.float32(0))
    np.testing.assert_array_equal(out.numpy(), x)
    mod = kiln.IRModule.from_expr(_call((8,), QAnnotateKind.WEIGHT, "float16"))
    out = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(x, np.float32(0.5), np.float32(-4),
                                                                             np.float32(4))
    np.testing.assert_array_equal(out.numpy(), _expected(x.astype("float32"), 0.5, -4, 4).astype("float16"))


def test_types():
    x = relay.var("x", shape=(2, 3))
    call = simulated_quantize(x, relay.var("a"), relay.var("b"), relay.var("c"), QAnnotateKind.WEIGHT)
    func = relay.transform.InferTypeLocal(relay.Function(relay.analysis.free_vars(call), call))
    assert func.arg_types[1:] == (relay.TensorType((), "float32"),) * 3  # untyped scalars are typed float32
    assert func.ret_type == relay.TensorType((2, 3), "float32")
    bad = simulated_quantize(x, relay.var("a", shape=(3,)), relay.var("b"), relay.var("c"))
    with pytest.raises(TypeInferenceError, match="dom_scale must be a float32 scalar"):
        relay.transform.InferTypeLocal(bad)
    with pytest.raises(TypeInferenceError, match="int32"):
        relay.transform.InferTypeLocal(simulated_quantize(relay.var("i", shape=(2,), dtype="int32"),
                                                          relay.var("a"), relay.var("b"), relay.var("c")))
    with pytest.raises(kiln.error.OpAttributeInvalid, match="kind"):
        simulated_quantize(x, x, x, x, kind=7)


def test_unsupported_rounding_is_refused_when_computed():
    func = relay.Function([relay.var("x", shape=(2,))], simulated_quantize(
        relay.var("x", shape=(2,)), relay.const(1.0), relay.const(-1.0), relay.const(1.0), QAnnotateKind.INPUT,
        rounding="stochastic_round"))
    with pytest.raises(OpNotImplemented, match="rounding='round'"):
        relay.create_executor("debug", mod=kiln.IRModule.from_expr(relay.Function(
            relay.analysis.free_vars(func.body), func.body))).evaluate()(np.zeros(2, "float32"))


def test_attach_reuses_nodes_and_convert_layout_passes_through():
    with quantize_context():
        x = relay.var("x", shape=(1, 8, 6, 6))
        w = relay.var("w", shape=(8, 8, 3, 3))
        conv = relay.nn.conv2d(x, w, channels=8, kernel_size=(3, 3), padding=(1, 1))
        q = attach_simulated_quantize(conv, QAnnotateKind.INPUT)
        assert attach_simulated_quantize(conv, QAnnotateKind.INPUT) is q
        assert attach_simulated_quantize(q, QAnnotateKind.INPUT) is q
        assert attach_simulated_quantize(conv, QAnnotateKind.ACTIVATION) is not q
    body = relay.nn.relu(q)
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function(relay.analysis.free_vars(body), body)))
    converted = relay.transform.ConvertLayout({"nn.conv2d": ["NHWC", "OHWI"]})(mod)
    calls = []
    relay.analysis.post_order_visit(converted["main"], lambda e: calls.append(e) if isinstance(e, relay.Call)
                                    else None)
    sq = next(c for c in calls if c.op.name.endswith("simulated_quantize"))
    assert sq.checked_type.shape == (1, 6, 6, 8)  # quantized in NHWC, transformed back once at the end
    assert [c.op.name for c in calls].count("layout_transform") == 3
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((1, 8, 6, 6)).astype("float32"), rng.standard_normal((8, 8, 3, 3)).astype("float32"),
            np.float32(0.5), np.float32(-127), np.float32(127)]
    names = [p.name_hint for p in mod["main"].params]
    assert names == ["x", "w", "dom_scale", "clip_min", "clip_max"]
    want = relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()
    got = relay.create_executor("graph", mod=converted, target="llvm").evaluate()(*args).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
