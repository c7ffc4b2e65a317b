"""AnnotateTarget: regions an external compiler supports are bracketed by compiler_begin/compiler_end, and the
annotated program computes what the original does."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.ir import assert_structural_equal
from kiln.relay.op.annotation import compiler_begin as cb
from kiln.relay.op.annotation import compiler_end as ce
from kiln.relay.testing.temp_op_attr import TempOpAttr


def _mod(body, *params):
    return kiln.IRModule.from_expr(relay.Function(list(params), body))


def _typed(mod):
    return relay.transform.InferType()(mod)


def _run(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()


def test_supported_chain_is_one_target_and_the_rest_default():
    x = relay.var("x", shape=(4, 5))
    before = _mod(relay.abs(relay.nn.relu(x)), x)
    with TempOpAttr("nn.relu", "target.t1", lambda call: True):
        after = relay.transform.AnnotateTarget("t1")(before)
    x2 = relay.var("x", shape=(4, 5))
    relu = relay.nn.relu(cb(x2, "t1"))
    out = relay.abs(cb(ce(relu, "t1"), "default"))
    assert_structural_equal(after, _typed(_mod(ce(out, "default"), x2)))
    data = np.random.uniform(-1, 1, (4, 5)).astype("float32")
    np.testing.assert_allclose(_run(after, data), np.abs(np.maximum(data, 0)))


def test_check_function_sees_types_and_can_refuse():
    x = relay.var("x", shape=(3,), dtype="int32")
    y = relay.var("y", shape=(3,))
    before = _mod(relay.Tuple([relay.nn.relu(x), relay.nn.relu(y)]), x, y)
    with TempOpAttr("nn.relu", "target.floats", lambda call: call.args[0].checked_type.dtype == "float32"):
        after = relay.transform.AnnotateTarget("floats")(before)
    relus = [e for e in _calls(after["main"]) if e.op.name == "nn.relu"]
    assert sorted(r.args[0].attrs.compiler for r in relus) == ["default", "floats"]


def _calls(expr):
    found = []
    relay.post_order_visit(expr, lambda e: found.append(e) if isinstance(e, relay.Call) and
                           isinstance(e.op, kiln.ir.Op) else None)
    return found


def test_two_runs_equal_one_run_with_both_targets_and_results_agree():
    x = relay.var("x", shape=(6,))
    r = relay.nn.relu(x)
    before = _mod(relay.add(relay.abs(r), relay.nn.relu(r)), x)
    with TempOpAttr("nn.relu", "target.A", lambda call: True), TempOpAttr("add", "target.B", lambda call: True):
        twice = relay.transform.AnnotateTarget("B")(relay.transform.AnnotateTarget("A")(before))
        once = relay.transform.AnnotateTarget(["A", "B"])(before)
        again = relay.transform.AnnotateTarget(["A", "B"])(once)
    assert kiln.ir.structural_equal(twice, once)
    assert kiln.ir.structural_equal(again, once)  # idempotent
    data = np.random.uniform(-1, 1, 6).astype("float32")
    np.testing.assert_allclose(_run(once, data), np.abs(np.maximum(data, 0)) + np.maximum(data, 0))


def test_non_call_ops_stay_outside_regions_when_asked():
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(2, 3))
    before = _mod(relay.concatenate([relay.nn.relu(x), relay.nn.relu(y)], 0), x, y)
    with TempOpAttr("nn.relu", "target.t", lambda call: True):
        inside = relay.transform.AnnotateTarget("t", True)(before)
        outside = relay.transform.AnnotateTarget("t", False)(before)
    # concatenate stays in kiln's default region: end(concat(begin(...)))
    tup_in = inside["main"].body.args[0].args[0].args[0].args[0]  # the tuple is a region of its own: begin(end(...))
    tup_out = outside["main"].body.args[0].args[0].args[0]
    assert isinstance(tup_out, relay.Tuple) and all(f.op.name == "annotation.compiler_end" for f in tup_out.fields)
    assert isinstance(tup_in, relay.Tuple) and all(f.op.name == "annotation.compiler_begin" for f in tup_in.fields)
    a, b = (np.random.uniform(-1, 1, (2, 3)).astype("float32") for _ in range(2))
    expect = np.concatenate([np.maximum(a, 0), np.maximum(b, 0)], 0)
    for mod in (inside, outside):
        np.testing.assert_allclose(_run(mod, a, b), expect)


def test_composite_call_goes_to_its_prefix_target():
    p, q = relay.var("p", shape=(3,)), relay.var("q", shape=(3,))
    comp = relay.Function([p, q], relay.nn.relu(relay.add(p, q))).with_attr("Composite", "acc.add_relu")
    a, b = relay.var("a", shape=(3,)), relay.var("b", shape=(3,))
    after = relay.transform.AnnotateTarget("acc")(_mod(relay.Call(comp, [a, b]), a, b))
    body = after["main"].body
    assert body.op.name == "annotation.compiler_end" and body.attrs.compiler == "acc"
    assert [arg.attrs.compiler for arg in body.args[0].args] == ["acc", "acc"]
    assert body.args[0].op.body.args[0].op.name == "add"  # the composite's body is not annotated


def test_bad_target_is_named():
    with pytest.raises(KilnError, match="AnnotateTarget"):
        relay.transform.AnnotateTarget(["ok", 3])
