"""ManifestAlloc (kiln/relay/transform/manifest_alloc.py): the expected dialect program, then the reference
interpreter running it (storage as real shared bytes) against the original function."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.ir import IRModule, assert_structural_equal
from kiln.relay.op import memory, vm
from kiln.relay.op.memory import StorageType
from kiln.relay.testing import assert_same_results, run_opt_pass

FUSE_ANF = [relay.transform.FuseOps(), relay.transform.ToANormalForm()]


def _calls(expr, name):
    found = []
    relay.post_order_visit(expr, lambda e: found.append(e) if isinstance(e, relay.Call)
                           and getattr(e.op, "name", None) == name else None)
    return found


def test_one_kernel_expected():
    x = relay.var("x", shape=(4,))
    before = run_opt_pass(relay.Function([x], relay.exp(x)), FUSE_ANF)
    kernel = before.body.value.op

    def expected():
        s, t = relay.var("storage0", StorageType()), relay.var("tensor1", shape=(4,))
        invoke = vm.invoke_tvm_op(kernel, [x], [t])
        return relay.Function([x], relay.Let(s, memory.alloc_storage(16, 64, dtype_hint="float32"), relay.Let(
            t, memory.alloc_tensor(s, 0, (4,), "float32"), relay.Let(relay.var("_2", relay.TupleType([])), invoke, t))))

    after = run_opt_pass(before, relay.transform.ManifestAlloc())
    assert_structural_equal(after, relay.infer_type(expected()))
    assert_same_results(before, after)


def test_tuple_results_reshapes_and_lets():
    x, w = relay.var("x", shape=(4, 8)), relay.var("w", shape=(16, 8))
    y = relay.nn.relu(relay.nn.dense(x, w))
    parts = relay.split(y, 2, axis=1)
    body = relay.Tuple([relay.reshape(y, (8, 8)), parts[1], relay.sum(parts[0])])
    before = run_opt_pass(relay.Function([x, w], body), [relay.transform.FuseOps(fuse_opt_level=0),
                                                         relay.transform.ToANormalForm()])
    after = run_opt_pass(before, relay.transform.ManifestAlloc())
    split_invoke = [c for c in _calls(after, "vm.invoke_tvm_op") if len(c.args[2].fields) == 2]
    assert len(split_invoke) == 1  # the split writes both of its outputs
    assert len(_calls(after, "vm.reshape_tensor")) == 1  # the reshape is a view: no kernel, no storage
    assert len(_calls(after, "memory.alloc_storage")) == 5
    assert_same_results(before, after)


def test_allocations_stay_in_the_branch_that_needs_them():
    c, x = relay.var("c", shape=(), dtype="bool"), relay.var("x", shape=(3,))
    shared = relay.exp(x)
    func = relay.Function([c, x], relay.If(c, relay.log(shared), relay.negative(shared)))
    before = run_opt_pass(func, FUSE_ANF)
    after = run_opt_pass(before, relay.transform.ManifestAlloc())
    the_if = after.body
    while isinstance(the_if, relay.Let):
        the_if = the_if.body if not isinstance(the_if.value, relay.If) else the_if.value
    for branch in (the_if.true_branch, the_if.false_branch):
        assert len(_calls(branch, "memory.alloc_storage")) == 1 and len(_calls(branch, "vm.invoke_tvm_op")) == 1
    assert len(_calls(after, "memory.alloc_storage")) == 3
    for flag in (True, False):
        inputs = (np.array(flag), np.abs(np.random.default_rng(0).standard_normal(3)).astype("float32"))
        want = relay.create_executor("debug", IRModule.from_expr(before)).evaluate()(*inputs)
        got = relay.create_executor("debug", IRModule.from_expr(after)).evaluate()(*inputs)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_bare_operators_and_lowered_kernels():
    x = relay.var("x", shape=(2, 3))
    func = relay.Function([x], relay.nn.batch_flatten(relay.expand_dims(relay.nn.relu(x), 0)))
    unfused = run_opt_pass(func, relay.transform.ToANormalForm())  # FuseOps not run: bare operators
    after = run_opt_pass(unfused, relay.transform.ManifestAlloc())
    assert len(_calls(after, "vm.invoke_tvm_op")) == 1 and len(_calls(after, "vm.reshape_tensor")) == 2
    assert_same_results(func, after)
    # after LowerTE the kernels are GlobalVars of PrimFuncs; call_lowered records which ones only reshape
    with kiln.target.Target("llvm"):
        mod = relay.transform.ToANormalForm()(relay.transform.FuseOps(fuse_opt_level=0)(
            relay.transform.InferType()(IRModule.from_expr(func))))
        lowered = relay.transform.ManifestAlloc()(kiln.transform.get_pass("LowerTE")(mod))
    invokes = _calls(lowered["main"], "vm.invoke_tvm_op")
    assert [type(c.args[0]) for c in invokes] == [relay.GlobalVar]
    assert isinstance(lowered[invokes[0].args[0]], kiln.tir.PrimFunc)
    assert len(_calls(lowered["main"], "vm.reshape_tensor")) == 2


@pytest.mark.parametrize("fuse_opt_level", [0, 2])
def test_small_cnn_against_the_interpreter(fuse_opt_level):
    data = relay.var("data", shape=(1, 3, 8, 8))
    y = relay.nn.relu(relay.nn.conv2d(data, relay.var("w1", shape=(4, 3, 3, 3)), padding=(1, 1)))
    y = relay.nn.max_pool2d(y, (2, 2), (2, 2))
    y = relay.nn.dense(relay.nn.batch_flatten(y), relay.var("fc", shape=(5, 64)))
    func = relay.Function(relay.analysis.free_vars(y), relay.nn.softmax(y))
    before = run_opt_pass(func, [relay.transform.FuseOps(fuse_opt_level), relay.transform.ToANormalForm()])
    after = run_opt_pass(before, relay.transform.ManifestAlloc())
    assert len(_calls(after, "memory.alloc_storage")) == len(_calls(after, "vm.invoke_tvm_op"))
    assert_same_results(func, after, rtol=1e-5, atol=1e-6)


def test_registered():
    assert kiln.transform.get_pass("ManifestAlloc").info.name == "ManifestAlloc"
