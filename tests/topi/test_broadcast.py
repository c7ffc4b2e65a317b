"""Broadcasting binary operators and ``where`` (kiln/topi/broadcast.py) against the numpy reference."""

import numpy as np
import pytest

from kiln import te, topi
from kiln.topi.broadcast import BINARY

_INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"}


def test_binary_float_broadcasting(harness, target):
    cases = []
    shapes = [((4, 1, 5), (3, 1)), ((2, 3), (2, 3)), ((), (6,))]
    for name in BINARY:
        if name in _INT_ONLY:
            continue
        for k, (sa, sb) in enumerate(shapes):
            a = harness.rand(sa, "float32", -3, 3, seed=k)
            b = harness.rand(sb, "float32", 0.5, 3, seed=k + 7)  # positive: divisors and power bases stay valid
            if name == "power":
                a = np.abs(a) + 0.1
            cases.append(harness.Case(name, [a, b], label=f"{name} {sa}x{sb}", rtol=1e-5, atol=1e-5))
    harness.run_cases(cases, target)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_binary_int(harness, target, dtype):
    a = harness.rand((3, 8), dtype, -20, 20, seed=1)
    b = harness.rand((8,), dtype, 1, 7, seed=2)
    b[::2] *= -1  # negative divisors: trunc vs floor semantics differ
    cases = []
    for name in BINARY:
        rhs = b
        if name in ("left_shift", "right_shift"):
            rhs = np.abs(b)
        if name == "power":
            rhs = np.abs(b) % 4
        cases.append(harness.Case(name, [a, rhs], label=f"{name}/{dtype}"))
    harness.run_cases(cases, target)


def test_where_and_bool_logic(harness, target):
    cond = harness.rand((2, 1, 4), "bool", seed=3)
    x = harness.rand((3, 4), "float32", seed=4)
    y = harness.rand((2, 3, 1), "float32", seed=5)
    p, q = harness.rand((5, 6), "bool", seed=6), harness.rand((6,), "bool", seed=7)
    cases = [harness.Case("where", [cond, x, y], label="where bool"),
             harness.Case("where", [cond.astype("int32") * 3, x, y], label="where int condition")]
    cases += [harness.Case(n, [p, q], label=f"{n}/bool") for n in ("logical_and", "logical_or", "logical_xor",
                                                                     "equal", "not_equal")]
    cases.append(harness.Case("logical_not", [p], label="logical_not/bool"))
    harness.run_cases(cases, target)


def test_number_operand_takes_the_tensor_dtype():
    x = te.placeholder((4,), "float16", name="x")
    assert topi.add(x, 1).dtype == "float16"
    assert topi.multiply(2.5, x).dtype == "float16"
    assert topi.add(x, x).op.tag == "elemwise"
    y = te.placeholder((1,), "float16", name="y")
    assert topi.add(x, y).op.tag == "broadcast"


def test_broadcast_shape_errors():
    from kiln.error import OpAttributeInvalid

    assert topi.broadcast_shape((4, 1, 5), (3, 1)) == (4, 3, 5)
    with pytest.raises(OpAttributeInvalid, match=r"\(2, 3\) and \(4,\)"):
        topi.broadcast_shape((2, 3), (4,))
    with pytest.raises(OpAttributeInvalid, match="broadcast_to"):
        topi.broadcast_to(te.placeholder((3,), name="z"), (2, 4))
