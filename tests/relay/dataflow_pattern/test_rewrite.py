"""relay.dataflow_pattern rewriting and partitioning: callbacks to a fixpoint, node maps, typed callbacks, groups
that may not overlap or leak values, partition labels and attributes; results checked by evaluation."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.relay.dataflow_pattern import DFPatternCallback, is_constant, is_op, partition, rewrite, wildcard

X = relay.var("x", shape=(2, 3))
Y = relay.var("y", shape=(2, 3))


def _run(expr, *args):
    func = relay.Function(relay.analysis.free_vars(expr), expr)
    return relay.create_executor("debug", mod=kiln.IRModule.from_expr(func)).evaluate()(*args).numpy()


class AddSelfToDouble(DFPatternCallback):
    """x + x -> x * 2."""

    def __init__(self):
        super().__init__()
        self.x = wildcard()
        self.pattern = is_op("add")(self.x, self.x)

    def callback(self, pre, post, node_map):
        return relay.multiply(node_map[self.x][0], relay.const(2.0))


class DropZeroAdd(DFPatternCallback):
    """x + 0 -> x (repeatedly: a chain of them collapses)."""

    def __init__(self, rewrite_once=False):
        super().__init__(rewrite_once=rewrite_once)
        self.x, self.zero = wildcard(), is_constant()
        self.pattern = is_op("add")(self.x, self.zero)

    def callback(self, pre, post, node_map):
        if np.any(node_map[self.zero][0].data.numpy() != 0):
            return post
        return node_map[self.x][0]


def test_rewrite_replaces_every_match_and_keeps_values():
    expr = relay.nn.relu(X + X) + relay.exp(Y + Y)
    out = rewrite(AddSelfToDouble(), expr)
    ops = []
    relay.analysis.post_order_visit(out, lambda e: ops.append(e.op.name) if isinstance(e, relay.Call) else None)
    assert ops.count("multiply") == 2 and ops.count("add") == 1
    x, y = np.random.default_rng(0).standard_normal((2, 2, 3)).astype("float32")
    np.testing.assert_allclose(_run(out, x, y), _run(expr, x, y), rtol=1e-6)


def test_fixpoint_and_rewrite_once():
    zero = relay.const(0.0)
    expr = relay.exp(((X + zero) + zero) + zero)
    assert isinstance(rewrite(DropZeroAdd(), expr).args[0], relay.Var)
    kept = relay.exp(X + relay.const(1.0))
    assert kiln.ir.structural_equal(rewrite(DropZeroAdd(), kept), kept)

    class Grow(DFPatternCallback):
        """exp(x) -> exp(-x): every round makes a new match, so only rewrite_once stops it early."""

        def __init__(self, rewrite_once):
            super().__init__(rewrite_once=rewrite_once)
            self.x = wildcard()
            self.pattern = is_op("exp")(self.x)
            self.calls = 0

        def callback(self, pre, post, node_map):
            self.calls += 1
            return relay.exp(relay.negative(node_map[self.x][0]))

    once = Grow(rewrite_once=True)
    out = rewrite(once, relay.exp(X))
    assert once.calls == 1 and out.args[0].op.name == "negative" and isinstance(out.args[0].args[0], relay.Var)
    bounded = Grow(rewrite_once=False)
    rewrite(bounded, relay.exp(X))
    assert bounded.calls == 100  # no fixpoint: stopped after TVM's 100 rounds


def test_typed_callbacks_and_errors():
    class FoldCastOfSameDtype(DFPatternCallback):
        def __init__(self):
            super().__init__(require_type=True)
            self.x = wildcard()
            self.pattern = is_op("cast")(self.x)

        def callback(self, pre, post, node_map):
            x = node_map[self.x][0]
            return x if x.checked_type.dtype == pre.attrs.dtype else post

    out = rewrite(FoldCastOfSameDtype(), relay.cast(relay.cast(X, "float32"), "float16"))
    assert out.attrs.dtype == "float16" and isinstance(out.args[0], relay.Var)

    class NoPattern(DFPatternCallback):
        pass

    with pytest.raises(KilnError, match="has no pattern"):
        rewrite(NoPattern(), X)


def test_partition_groups_labels_and_checks():
    pattern = is_op("nn.relu")(is_op("add")(wildcard(), wildcard()))
    expr = relay.nn.relu(X + Y) * relay.nn.relu(Y + Y)
    out = partition(pattern, expr, attrs={"Composite": "add_relu"})
    calls = [c for c in (out.args[0], out.args[1])]
    for call in calls:
        assert isinstance(call.op, relay.Function)
        assert call.op.attrs["PartitionedFromPattern"] == "add_nn.relu_" and call.op.attrs["Composite"] == "add_relu"
    assert len(calls[0].args) == 2 and len(calls[1].args) == 1  # the shared input is one parameter
    x, y = np.random.default_rng(1).standard_normal((2, 2, 3)).astype("float32")
    np.testing.assert_allclose(_run(out, x, y), _run(expr, x, y), rtol=1e-6)
    unchanged = partition(pattern, expr, check=lambda root: False)
    assert kiln.ir.structural_equal(unchanged, expr)


def test_partition_refuses_groups_whose_inner_values_escape():
    inner = X + Y
    expr = relay.Tuple([relay.nn.relu(inner), inner])  # the add is used outside the relu group
    out = partition(is_op("nn.relu")(is_op("add")(wildcard(), wildcard())), expr)
    assert kiln.ir.structural_equal(out, expr)
    ok = partition(is_op("nn.relu")(wildcard()), expr)
    assert isinstance(ok.fields[0].op, relay.Function) and ok.fields[0].op.attrs["PartitionedFromPattern"] == \
        "nn.relu_"
