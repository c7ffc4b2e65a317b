"""``relay.build`` outside float32: the regressions of issue #10, each built for C and LLVM at opt_level 0 and 3 and
checked against values worked out by hand (and the reference interpreter).

The numbers in the test names are the issue's: 1 bool sums, 2 int64/float64 params, 3-4 bool masks in C, 5
arg-reductions over bool, 6 8-bit wrap-around in C, 7 int64 indices fused after other operators, 8 float16 math in C,
9 the operators that were missing.
"""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.error import TypeInferenceError

from ..target.conftest import TARGETS


@pytest.fixture(params=[0, 3], ids=lambda level: f"O{level}")
def opt_level(request):
    return request.param


@pytest.fixture(params=TARGETS)
def target(request):
    return request.param


def build_and_run(expr, inputs, target, opt_level, params=None):
    """The outputs of ``expr`` built with ``relay.build``, each also checked against the reference interpreter."""
    func = relay.Function(relay.analysis.free_vars(expr), expr)
    mod = kiln.IRModule.from_expr(func)
    with kiln.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, target=target, params=params)
    module = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    module.run(**inputs)
    got = [module.get_output(i).numpy() for i in range(module.get_num_outputs())]
    values = {**inputs, **(params or {})}
    want = relay.create_executor("debug", mod=mod).evaluate()(*[values[p.name_hint] for p in func.params])
    want = [w.numpy() for w in (want if isinstance(want, tuple) else (want,))]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)
    return got if len(got) > 1 else got[0]


def var(name, shape, dtype):
    return relay.var(name, shape=shape, dtype=dtype)


def test_1_sum_over_bool_is_logical_or(target, opt_level):
    b = var("b", (4,), "bool")
    assert build_and_run(relay.sum(b), {"b": np.ones(4, bool)}, target, opt_level) == np.True_
    two = np.array([True, True, False, False])
    assert build_and_run(relay.cast(relay.sum(b), "int32"), {"b": two}, target, opt_level) == 1
    assert build_and_run(relay.prod(b), {"b": two}, target, opt_level) == np.False_
    m = var("m", (2, 3), "bool")
    rows = np.array([[True, True, True], [True, False, False]])
    np.testing.assert_array_equal(build_and_run(relay.cast(relay.prod(m, axis=1), "int8"), {"m": rows}, target,
                                                opt_level), np.array([1, 0], "int8"))


def test_2_params_keep_int64_and_float64(target, opt_level):
    x, p = var("x", (3,), "int64"), var("p", (3,), "int64")
    big = np.full(3, 2**40 + 1, "int64")
    out = build_and_run(relay.add(x, p), {"x": np.arange(3, dtype="int64")}, target, opt_level, params={"p": big})
    np.testing.assert_array_equal(out, big + np.arange(3))
    f, q = var("f", (2,), "float32"), var("q", (2,), "float64")
    third = np.array([1 / 3, 2**40 + 1], "float64")
    out = build_and_run(relay.add(relay.cast(f, "float64"), q), {"f": np.zeros(2, "float32")}, target, opt_level,
                        params={"q": third})
    np.testing.assert_array_equal(out, third)  # 2^40 + 1 and 1/3 survive: no float32 on the way


def test_3_int_and_bool_broadcasts_in_one_module(target, opt_level):
    ones = relay.const(np.ones((1, 1, 1, 2), bool))
    expr = relay.Tuple([relay.nn.softmax(relay.const(np.array([[1.0, 2.0]], "float32"))),
                        relay.logical_xor(ones, relay.const(np.ones((1, 1, 1, 1), bool)))])
    soft, xor = build_and_run(expr, {}, target, opt_level)
    np.testing.assert_allclose(soft, [[0.26894142, 0.73105858]], rtol=1e-6)
    np.testing.assert_array_equal(xor, np.zeros((1, 1, 1, 2), bool))


def test_4_bool_masks_inside_one_kernel(target, opt_level):
    c, x, y = var("c", (2, 1), "bool"), var("x", (2,), "int32"), var("y", (2, 1), "int32")
    out = build_and_run(relay.where(c, x, y), {"c": np.array([[True], [False]]), "x": np.array([1, 2], "int32"),
                                               "y": np.array([[5], [6]], "int32")}, target, opt_level)
    np.testing.assert_array_equal(out, [[1, 2], [6, 6]])
    z = var("z", (4,), "int32")
    expr = relay.not_equal(relay.less(z, z), relay.less_equal(relay.const(5, "int32"), z))
    out = build_and_run(expr, {"z": np.array([1, 5, 7, 3], "int32")}, target, opt_level)
    np.testing.assert_array_equal(out, [False, True, True, False])


def test_5_arg_reductions_over_bool(target, opt_level):
    b = var("b", (3, 4), "bool")
    data = np.array([[False] * 4, [False, True, False, True], [True] * 4])
    argmin, argmax = build_and_run(relay.Tuple([relay.argmin(b, axis=1), relay.argmax(b, axis=1)]), {"b": data},
                                   target, opt_level)
    np.testing.assert_array_equal(argmin, [0, 0, 0])  # an all-false row: its first element, not 2147483647
    np.testing.assert_array_equal(argmax, [0, 1, 0])
    last = build_and_run(relay.argmax(b, axis=0, select_last_index=True), {"b": data}, target, opt_level)
    np.testing.assert_array_equal(last, [2, 2, 2, 2])


def test_6_eight_bit_values_wrap_after_every_operation(target, opt_level):
    u = var("u", (3,), "uint8")
    out = build_and_run(relay.floor_divide(relay.bitwise_not(u), relay.const(3, "uint8")),
                        {"u": np.array([5, 4, 0], "uint8")}, target, opt_level)
    np.testing.assert_array_equal(out, np.array([83, 83, 85], "uint8"))
    a = var("a", (2,), "int8")
    halved = relay.divide(relay.add(a, a), relay.const(2, "int8"))  # 100 + 100 wraps to -56 before the division
    out = build_and_run(halved, {"a": np.array([100, -3], "int8")}, target, opt_level)
    np.testing.assert_array_equal(out, np.array([-28, -3], "int8"))
    w = var("w", (2,), "uint16")
    out = build_and_run(relay.negative(w), {"w": np.array([1, 0], "uint16")}, target, opt_level)
    np.testing.assert_array_equal(out, np.array([65535, 0], "uint16"))


def test_7_int64_indices_after_other_operators(target, opt_level):
    x = var("x", (10,), "float32")
    i = var("i", (2,), "int64")
    data = {"x": np.arange(10, dtype="float32"), "i": np.array([0, 4], "int64")}
    out = build_and_run(relay.take(relay.reshape(x, [2, 5]), i, axis=1), data, target, opt_level)
    np.testing.assert_array_equal(out, [[0, 4], [5, 9]])
    out = build_and_run(relay.take(relay.strided_slice(x, [1], [9]), i, axis=0), data, target, opt_level)
    np.testing.assert_array_equal(out, [1, 5])
    m = var("m", (2, 3), "float32")
    g = var("g", (4, 3), "int64")
    data = {"m": np.arange(6, dtype="float32").reshape(2, 3), "g": np.array([[3, 0, 1]] * 4, "int64")}
    out = build_and_run(relay.gather(relay.concatenate([m, m], 0), 0, g), data, target, opt_level)
    np.testing.assert_array_equal(out, [[3, 1, 5]] * 4)
    n = var("n", (1, 2), "int64")
    data = {"m": data["m"], "n": np.array([[0, 2]], "int64")}
    np.testing.assert_array_equal(build_and_run(relay.gather_nd(relay.reshape(m, [3, 2]), n), data, target,
                                                opt_level), [[0, 1], [4, 5]])
    d, w, k = var("d", (1, 1, 4, 4), "float32"), var("w", (2, 1, 3, 3), "float32"), var("k", (1, 2, 2, 2), "int64")
    index = np.array([[[[0, 1], [1, 0]], [[1, 1], [0, 0]]]], "int64")
    conv = relay.nn.conv2d(d, relay.multiply(w, relay.const(np.array([1, 2], "float32").reshape(2, 1, 1, 1))))
    out = build_and_run(relay.gather(conv, 1, k), {"d": np.ones((1, 1, 4, 4), "float32"),
                                                   "w": np.ones((2, 1, 3, 3), "float32"), "k": index},
                        target, opt_level)
    np.testing.assert_array_equal(out, 9 * (1 + index))


@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_7_unsigned_indices_past_the_signed_range(target, opt_level, mode):
    """A uint64 index past 2**63 (and a uint32 past 2**31) is large, not negative: ``clip`` takes the last element
    and ``wrap`` the remainder of the unsigned value."""
    x = var("x", (3,), "float32")
    data = np.array([10, 20, 30], "float32")
    for dtype, values in (("uint64", [1, 2**64 - 1, 2**64 - 2, 5]), ("uint32", [1, 2**32 - 1, 2**31 + 1, 5])):
        i = var("i", (4,), dtype)
        out = build_and_run(relay.take(x, i, mode=mode), {"x": data, "i": np.array(values, dtype)}, target,
                            opt_level)
        index = np.array(values, dtype)
        expected = np.minimum(index, 2) if mode == "clip" else index % np.array(3, dtype)
        np.testing.assert_array_equal(out, data[expected.astype("int64")])


@pytest.mark.parametrize("op", ["abs", "exp", "ceil", "max", "min", "tanh", "erf"])
def test_8_float16_math(target, opt_level, op):
    h = var("h", (3, 8), "float16")
    data = np.random.default_rng(8).uniform(-3, 3, (3, 8)).astype("float16")
    fn = getattr(relay, op)
    expr = fn(h, axis=1) if op in ("max", "min") else fn(h)
    out = build_and_run(expr, {"h": data}, target, opt_level)  # the reference check is within float16 rounding
    assert out.dtype == np.float16


def test_8_float16_rounds_after_every_operation(target, opt_level):
    """``a * b + a`` fused into one kernel still rounds the product to float16 (no float16 FMA, no excess
    precision): bit-identical to numpy."""
    a, b = var("a", (64,), "float16"), var("b", (64,), "float16")
    rng = np.random.default_rng(3)
    data = {"a": rng.random(64).astype("float16"), "b": rng.random(64).astype("float16")}
    out = build_and_run(relay.add(relay.multiply(a, b), a), data, target, opt_level)
    np.testing.assert_array_equal(out, data["a"] * data["b"] + data["a"])


def test_9_all_any_argsort(target, opt_level):
    b = var("b", (2, 3), "bool")
    data = np.array([[True, False, True], [True, True, True]])
    all_rows, any_cols = build_and_run(relay.Tuple([relay.all(b, axis=1), relay.any(b, axis=0, keepdims=True)]),
                                       {"b": data}, target, opt_level)
    np.testing.assert_array_equal(all_rows, [False, True])
    np.testing.assert_array_equal(any_cols, [[True, True, True]])
    x = var("x", (2, 5), "int8")
    data = np.array([[3, 1, 3, 0, 2], [-1, 5, 5, -7, 0]], "int8")
    up, down = build_and_run(relay.Tuple([relay.argsort(x), relay.argsort(x, is_ascend=False, dtype="int64")]),
                             {"x": data}, target, opt_level)
    np.testing.assert_array_equal(up, [[3, 1, 4, 0, 2], [3, 0, 4, 1, 2]])
    np.testing.assert_array_equal(down, [[0, 2, 4, 1, 3], [1, 2, 4, 0, 3]])  # ties keep the lower index first
    assert down.dtype == np.int64


def test_9_trunc_divide_and_trunc_mod(target, opt_level):
    a, b = var("a", (4,), "int32"), var("b", (4,), "int32")
    data = {"a": np.array([7, -7, 7, -7], "int32"), "b": np.array([2, 2, -2, -2], "int32")}
    q, r = build_and_run(relay.Tuple([relay.trunc_divide(a, b), relay.trunc_mod(a, b)]), data, target, opt_level)
    np.testing.assert_array_equal(q, [3, -3, -3, 3])
    np.testing.assert_array_equal(r, [1, -1, 1, -1])
    f, g = var("f", (3,), "float64"), var("g", (3,), "float64")
    data = {"f": np.array([7.5, -7.5, 1.0]), "g": np.array([2.0, 2.0, -0.75])}
    q, r = build_and_run(relay.Tuple([relay.trunc_divide(f, g), relay.trunc_mod(f, g)]), data, target, opt_level)
    np.testing.assert_array_equal(q, [3.0, -3.0, -1.0])
    np.testing.assert_array_equal(r, [1.5, -1.5, 0.25])


def test_9_dtypes_the_new_operators_refuse():
    x = var("x", (2,), "float32")
    with pytest.raises(TypeInferenceError, match="all: argument 0 has dtype float32, but all needs bool"):
        relay.infer_type(relay.Function([x], relay.all(x)))
    with pytest.raises(TypeInferenceError, match="argsort: the output has dtype float32, but argsort needs an "
                                                 "integer dtype"):
        relay.infer_type(relay.Function([x], relay.argsort(x, dtype="float32")))
    with pytest.raises(TypeInferenceError, match="trunc_mod: argument 0 has dtype bool"):
        y = var("y", (2,), "bool")
        relay.infer_type(relay.Function([y], relay.trunc_mod(y, y)))
