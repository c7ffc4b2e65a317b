"""relay.transform.gradient and FirstOrderGradient (kiln/relay/transform/gradient.py): the shape of the result, the
values on hand-computed and numpy-computed examples, no recomputation, and the errors."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.ir import FuncType, TensorType, TupleType
from kiln.relay.testing import check_grad, run_infer_type

T = TensorType((3, 4), "float64")


def _run(func, *args, mode="higher_order", mod=None):
    back = relay.transform.gradient(func, mod=mod, mode=mode)
    return relay.create_executor(mod=mod).evaluate(back)(*args)


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


@pytest.mark.parametrize("mode", ["higher_order", "first_order"])
def test_identity_type_and_values(mode):
    x = relay.var("x", T)
    back = run_infer_type(relay.transform.gradient(relay.Function([x], x), mode=mode))
    assert back.checked_type == FuncType((T,), TupleType((T, TupleType((T,)))))
    data = _rand(3, 4)
    out, (grad,) = relay.create_executor().evaluate(back)(data)
    np.testing.assert_array_equal(out.numpy(), data)
    np.testing.assert_array_equal(grad.numpy(), np.ones((3, 4)))


def test_shared_use_and_lets_add_up():
    """``y = x + x; y * y``: d/dx = 8x (the adjoints of both uses of x and of y are summed)."""
    sb = relay.ScopeBuilder()
    x = relay.var("x", T)
    y = sb.let("y", x + x)
    sb.ret(y * y)
    data = _rand(3, 4)
    out, (grad,) = _run(relay.Function([x], sb.get()), data)
    np.testing.assert_allclose(out.numpy(), 4 * data * data)
    np.testing.assert_allclose(grad.numpy(), 8 * data)


def test_unused_parameter_gets_zeros():
    x, y = relay.var("x", T), relay.var("y", T)
    _, (gx, gy) = _run(relay.Function([x, y], relay.exp(x)), _rand(3, 4), _rand(3, 4, seed=1))
    np.testing.assert_allclose(gx.numpy(), np.exp(_rand(3, 4)))
    np.testing.assert_array_equal(gy.numpy(), np.zeros((3, 4)))


def test_tuples_and_projections():
    x, y, z = (relay.var(n, T) for n in "xyz")
    tup = relay.Tuple([x, y, z])
    body = relay.TupleGetItem(tup, 0) * relay.TupleGetItem(tup, 1) - relay.TupleGetItem(tup, 2)
    xs = [_rand(3, 4, seed=i) for i in range(3)]
    _, (gx, gy, gz) = _run(relay.Function([x, y, z], body), *xs)
    np.testing.assert_allclose(gx.numpy(), xs[1])
    np.testing.assert_allclose(gy.numpy(), xs[0])
    np.testing.assert_allclose(gz.numpy(), -np.ones((3, 4)))


def test_tuple_parameter_first_order_only():
    tup = relay.var("tup", TupleType((T, T)))
    func = relay.Function([tup], relay.TupleGetItem(tup, 0) * relay.TupleGetItem(tup, 0))
    a, b = _rand(3, 4), _rand(3, 4, seed=1)
    _, (grad,) = _run(func, (a, b), mode="first_order")
    np.testing.assert_allclose(grad[0].numpy(), 2 * a)
    np.testing.assert_array_equal(grad[1].numpy(), np.zeros((3, 4)))
    with pytest.raises(KilnError, match="tensor parameters"):
        relay.transform.gradient(func)


def test_tuple_result_seeds_all_fields_or_the_first():
    """first_order seeds every tensor of a tuple result; higher_order (TVM's rule) only the first one."""
    x = relay.var("x", T)
    func = relay.Function([x], relay.Tuple([x * x, x]))
    data = _rand(3, 4)
    (square, same), (grad,) = _run(func, data, mode="first_order")
    np.testing.assert_allclose(square.numpy(), data * data)
    np.testing.assert_allclose(grad.numpy(), 2 * data + 1)
    _, (grad,) = _run(func, data, mode="higher_order")
    np.testing.assert_allclose(grad.numpy(), 2 * data)


def test_function_literal_called_twice_gets_two_tapes():
    x, a = relay.var("x", T), relay.var("a", T)
    square = relay.Function([a], a * a)
    func = relay.Function([x], square(square(x)))  # x ** 4
    data = _rand(3, 4)
    out, (grad,) = _run(func, data)
    np.testing.assert_allclose(out.numpy(), data ** 4)
    np.testing.assert_allclose(grad.numpy(), 4 * data ** 3)


def test_global_functions_are_differentiated_through():
    mod = kiln.IRModule()
    a = relay.var("a", T)
    double = relay.GlobalVar("double")
    mod[double] = relay.Function([a], a + a)
    y = relay.var("y", T)
    q = relay.GlobalVar("q")
    mod[q] = relay.Function([y], double(double(y)) * y)
    mod = relay.transform.InferType()(mod)
    data = _rand(3, 4)
    out, (grad,) = _run(q, data, mod=mod)
    np.testing.assert_allclose(out.numpy(), 4 * data * data)
    np.testing.assert_allclose(grad.numpy(), 8 * data)


def test_mlp_gradients_match_numpy():
    """A two-layer perceptron with a softmax cross-entropy loss: every parameter's gradient equals the one derived
    by hand in numpy."""
    rng = np.random.default_rng(7)
    batch, n_in, hidden, n_out = 4, 5, 6, 3
    data = relay.var("data", shape=(batch, n_in), dtype="float64")
    w1, b1 = relay.var("w1", shape=(hidden, n_in), dtype="float64"), relay.var("b1", shape=(hidden,), dtype="float64")
    w2, b2 = relay.var("w2", shape=(n_out, hidden), dtype="float64"), relay.var("b2", shape=(n_out,), dtype="float64")
    label = relay.var("label", shape=(batch, n_out), dtype="float64")
    h = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(data, w1), b1))
    logits = relay.nn.bias_add(relay.nn.dense(h, w2), b2)
    loss = relay.nn.cross_entropy_with_logits(relay.nn.log_softmax(logits), label)
    func = relay.Function([data, w1, b1, w2, b2, label], loss)
    args = [rng.normal(size=(batch, n_in)), rng.normal(size=(hidden, n_in)), rng.normal(size=hidden),
            rng.normal(size=(n_out, hidden)), rng.normal(size=n_out), np.eye(n_out)[rng.integers(0, n_out, batch)]]
    out, grads = _run(func, *args)

    x, w1_, b1_, w2_, b2_, y = args
    pre = x @ w1_.T + b1_
    hid = np.maximum(pre, 0)
    z = hid @ w2_.T + b2_
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out.numpy(), -np.sum(y * np.log(p)) / batch)
    dz = (p - y) / batch
    dhid = dz @ w2_ * (pre > 0)
    want = [dhid @ w1_, dhid.T @ x, dhid.sum(0), dz.T @ hid, dz.sum(0), -np.log(p) / batch]
    for got, expected in zip(grads, want, strict=True):
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-12)
    check_grad(func, inputs=args, test_inputs=args[:5], atol=1e-5)


def test_nothing_is_computed_twice():
    """The forward dense is computed once; its gradient needs two more (one per argument)."""
    x, y = relay.var("x", shape=(4, 4)), relay.var("y", shape=(4, 4))
    xy = relay.nn.dense(x, y)
    body = relay.sum(relay.TupleGetItem(relay.Tuple([xy, xy]), 0) - relay.sum(xy, keepdims=True))
    back = relay.transform.gradient(relay.Function([x, y], body), mode="first_order")
    assert relay.analysis.list_op_freqs(kiln.IRModule.from_expr(back))["nn.dense"] == 3


def test_exp_gradient_reuses_the_forward_value():
    """``exp``'s gradient names its own result: it reads the let-bound forward value, not a second exp."""
    x = relay.var("x", T)
    back = relay.transform.gradient(relay.Function([x], relay.exp(x)))
    assert relay.analysis.list_op_freqs(kiln.IRModule.from_expr(back))["exp"] == 1


@pytest.mark.parametrize("taken", [True, False])
def test_if_sends_the_adjoint_through_the_branch_taken(taken):
    """``t = x * y; if c { exp(t) * x } else { y * y + t }``: the gradient of each branch, by central differences,
    with a let-bound value of the outer scope read inside the branches."""
    x, y = relay.var("x", T), relay.var("y", T)
    cond = relay.var("c", shape=(), dtype="bool")
    sb = relay.ScopeBuilder()
    t = sb.let("t", x * y)
    sb.ret(relay.If(cond, relay.exp(t) * x, y * y + t))
    func = relay.Function([cond, x, y], sb.get())
    args = [np.array(taken), _rand(3, 4) / 2, _rand(3, 4, seed=1) / 2]
    check_grad(func, inputs=args, test_inputs=args[1:])
    out, (_, gx, gy) = _run(func, *args)
    a, b = args[1:]
    if taken:
        np.testing.assert_allclose(gx.numpy(), np.exp(a * b) * (a * b + 1))
        np.testing.assert_allclose(gy.numpy(), np.exp(a * b) * a * a)
    else:
        np.testing.assert_allclose(gx.numpy(), b)
        np.testing.assert_allclose(gy.numpy(), 2 * b + a)


def test_first_order_gradient_pass():
    x = relay.var("x", T)
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.sum(x * x)))
    out = relay.transform.FirstOrderGradient()(mod)
    data = _rand(3, 4)
    value, (grad,) = relay.create_executor(mod=out).evaluate()(data)
    np.testing.assert_allclose(value.numpy(), np.sum(data * data))
    np.testing.assert_allclose(grad.numpy(), 2 * data)


def test_non_float_values_carry_no_gradient():
    """An integer path (argmax, a cast of it) contributes nothing, and needs no registered gradient."""
    x = relay.var("x", T)
    body = x * relay.cast(relay.argmax(x, axis=1, keepdims=True), "float64")
    data = _rand(3, 4)
    _, (grad,) = _run(relay.Function([x], body), data)
    np.testing.assert_allclose(grad.numpy(), np.broadcast_to(np.argmax(data, 1)[:, None], (3, 4)))


def test_errors_name_the_problem():
    x = relay.var("x", T)
    with pytest.raises(KilnError, match="unknown mode"):
        relay.transform.gradient(relay.Function([x], x), mode="sideways")
    with pytest.raises(KilnError, match="nn.lrn does not have a registered gradient"):
        y = relay.var("y", shape=(1, 4, 2, 2), dtype="float64")
        relay.transform.gradient(relay.Function([y], relay.nn.lrn(y)))
    with pytest.raises(KilnError, match="relay.Function"):
        relay.transform.gradient(x)
    mod = kiln.IRModule()
    loop = relay.GlobalVar("loop")
    mod[loop] = relay.Function([x], loop(x), T)
    z = relay.var("z", T)
    with pytest.raises(KilnError, match="recursive"):
        relay.transform.gradient(relay.Function([z], loop(z)), mod=mod, mode="first_order")
