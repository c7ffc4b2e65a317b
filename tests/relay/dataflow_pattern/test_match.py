"""relay.dataflow_pattern matching: every pattern kind, shared pattern nodes, alternatives that backtrack,
commutative calls, attributes, types, and dominator patterns."""

import numpy as np
import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.relay.dataflow_pattern import (
    DFPatternMatcher,
    has_attr,
    has_dtype,
    has_shape,
    has_type,
    is_constant,
    is_expr,
    is_if,
    is_let,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    wildcard,
)
from kiln.relay.dataflow_pattern.patterns import CallPattern, FunctionPattern

X = relay.var("x", shape=(2, 3))
Y = relay.var("y", shape=(2, 3))
C = relay.const(np.ones((2, 3), "float32"))


def test_leaves():
    assert wildcard().match(X) and wildcard().match(relay.op.get("add"))
    assert is_var().match(X) and is_var("x").match(X) and not is_var("y").match(X) and not is_var().match(C)
    assert is_constant().match(C) and not is_constant().match(X)
    assert is_expr(X).match(X) and not is_expr(X).match(Y)
    assert is_expr(relay.const(1.0)).match(relay.const(1.0))  # structurally
    assert is_op("add").match(relay.op.get("add")) and not is_op("add").match(relay.op.get("subtract"))


def test_calls_tuples_and_shared_nodes():
    pattern = is_op("nn.relu")(is_op("add")(wildcard(), is_constant()))
    assert pattern.match(relay.nn.relu(X + C)) and pattern.match(relay.nn.relu(C + X))  # add commutes
    assert not pattern.match(relay.nn.relu(X + Y)) and not pattern.match(relay.nn.relu(X - C))
    assert not is_op("subtract")(wildcard(), is_constant()).match(C - X)  # subtract does not
    same = wildcard()
    assert is_op("add")(same, same).match(X + X) and not is_op("add")(same, same).match(X + Y)
    assert (wildcard() * wildcard()).match(X * Y) and (wildcard() / wildcard()).match(X / Y)
    assert CallPattern(is_op("nn.relu"), None).match(relay.nn.relu(X))  # a call with any arguments
    tup = relay.Tuple([X, Y])
    assert is_tuple([wildcard(), is_var("y")]).match(tup) and is_tuple(None).match(tup)
    assert not is_tuple([wildcard()]).match(tup)
    item = relay.TupleGetItem(tup, 1)
    assert is_tuple_get_item(wildcard(), 1).match(item) and not is_tuple_get_item(wildcard(), 0).match(item)
    assert is_tuple_get_item(wildcard()).match(item)


def test_alternatives_backtrack_what_they_matched():
    a = wildcard()
    # the left branch binds ``a`` to X before failing; the right branch must be free to bind it to Y
    pattern = is_op("add")(is_op("exp")(a), is_constant()) | is_op("add")(is_op("exp")(X), a)
    assert pattern.match(relay.exp(X) + Y)
    opt = is_op("nn.conv2d")(wildcard(), wildcard()).optional(lambda p: is_op("nn.relu")(p))
    data, w = relay.var("d", shape=(1, 1, 4, 4)), relay.var("w", shape=(1, 1, 3, 3))
    assert opt.match(relay.nn.conv2d(data, w)) and opt.match(relay.nn.relu(relay.nn.conv2d(data, w)))


def test_attributes_types_shapes():
    conv = relay.nn.conv2d(relay.var("d", shape=(1, 2, 5, 5)), relay.var("w", shape=(4, 2, 3, 3)), kernel_size=(3, 3),
                           channels=4)
    assert is_op("nn.conv2d")(wildcard(), wildcard()).has_attr({"kernel_size": [3, 3], "channels": 4}).match(conv)
    assert not is_op("nn.conv2d")(wildcard(), wildcard()).has_attr({"kernel_size": [1, 1]}).match(conv)
    assert not is_op("nn.conv2d")(wildcard(), wildcard()).has_attr({"no_such": 1}).match(conv)
    assert has_attr({"TOpPattern": 0}).match(relay.op.get("nn.relu"))  # operator attributes (ELEMWISE)
    func = relay.Function([X], X).with_attr("Composite", "x")
    assert FunctionPattern(None, wildcard()).has_attr({"Composite": "x"}).match(func)
    assert has_type(relay.TensorType((2, 3), "float32")).match(X) and has_dtype("float32").match(X + Y)
    assert has_shape((2, 3)).match(X) and not has_shape((3, 2)).match(X) and not has_dtype("int8").match(X)
    with pytest.raises(KilnError, match="given as a dict"):
        wildcard().has_attr([("a", 1)])


def test_control_flow_and_functions():
    cond = relay.var("c", shape=(), dtype="bool")
    assert is_if(is_var("c"), wildcard(), wildcard()).match(relay.If(cond, X, Y))
    v = relay.var("v")
    assert is_let(wildcard(), is_op("exp")(wildcard()), wildcard()).match(relay.Let(v, relay.exp(X), v))
    func = relay.Function([X, Y], X + Y)
    assert FunctionPattern([wildcard(), wildcard()], is_op("add")(wildcard(), wildcard())).match(func)
    assert not FunctionPattern([wildcard()], wildcard()).match(func)


def _diamond():
    a = relay.var("a", shape=(4,))
    e = relay.exp(a)
    return a, e, relay.nn.relu(relay.add(relay.negative(e), relay.sqrt(e)))


def test_dominator_patterns():
    a, e, out = _diamond()
    pattern = is_op("nn.relu")(wildcard()).dominates(is_op("exp")(wildcard()), wildcard())
    assert pattern.match(out)
    assert is_op("nn.relu")(wildcard()).dominates(is_op("exp")(wildcard()), is_op("negative")(wildcard()) |
                                                  is_op("sqrt")(wildcard()) | is_op("add")(wildcard(), wildcard())
                                                  ).match(out)
    assert not is_op("nn.relu")(wildcard()).dominates(is_op("exp")(wildcard()), is_op("sqrt")(wildcard())).match(out)
    leak = relay.Tuple([out, e])  # exp's value also leaves through the tuple: relu no longer dominates it
    assert not DFPatternMatcher(leak).match(pattern, out)
