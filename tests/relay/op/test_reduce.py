import numpy as np
import pytest

import kiln
from kiln import relay


def typed(expr):
    return relay.infer_type(expr).checked_type


@pytest.mark.parametrize("axis,keepdims,exclude,out", [
    (None, False, False, ()),
    (1, False, False, (2, 4)),
    ((0, 2), True, False, (1, 3, 1)),
    (1, False, True, (3,)),
    (-1, False, False, (2, 3)),
    ((1,), True, True, (1, 3, 1)),
    (None, True, True, (1, 1, 1)),  # no axis: every axis, whatever exclude says (TVM's GetReduceAxes)
    ((), False, True, ()),
])
def test_reduce_shapes(axis, keepdims, exclude, out):
    x = relay.var("x", shape=(2, 3, 4))
    for build in (relay.sum, relay.mean, relay.max, relay.min):
        t = typed(build(x, axis, keepdims, exclude))
        assert t.shape == out and t.dtype == "float32"


def test_argmax_is_int32():
    x = relay.var("x", shape=(2, 3))
    t = typed(relay.argmax(x, axis=1))
    assert t.shape == (2,) and t.dtype == "int32"


def test_bad_axis():
    from kiln.error import TypeInferenceError

    with pytest.raises(TypeInferenceError, match="axis 3"):
        typed(relay.sum(relay.var("x", shape=(2, 3)), axis=3))


@pytest.mark.parametrize("executor", ["graph", "vm"])
def test_exclude_without_an_axis_reduces_every_axis_when_compiled(executor):
    """Fuzz seed 40544: the relation kept every axis while the layout rules (opt_level 3) reduced them all."""
    x = relay.var("x", shape=(1, 4, 3, 3), dtype="int64")
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.argmin(x, keepdims=True, exclude=True)))
    data = np.random.default_rng(0).integers(-9, 9, size=(1, 4, 3, 3))
    for target in ["llvm", "c"]:
        with kiln.transform.PassContext(opt_level=3):
            got = relay.create_executor(executor, mod=mod, target=target).evaluate()(data).numpy()
        np.testing.assert_array_equal(got, np.argmin(data).reshape(1, 1, 1, 1))
