"""Target-specific qnn legalizations (kiln/relay/qnn/op/legalizations.py): the legalized program has the operand
dtypes each target multiplies fastest and computes the same integers, on random inputs."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.relay.testing import run_infer_type

RNG = np.random.default_rng(8)
TARGETS = {  # target -> (data dtype, kernel dtype) of the legalized qnn call, or None: no qnn call is left
    "llvm -mcpu=cascadelake": ("uint8", "int8"),
    "llvm -device=arm_cpu -mtriple=aarch64-linux-gnu -mattr=+v8.2a,+dotprod": "same",
    "llvm": None,
    "llvm -device=arm_cpu -mtriple=aarch64-linux-gnu": None,
    "cuda": ("int8", "int8"),
}


def _c(value, dtype):
    return relay.const(np.asarray(value, dtype=dtype))


def _calls(mod):
    calls = []
    relay.analysis.post_order_visit(mod["main"], lambda e: calls.append(e) if isinstance(e, relay.Call) else None)
    return calls


@pytest.mark.parametrize("op", ["conv2d", "dense"])
@pytest.mark.parametrize("dtypes", [("int8", "int8"), ("uint8", "uint8"), ("uint8", "int8"), ("int8", "uint8")])
def test_legalized_operands_compute_the_same(op, dtypes):
    shapes = {"conv2d": ((1, 3, 5, 5), (4, 3, 3, 3)), "dense": ((2, 6), (4, 6))}[op]
    data, kernel = (relay.var(n, shape=s, dtype=d) for n, s, d in zip(("d", "k"), shapes, dtypes, strict=True))
    k_zp = _c([1, -2, 0, 3], "int32") if op == "conv2d" else _c(2, "int32")
    common = (_c(3, "int32"), k_zp, _c(0.5, "float32"), _c(0.25, "float32"))
    call = (relay.qnn.op.conv2d(data, kernel, *common, kernel_size=(3, 3), channels=4) if op == "conv2d"
            else relay.qnn.op.dense(data, kernel, *common, units=4))
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([data, kernel], call)))
    args = [RNG.integers(np.iinfo(d).min, np.iinfo(d).max, s).astype(d) for s, d in zip(shapes, dtypes, strict=True)]
    want = relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()
    for target, expected in TARGETS.items():
        with kiln.target.Target(target):
            legal = relay.qnn.transform.Legalize()(mod)
        qnn_calls = [c for c in _calls(legal) if c.op.name.startswith("qnn.")]
        if expected is None:
            assert not qnn_calls, target
        else:
            (q,) = qnn_calls
            got = (q.args[0].checked_type.dtype, q.args[1].checked_type.dtype)
            assert got == (dtypes[1], dtypes[1]) if expected == "same" else got == expected, target
        np.testing.assert_array_equal(relay.create_executor("debug", mod=legal).evaluate()(*args).numpy(), want)


def test_without_a_target_nothing_changes():
    x = relay.var("x", shape=(2, 6), dtype="int8")
    call = run_infer_type(relay.qnn.op.dense(x, x, _c(0, "int32"), _c(0, "int32"), _c(1.0, "float32"),
                                             _c(1.0, "float32"), units=2))
    mod = kiln.IRModule.from_expr(relay.Function([x], call))
    assert kiln.ir.structural_equal(relay.qnn.transform.Legalize()(mod), relay.transform.InferType()(mod))
