"""Element-wise operators (kiln/topi/elemwise.py) lowered through their strategies, against the numpy reference."""

import numpy as np
import pytest

from kiln import topi
from kiln.ir.op import has_op
from kiln.relay.op.attrs import CastAttrs, ClipAttrs, InitOpAttrs
from kiln.topi.elemwise import UNARY as TOPI_UNARY

UNARY = [name for name in TOPI_UNARY if has_op(name)]  # those with a Relay operator (and so a reference)

# inputs inside each function's domain
_DOMAIN = {"log": (0.1, 4.0), "sqrt": (0.0, 4.0), "rsqrt": (0.1, 4.0), "acosh": (1.0, 4.0), "asin": (-0.9, 0.9),
           "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9)}
_TOLERANCE = {"erf": 1e-4, "tanh": 1e-5, "tan": 1e-4}


def test_unary_float(harness, target):
    cases = []
    for name in UNARY:
        if name == "bitwise_not":
            continue  # integers only
        low, high = _DOMAIN.get(name, (-3.0, 3.0))
        data = harness.rand((3, 37), "float32", low, high, seed=len(name))
        if name == "round":
            data[0, :4] = [0.5, -0.5, 1.5, -2.5]  # ties round away from zero
        if name in ("isnan", "isinf", "isfinite"):
            data[1, :3] = [np.nan, np.inf, -np.inf]
        tol = _TOLERANCE.get(name, 1e-6)
        cases.append(harness.Case(name, [data], label=name, rtol=tol, atol=tol))
    harness.run_cases(cases, target)


@pytest.mark.parametrize("dtype", ["int32", "int8"])
def test_unary_int(harness, target, dtype):
    skip = {"acosh", "asin", "acos", "atanh", "log", "rsqrt", "sqrt", "isnan", "isinf", "isfinite", "tan"}
    cases = []
    for name in UNARY:
        if name in skip:
            continue
        cases.append(harness.Case(name, [harness.rand((2, 19), dtype, -4, 5, seed=3)], label=f"{name}/{dtype}"))
    positive = harness.rand((2, 19), dtype, 1, 50, seed=4)
    cases += [harness.Case(n, [positive], label=f"{n}/{dtype}+") for n in ("log", "sqrt", "rsqrt")]
    harness.run_cases(cases, target)


def test_clip_cast_init(harness, target):
    x = harness.rand((4, 33), "float32", -3, 3)
    i = harness.rand((4, 33), "int32", -300, 300)
    cases = [
        harness.Case("clip", [x], ClipAttrs(-1.5, 0.25), label="clip float"),
        harness.Case("clip", [x], ClipAttrs(-np.inf, 0.0), label="clip float no lower bound"),
        harness.Case("clip", [i], ClipAttrs(-100.7, 100.2), label="clip int truncates bounds"),
        harness.Case("clip", [i], ClipAttrs(0, np.inf), label="clip int saturates inf"),
        harness.Case("cast", [x * 100], CastAttrs("int32"), label="float->int truncates"),
        harness.Case("cast", [x], CastAttrs("bool"), label="float->bool"),
        harness.Case("cast", [i], CastAttrs("float32"), label="int->float"),
        harness.Case("cast", [i], CastAttrs("int8"), label="int->int8 wraps"),
        harness.Case("zeros", [], InitOpAttrs((3, 5), "float32")),
        harness.Case("ones", [], InitOpAttrs((7,), "int64")),
        harness.Case("full", [np.array(2.75, "float32")], InitOpAttrs((2, 3), "int32"), label="full converts"),
        harness.Case("full", [np.array(-1.5, "float32")], InitOpAttrs((4, 17), "float32")),
    ]
    harness.run_cases(cases, target)


def test_unary_names_match():
    for name in UNARY:
        assert getattr(topi, name).__name__ == name


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("fexp", [topi.exp, topi.fast_exp], ids=["exp", "fast_exp"])
def test_float32_exp_is_within_two_ulp(target, fexp):
    """float32 ``exp`` is expanded into vector arithmetic (LowerIntrin): within 2 ulp of the exact value over the
    whole range, subnormal results included; inf above, 0 below, NaN kept."""
    import kiln
    from kiln import te

    x = te.placeholder((8192,), name="x")
    out = fexp(x)
    lib = kiln.build(topi.x86.schedule_injective([out], target), [x, out], target=target, name="f")
    rng = np.random.default_rng(0)
    data = np.concatenate([rng.uniform(-87, 88.7, 4096), rng.uniform(-104, -87, 4080),
                           [0.0, -0.0, 1e-7, -1e-7, 88.72, 88.73, -103.9, -104.0, 1000.0, -1000.0, np.inf, -np.inf,
                            np.nan, -87.33, 1.0, -1.0]]).astype("float32")
    got = kiln.nd.empty((8192,), "float32")
    lib["f"](kiln.nd.array(data), got)
    got = got.numpy()
    with np.errstate(over="ignore"):
        want = np.exp(data.astype("float64"))
        finite = np.isfinite(want.astype("float32")) & (want.astype("float32") > 0)
    ulp = np.abs(got[finite] - want[finite]) / np.spacing(want[finite].astype("float32"))
    assert ulp.max() <= 2.0
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got[~finite], np.exp(data[~finite]))  # inf, 0 and NaN exactly
    assert got[data == 0].tolist() == [1.0, 1.0]


def test_math_cast_takes_tensors_and_scalars():
    from kiln import te, tir
    from kiln.topi.math import cast as math_cast

    n = te.size_var("n")
    assert isinstance(math_cast(n, "float32"), tir.Cast)
    assert math_cast(3, "float32").value == 3.0
    assert math_cast(te.placeholder((3,), "int32"), "float32").dtype == "float32"
