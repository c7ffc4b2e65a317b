"""relay.random (kiln/relay/op/random/kernel.py): keys, type relations, the reference interpreter against the
compiled kernels on each target, and determinism."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import OpAttributeInvalid, TypeInferenceError
from kiln.topi.testing import random as R

from ...target.conftest import TARGETS

KEY = relay.TensorType((10,), "uint64")


def typed(expr):
    return relay.transform.InferType()(kiln.IRModule.from_expr(expr))["main"].body.checked_type


def test_threefry_key_layout():
    key = relay.random.threefry_key(5 + (7 << 64) + (1 << 255)).data.numpy()
    assert key.dtype == np.uint64
    assert key.tolist() == [5, 7, 0, 1 << 63, 0, 0, 0, 0, 1 << 63, 0]


@pytest.mark.parametrize("seed", [-1, 2**256, 1.5])
def test_bad_seed(seed):
    with pytest.raises(OpAttributeInvalid, match="threefry_key: the seed must be an integer in \\[0, 2\\*\\*256\\)"):
        relay.random.threefry_key(seed)


def test_types():
    key = relay.random.threefry_key(1)
    assert typed(relay.random.threefry_generate(key, (3, 4))) == relay.TupleType(
        [KEY, relay.TensorType((3, 4), "uint64")])
    assert typed(relay.random.threefry_split(key)) == relay.TupleType([KEY, KEY])
    for op in (relay.random.uniform, relay.random.normal):
        for dtype in ("float32", "float64"):
            assert typed(op(key, (2,), dtype)) == relay.TupleType([KEY, relay.TensorType((2,), dtype)])
    probs = relay.var("p", shape=(2, 3, 5))
    assert typed(relay.random.multinomial(key, probs, 4)) == relay.TupleType(
        [KEY, relay.TensorType((2, 3, 4), "int32")])


def test_an_untyped_key_is_a_threefry_key():
    k = relay.var("k")
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([k], relay.random.threefry_split(k))))
    assert mod["main"].params[0].checked_type == KEY


@pytest.mark.parametrize("build, message", [
    (lambda: relay.random.threefry_generate(relay.const(np.arange(9, dtype="uint64")), (2,)),
     "random.threefry_generate: the key must be a Threefry key"),
    (lambda: relay.random.threefry_split(relay.const(np.arange(10), dtype="int64")),
     "argument 0 has dtype int64, but random.threefry_split needs one of uint64"),
    (lambda: relay.random.uniform(relay.random.threefry_key(0), (2,), "float16", relay.const(0.0), relay.const(1.0)),
     "random.uniform: only float32 and float64 numbers are generated, got out_dtype float16"),
    (lambda: relay.random.normal(relay.random.threefry_key(0), (2,), "float16"),
     "argument 1 has dtype float16, but random.normal needs one of float32, float64"),
    (lambda: relay.random.normal(relay.random.threefry_key(0), (2,), "float64", relay.const(0.0)),
     "random.normal: mean must be a scalar of the result dtype"),
    (lambda: relay.random.uniform(relay.random.threefry_key(0), (2,), "float32", relay.const([0.0, 1.0])),
     "random.uniform: low must be a scalar"),
    (lambda: relay.random.multinomial(relay.random.threefry_key(0), relay.const(1.0), 2),
     "random.multinomial: probs must have at least one axis"),
])
def test_bad_calls_name_the_operator(build, message):
    with pytest.raises(TypeInferenceError, match=message):
        typed(build())


def test_bad_attributes():
    with pytest.raises(OpAttributeInvalid, match="num_samples"):
        relay.random.multinomial(relay.random.threefry_key(0), relay.var("p", shape=(3,)), -1)
    with pytest.raises(OpAttributeInvalid, match="out_shape"):
        relay.random.threefry_generate(relay.random.threefry_key(0), (2, -1))
    with pytest.raises(OpAttributeInvalid, match="UniformAttrs.out_dtype: is not a dtype kiln knows"):
        relay.random.uniform(relay.random.threefry_key(0), (2,), "foo")
    assert relay.random.threefry_generate(relay.random.threefry_key(0), 3).attrs.out_shape == (3,)


def test_a_size_known_at_run_time_is_refused_by_name():
    probs = relay.var("p", shape=(relay.Any(), 4))
    draws = relay.TupleWrapper(relay.random.multinomial(relay.random.threefry_key(3), probs, 5), 2)[1]
    mod = kiln.IRModule.from_expr(relay.Function([probs], draws))
    with pytest.raises(kiln.error.OpNotImplemented, match="topi.random.multinomial: the shape .* must be known"):
        relay.create_executor("vm", mod=mod, target="llvm").evaluate()(np.ones((3, 4), "float32"))


def program():
    """A function of the key and probabilities drawing from every operator, each key used once."""
    key, probs = relay.var("key", KEY), relay.var("probs", shape=(3, 4))
    left, right = relay.TupleWrapper(relay.random.threefry_split(key), 2)
    left, bits = relay.TupleWrapper(relay.random.threefry_generate(left, (5,)), 2)
    left, uniform = relay.TupleWrapper(relay.random.uniform(left, (4, 3), "float64", -1.0, 2.0), 2)
    left, normal = relay.TupleWrapper(relay.random.normal(left, (7,), "float32", 1.0, 3.0), 2)
    right, draws = relay.TupleWrapper(relay.random.multinomial(right, probs, 6), 2)
    return relay.Function([key, probs], relay.Tuple([bits, uniform, normal, draws, left, right]))


def run_all(mod, target, *args):
    """The results of the reference interpreter, the graph executor and the VM."""
    want = [v.numpy() for v in relay.create_executor("debug", mod=mod).evaluate()(*args)]
    graph = [v.numpy() for v in relay.create_executor("graph", mod=mod, target=target).evaluate()(*args)]
    vm = [v.numpy() for v in relay.create_executor("vm", mod=mod, target=target).evaluate()(*args)]
    return want, graph, vm


@pytest.mark.parametrize("target", TARGETS)
def test_interpreter_and_compiled_agree(target):
    mod = kiln.IRModule.from_expr(program())
    key = relay.random.threefry_key(99).data.numpy()
    probs = np.array([[1, 2, 3, 4], [0, -1, 5, 0], [0, 0, 0, 0]], "float32")
    want, graph, vm = run_all(mod, target, key, probs)
    for got in (graph, vm):
        for w, g in zip(want, got, strict=True):
            assert w.dtype == g.dtype and w.shape == g.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    # the interpreter runs the numpy kernels: the bits are the model's
    left, _ = R.threefry_split_python(key)
    assert np.array_equal(want[0], R.threefry_generate_python(left, (5,))[1])
    assert want[1].min() >= -1.0 and want[1].max() < 2.0
    assert set(want[3][1].tolist()) <= {0, 2} and set(want[3][2].tolist()) == {0}


def test_same_key_same_numbers_other_key_other_numbers():
    mod = kiln.IRModule.from_expr(program())
    probs = np.ones((3, 4), "float32")
    run = relay.create_executor("debug", mod=mod).evaluate()
    first = [v.numpy() for v in run(relay.random.threefry_key(1).data.numpy(), probs)]
    again = [v.numpy() for v in run(relay.random.threefry_key(1).data.numpy(), probs)]
    other = [v.numpy() for v in run(relay.random.threefry_key(2).data.numpy(), probs)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not np.array_equal(first[0], other[0]) and not np.array_equal(first[2], other[2])


def test_text_round_trip():
    mod = kiln.IRModule.from_expr(program())
    text = mod.astext()
    assert 'random.uniform(' in text and 'out_dtype="float64"' in text
    kiln.ir.assert_structural_equal(relay.fromtext(text), relay.transform.InferType()(mod))
