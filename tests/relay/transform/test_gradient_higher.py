"""Higher-order AD with references (kiln/relay/transform/gradient_higher.py): references, closures passed as
values, recursion over a data type, and the types of the transformed program."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.ir import FuncType, TensorType, TupleType
from kiln.ir.type_poly import RelayRefType
from kiln.relay.prelude import Prelude
from kiln.relay.testing import check_grad, make_nat_expr
from kiln.relay.transform.gradient_higher import BP_TYPE, higher_order_gradient, reverse_type

T = TensorType((2, 3), "float64")


def _data(seed=0):
    return np.random.default_rng(seed).uniform(0.5, 1.5, (2, 3))


def _run(func, *args, mod=None):
    back = relay.transform.gradient(func, mod=mod)
    return relay.create_executor(mod=mod).evaluate(back)(*args)


def test_reverse_types():
    assert reverse_type(T) == TupleType((T, RelayRefType(T)))
    assert reverse_type(FuncType((T,), T)) == FuncType((reverse_type(T), BP_TYPE), reverse_type(T))
    assert reverse_type(TupleType((T, T))) == TupleType((reverse_type(T), reverse_type(T)))


def test_references():
    """``r = ref(x); r := !r * !r + x; !r``: d/dx = 2x + 1."""
    x = relay.var("x", T)
    r, u = relay.Var("r"), relay.Var("u")
    body = relay.Let(r, relay.RefCreate(x), relay.Let(
        u, relay.RefWrite(r, relay.RefRead(r) * relay.RefRead(r) + x), relay.RefRead(r)))
    data = _data()
    out, (grad,) = _run(relay.Function([x], body), data)
    np.testing.assert_allclose(out.numpy(), data * data + data)
    np.testing.assert_allclose(grad.numpy(), 2 * data + 1)


def test_closure_passed_as_a_value():
    """``apply_twice(f, x) = f(f(x))`` with ``f = fn(a) { a * y }``: the gradients of x and of the captured y."""
    x, y, a = relay.var("x", T), relay.var("y", T), relay.var("a", T)
    f, g, v = relay.Var("f"), relay.Var("g"), relay.var("v", T)
    apply_twice = relay.Function([g, v], relay.Call(g, [relay.Call(g, [v])]))
    body = relay.Let(f, relay.Function([a], a * y), relay.Call(apply_twice, [f, x]))
    func = relay.Function([x, y], body)
    xs, ys = _data(), _data(1)
    out, (gx, gy) = _run(func, xs, ys)
    np.testing.assert_allclose(out.numpy(), xs * ys * ys)
    np.testing.assert_allclose(gx.numpy(), ys * ys)
    np.testing.assert_allclose(gy.numpy(), 2 * xs * ys)
    check_grad(func, inputs=[xs, ys])


def test_recursion_over_a_data_type():
    """``nat_iterate(double, 3)(i) = 8 i`` through the prelude's recursive global function: d/di = 8, and the
    differentiated global is added to the module as ``nat_iterate_grad``."""
    mod = kiln.IRModule()
    p = Prelude(mod)
    mod.import_from_std("nat.rly")
    nat_iterate = mod.get_global_var("nat_iterate")
    x, i = relay.var("x", T), relay.var("i", T)
    double = relay.Function([x], x + x)
    mod["main"] = relay.Function([i], nat_iterate(double, make_nat_expr(p, 3))(i) * i)
    mod = relay.transform.InferType()(mod)
    mod["main"] = relay.transform.gradient(mod["main"], mod=mod)
    assert "nat_iterate_grad" in [gv.name_hint for gv in mod.functions]
    mod = relay.transform.InferType()(mod)
    assert mod["main"].checked_type == FuncType((T,), TupleType((T, TupleType((T,)))))
    data = _data()
    out, (grad,) = relay.create_executor(mod=mod).evaluate(mod["main"])(data)
    np.testing.assert_allclose(out.numpy(), 8 * data * data)
    np.testing.assert_allclose(grad.numpy(), 16 * data)


def test_tuple_results_seed_their_first_tensor():
    x = relay.var("x", T)
    r = relay.Var("r")
    body = relay.Let(r, relay.RefCreate(x * x), relay.Tuple([relay.RefRead(r), x]))
    _, (grad,) = _run(relay.Function([x], body), _data())
    np.testing.assert_allclose(grad.numpy(), 2 * _data())


def test_first_order_mode_rejects_what_needs_references():
    x = relay.var("x", T)
    func = relay.Function([x], relay.RefRead(relay.RefCreate(x)))
    with pytest.raises(KilnError, match="higher_order"):
        relay.transform.gradient(func, mode="first_order")
    with pytest.raises(KilnError, match="tensor parameters"):
        tup = relay.var("t", TupleType((T, T)))
        higher_order_gradient(relay.infer_type(relay.Function([tup], relay.TupleGetItem(tup, 0))))
