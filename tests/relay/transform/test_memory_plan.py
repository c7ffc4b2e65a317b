"""MemoryPlan (kiln/relay/transform/memory_plan.py): which tensors share storage, then the reference interpreter
(where tensors of one storage really share bytes, so a bad plan changes the results) against the original."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.ir import IRModule
from kiln.relay.testing import assert_same_results, run_opt_pass

PIPELINE = [relay.transform.FuseOps(fuse_opt_level=0), relay.transform.ToANormalForm(),
            relay.transform.ManifestAlloc()]


def _allocations(func):
    """``(storage sizes, [(storage var name, offset, shape)] of each alloc_tensor)`` of the function body's scope."""
    sizes, tensors = {}, []
    expr = func.body
    while isinstance(expr, relay.Let):
        value = expr.value
        if isinstance(value, relay.Call) and getattr(value.op, "name", "") == "memory.alloc_storage":
            sizes[expr.var] = int(value.args[0].data.numpy())
        if isinstance(value, relay.Call) and getattr(value.op, "name", "") == "memory.alloc_tensor":
            tensors.append((value.args[0], int(value.args[1].data.numpy()), value.attrs.const_shape))
        expr = expr.body
    return sizes, tensors


def _plan(func):
    before = run_opt_pass(func, PIPELINE)
    after = run_opt_pass(before, relay.transform.MemoryPlan())
    assert_same_results(func, after, rtol=1e-5, atol=1e-6)
    return before, after


def test_a_chain_alternates_between_two_blocks():
    x = relay.var("x", shape=(64,))
    y = x
    for op in (relay.exp, relay.negative, relay.sigmoid, relay.tanh, relay.exp):
        y = op(y)
    _, after = _plan(relay.Function([x], y))
    sizes, tensors = _allocations(after)
    region = tensors[0][0]
    assert sizes[region] == 2 * 256  # two blocks of 64 floats, used in turn
    assert [(t[0] is region, t[1]) for t in tensors] == [(True, 0), (True, 256), (True, 0), (True, 256), (False, 0)]


def test_kernels_never_write_a_block_they_read():
    x = relay.var("x", shape=(16,))
    a = relay.exp(x)
    b = relay.negative(a)  # a dies here: b must still not take a's block
    c = relay.log(relay.abs(b))
    _, after = _plan(relay.Function([x], c))
    _, tensors = _allocations(after)
    offsets = [t[1] for t in tensors[:3]]
    assert offsets[0] != offsets[1] and offsets[1] != offsets[2]


def _holder(kind, a, x, c):
    """A value holding the tensor ``a``, and the way to read ``a`` back from it."""
    if kind == "tuple":
        return relay.Tuple([x, a]), lambda h: relay.TupleGetItem(h, 1)
    if kind == "view":
        return relay.reshape(a, (16,)), lambda h: relay.reshape(h, (4, 4))
    if kind == "if":
        return relay.If(c, a, x), lambda h: h
    y = relay.var("y", shape=(4, 4))
    return relay.Function([y], y + a), lambda h: relay.Call(h, [x])  # a closure capturing a


@pytest.mark.parametrize("kind", ["tuple", "view", "if", "closure"])
def test_values_that_may_hold_a_tensor_keep_it_alive(kind):
    """``a`` is read back through a value holding it after several allocations of its size: were the holder not
    tracked, one of them would reuse ``a``'s block and the result would change."""
    x, c = relay.var("x", shape=(4, 4)), relay.var("c", shape=(), dtype="bool")
    a, held, later = relay.var("a"), relay.var("held"), relay.var("later")
    holder, read_back = _holder(kind, a, x, c)
    body = relay.Let(a, relay.exp(x), relay.Let(held, holder, relay.Let(
        later, relay.tanh(relay.sigmoid(relay.negative(x))), read_back(held) * later)))
    func = relay.Function([c, x], body)
    _, after = _plan(func)
    sizes, tensors = _allocations(after)
    assert len(sizes) < len(tensors)  # the plan did share storage
    for flag in (True, False):
        inputs = (np.array(flag), np.random.default_rng(3).standard_normal((4, 4)).astype("float32"))
        want = relay.create_executor("debug", IRModule.from_expr(func)).evaluate()(*inputs)
        got = relay.create_executor("debug", IRModule.from_expr(after)).evaluate()(*inputs)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_small_tensors_do_not_pin_large_blocks():
    x = relay.var("x", shape=(1024,))
    big = relay.exp(x)
    small = relay.sum(relay.negative(big), keepdims=True)  # 4 bytes after a 4 KiB block was freed
    _, after = _plan(relay.Function([x], relay.exp(small) + relay.const(1.0)))
    _, tensors = _allocations(after)
    assert [t[1] for t in tensors[:3]] == [0, 4096, 8192]  # the small sum did not take the freed 4 KiB block


def test_the_interpreter_catches_a_plan_that_overlaps_live_tensors():
    """The oracle works: put two live tensors at one offset and the results change."""
    x = relay.var("x", shape=(8,))
    a, b = relay.exp(x), relay.negative(x)
    func = relay.Function([x], relay.exp(a * b))
    _, planned = _plan(func)

    class _Overlap(relay.ExprMutator):
        def visit_call(self, call):
            call = super().visit_call(call)
            if getattr(call.op, "name", "") == "memory.alloc_tensor":
                return relay.Call(call.op, (call.args[0], relay.const(0, "int64"), call.args[2]), call.attrs)
            return call

    broken = relay.infer_type(_Overlap().visit(planned))
    with pytest.raises(AssertionError, match="different results"):
        assert_same_results(func, broken)


@pytest.mark.parametrize("fuse", [True, False])
def test_models_against_the_interpreter(fuse):
    from kiln.relay.testing import resnet

    mod, params = resnet.get_workload(num_layers=8, image_shape=(3, 8, 8), num_classes=4)
    func = relay.bind_params_by_name(mod["main"], params)
    passes = [relay.transform.FuseOps(fuse_opt_level=2 if fuse else 0), relay.transform.ToANormalForm(),
              relay.transform.ManifestAlloc(), relay.transform.MemoryPlan()]
    after = run_opt_pass(func, passes)
    sizes, tensors = _allocations(after)
    assert len(sizes) < len(tensors) / 2  # most tensors share the planned region
    assert_same_results(func, after, rtol=1e-4, atol=1e-5)


def test_registered():
    assert kiln.transform.get_pass("MemoryPlan").info.name == "MemoryPlan"
