import numpy as np
import pytest

from kiln import relay
from kiln.ir import assert_structural_equal

SE = relay.transform.SimplifyExpr


def _names(func):
    names = []
    relay.analysis.post_order_visit(func, lambda e: names.append(e.op.name) if isinstance(e, relay.Call) else None)
    return names


@pytest.mark.parametrize("fill, op, gone", [
    (lambda x: relay.zeros((3, 4), "float32"), relay.add, True),
    (lambda x: relay.ones_like(x), relay.multiply, True),
    (lambda x: relay.full(relay.const(2.5), (4,)), relay.subtract, False),
    (lambda x: relay.zeros((2, 3, 4), "float32"), relay.add, False),  # it broadcasts x: stays a tensor
])
def test_a_filled_operand_becomes_its_scalar(check_pass, fill, op, gone):
    x = relay.var("x", shape=(3, 4))
    after = check_pass(relay.Function([x], op(x, fill(x))), SE())
    if gone:
        assert _names(after) == []
    else:
        assert len(_names(after)) == 2 or isinstance(after.body.args[1], relay.Constant)


def test_scale_and_shift_chains_fold_to_one_multiply_and_one_add(check_pass):
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(8,))
    c1, c2, c3 = (relay.const(rng.uniform(size=8).astype("float32")) for _ in range(3))
    for expr in [(x + c1) * c2 + c3, c3 + c2 * (c1 + x), (x * c1 + c2) * c3, c1 * (x * c2) * c3]:
        after = check_pass(relay.Function([x], expr), SE())
        assert sorted(_names(after)) in (["add", "multiply"], ["multiply"])


def test_casts_around_a_clip_that_lose_nothing_go(check_pass):
    x = relay.var("x", shape=(4, 8))
    y = relay.cast(relay.cast(relay.cast(relay.clip(x, 0.0, 255.0), "uint8"), "int16"), "int32")
    after = check_pass(relay.Function([x], y), SE())
    assert _names(after) == ["clip", "cast"] and after.body.attrs.dtype == "int32"
    z = relay.cast(relay.cast(relay.clip(x, 0.0, 255.0), "int8"), "int32")  # int8 cannot hold 255: it stays
    assert _names(check_pass(relay.Function([x], z), SE())) == ["clip", "cast", "cast"]


@pytest.mark.parametrize("dtype, chain, lo, hi, left", [
    ("float32", ["uint16", "float64"], 0.0, 4.0, ["uint16", "float64"]),  # truncation: fuzz seed 40639
    ("float64", ["float32", "float64"], 0.0, 4.0, ["float32", "float64"]),  # precision
    ("float32", ["float64", "float32"], 0.0, 4.0, []),
    ("int32", ["float16", "int32"], 0.0, 4000.0, ["float16", "int32"]),  # float16 skips odd integers past 2048
    ("int32", ["float16", "int32"], 0.0, 2000.0, []),
    ("int32", ["uint8", "int16", "int32"], 0.0, 255.0, []),
    ("float32", ["bool", "int32"], 0.0, 4.0, ["bool", "int32"]),
    ("float32", ["uint8", "bool", "uint8"], 0.0, 5.0, ["uint8", "bool", "uint8"]),  # fuzz seed 40473
])
def test_casts_around_a_clip_that_change_values_stay(check_pass, dtype, chain, lo, hi, left):
    x = relay.var("x", shape=(4, 8), dtype=dtype)
    y = relay.clip(x * relay.const(3.7, dtype) if dtype.startswith("float") else x * relay.const(37, dtype), lo, hi)
    for cast_dtype in chain:
        y = relay.cast(y, cast_dtype)
    after = check_pass(relay.Function([x], y), SE())
    assert [n for n in _names(after) if n == "cast"] == ["cast"] * len(left)
    node, found = after.body, []
    while isinstance(node, relay.Call) and node.op.name == "cast":
        found.insert(0, node.attrs.dtype)
        node = node.args[0]
    assert found == left


def test_a_clip_its_dtype_cannot_leave_goes(check_pass):
    x = relay.var("x", shape=(4,), dtype="int32")
    kept = relay.clip(relay.cast(x, "int8"), -100.0, 100.0)
    gone = relay.clip(relay.cast(x, "uint8"), 0.0, 255.0)
    after = check_pass(relay.Function([x], relay.Tuple([kept, gone])), SE())
    assert after.body.fields[0].op.name == "clip" and after.body.fields[1].op.name == "cast"


def test_arg_reductions_of_a_dequantized_tensor_read_the_integers(check_pass):
    x = relay.var("x", shape=(4, 16), dtype="int8")
    dq = relay.qnn.op.dequantize(x, relay.const(0.5), relay.const(3))
    after = check_pass(relay.Function([x], relay.argmax(dq, axis=1)), SE())
    assert_structural_equal(after.body, relay.infer_type(relay.Function([x], relay.argmax(x, axis=1))).body,
                            map_free_vars=True)
    flipped = relay.qnn.op.dequantize(x, relay.const(-0.5), relay.const(3))  # a negative scale reverses the order
    assert _names(check_pass(relay.Function([x], relay.argmin(flipped, axis=1)), SE())) == ["qnn.dequantize",
                                                                                         "argmin"]


@pytest.mark.parametrize("a, b, c, factors", [(1.0, 2.0, 1.0, 1), (6.0, 5.0, 1.0, 2), (1.0, 1.0, 1.0, 0)])
def test_a_quadratic_form_factors_into_a_product(check_pass, a, b, c, factors):
    x, y = relay.var("x", shape=(5,)), relay.var("y", shape=(5,))
    expr = relay.const(b) * y * x + x * relay.const(a) * x + y * (relay.const(c) * y)
    after = check_pass(relay.Function([x, y], expr), SE(), rtol=1e-4, atol=1e-4)
    adds = _names(after).count("add")
    # a double root gives one factor used twice, two roots two factors, no real root leaves the sum
    assert adds == {1: 1, 2: 2, 0: 2}[factors] and (factors == 0) == (after.body.op.name == "add")
