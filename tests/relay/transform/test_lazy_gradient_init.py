"""LazyGradientInit (kiln/relay/transform/lazy_gradient_init.py): the function keeps its type and its results, and
its ones and zeros become lazy cells."""

import numpy as np

import kiln
from kiln import relay
from kiln.ir import FuncType, TensorType, TupleType
from kiln.relay.expr_functor import post_order_visit

T = TensorType((3, 4), "float32")


def _lazy(func):
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(func))
    return relay.transform.LazyGradientInit()(mod)


def _constructors(func):
    found = []
    post_order_visit(func, lambda e: found.append(e.op.name_hint) if isinstance(e, relay.Call) and
                     type(e.op).__name__ == "Constructor" else None)
    return found


def test_gradient_program_keeps_its_type_and_results():
    x, y = relay.var("x", T), relay.var("y", T)
    back = relay.transform.gradient(relay.Function([x, y], relay.exp(x) * y + x), mode="first_order")
    mod = _lazy(back)
    assert mod["main"].checked_type == FuncType((T, T), TupleType((T, TupleType((T, T)))))
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (3, 4)).astype("float32") for _ in range(2))
    (out, (gx, gy)), (want, (wx, wy)) = (relay.create_executor(mod=m).evaluate(m["main"])(a, b)
                                         for m in (mod, kiln.IRModule.from_expr(back)))
    for got, expected in ((out, want), (gx, wx), (gy, wy)):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)
    made = _constructors(mod["main"])
    assert "One" in made and "Raw" in made


def test_ones_and_zeros_become_lazy_cells_and_skip_arithmetic():
    """``x * ones_like(x) + zeros_like(x)``: both are cells made only on demand; the value is ``x``."""
    x = relay.var("x", T)
    mod = _lazy(relay.Function([x], x * relay.ones_like(x) + relay.zeros_like(x)))
    made = _constructors(mod["main"])
    assert made.count("One") == 1 and made.count("Zero") == 1
    data = np.arange(12, dtype="float32").reshape(3, 4)
    np.testing.assert_array_equal(relay.create_executor(mod=mod).evaluate(mod["main"])(data).numpy(), data)


def test_tuple_parameters_and_other_operators():
    tup = relay.var("t", TupleType((T, T)))
    body = relay.Tuple([relay.sum(relay.TupleGetItem(tup, 0)), relay.TupleGetItem(tup, 1) - relay.zeros((3, 4))])
    mod = _lazy(relay.Function([tup], body))
    assert mod["main"].checked_type.arg_types == (TupleType((T, T)),)
    a, b = np.ones((3, 4), "float32"), np.full((3, 4), 2.0, "float32")
    s, d = relay.create_executor(mod=mod).evaluate(mod["main"])((a, b))
    assert s.numpy() == 12.0
    np.testing.assert_array_equal(d.numpy(), b)
