import numpy as np

import kiln
from kiln import relay
from kiln.ir import assert_structural_equal
from kiln.relay.testing import assert_same_results, run_opt_pass

PE = relay.transform.PartialEvaluate


def _pe_dce(expr, mod=None):
    passes = [PE(), relay.transform.DeadCodeElimination(inline_once=True, ignore_impurity=True)]
    if mod is None:
        return run_opt_pass(expr, passes)
    mod["main"] = expr
    return relay.transform.InferType()(kiln.transform.Sequential(passes)(relay.transform.InferType()(mod)))["main"]


def test_known_arguments_are_inlined_and_evaluated():
    d = relay.var("d", shape=(), dtype="float32")
    double = relay.Function([d], relay.multiply(d, relay.const(3.0)))
    after = _pe_dce(relay.add(double(relay.const(4.0)), relay.const(1.0)))
    assert_structural_equal(after, relay.const(13.0))


def test_recursion_unrolls_while_a_counter_shrinks():
    n = relay.var("n", shape=(), dtype="int32")
    fact = relay.var("fact")
    body = relay.If(relay.less_equal(n, relay.const(1)), relay.const(1),
                    relay.multiply(n, fact(relay.subtract(n, relay.const(1)))))
    after = _pe_dce(relay.Let(fact, relay.Function([n], body), fact(relay.const(6))))
    assert_structural_equal(after, relay.const(720))


def test_recursion_on_unknown_values_terminates_and_keeps_the_results():
    n = relay.var("n", shape=(), dtype="int32")
    k = relay.var("k", shape=(), dtype="int32")
    total = relay.var("total")
    body = relay.If(relay.less_equal(n, relay.const(0)), relay.const(0),
                    relay.add(n, total(relay.subtract(n, relay.const(1)))))
    before = relay.Function([k], relay.Let(total, relay.Function([n], body), total(k)))
    after = run_opt_pass(before, PE())
    for value in (0, 1, 7):
        want = relay.create_executor().evaluate(before)(np.int32(value)).numpy()
        got = relay.create_executor().evaluate(after)(np.int32(value)).numpy()
        assert int(got) == int(want) == value * (value + 1) // 2


def test_reference_reads_after_known_writes_are_resolved():
    x = relay.var("x", shape=(2,))
    r = relay.var("r")
    body = relay.Let(r, relay.RefCreate(x),
                     relay.Let(relay.var("_"), relay.RefWrite(r, relay.add(relay.RefRead(r), relay.RefRead(r))),
                               relay.RefRead(r)))
    after = _pe_dce(relay.Function([x], body))
    assert_structural_equal(after, relay.infer_type(relay.Function([x], relay.add(x, x))), map_free_vars=True)


def test_an_unknown_branch_forgets_what_the_references_held():
    c = relay.var("c", shape=(), dtype="bool")
    r, u = relay.var("r"), relay.var("u")
    bump = relay.Function([], relay.RefWrite(r, relay.add(relay.RefRead(r), relay.const(5))))
    body = relay.Let(r, relay.RefCreate(relay.const(1)), relay.Let(
        u, bump, relay.Let(relay.var("e"), relay.If(c, u(), relay.Tuple([])), relay.RefRead(r))))
    before = relay.Function([c], body)
    after = run_opt_pass(before, PE())
    for flag in (True, False):
        got = relay.create_executor().evaluate(after)(np.bool_(flag)).numpy()
        assert int(got) == (6 if flag else 1)


def test_match_on_a_known_constructor_takes_its_clause():
    mod = kiln.IRModule()
    prelude = relay.prelude.Prelude(mod)
    _, cons, nil = prelude.mod.get_type("List")
    hd = prelude.mod.get_global_var("hd")
    x = relay.var("x", shape=(3,))
    after = _pe_dce(relay.Function([x], hd(cons(x, nil()))), mod)
    assert isinstance(after.body, relay.Var) and after.body.vid == after.params[0].vid


def test_unknown_inputs_keep_their_values():
    x, y = relay.var("x", shape=(3, 4)), relay.var("y", shape=(3, 4))
    f = relay.var("f")
    a = relay.var("a", shape=(3, 4))
    square = relay.Function([a], relay.multiply(a, a))
    body = relay.Let(f, square, relay.add(f(x), relay.TupleGetItem(relay.Tuple([y, f(y)]), 1)))
    before = relay.Function([x, y], body)
    assert_same_results(before, _pe_dce(before))


def test_shared_subexpressions_are_evaluated_once():
    x = relay.var("x", shape=(2,))
    shared = relay.exp(x)
    before = relay.Function([x], relay.add(shared, shared))
    after = _pe_dce(before)
    calls = []
    relay.analysis.post_order_visit(after, lambda e: calls.append(e.op.name) if isinstance(e, relay.Call) else None)
    assert calls.count("exp") == 1
    assert_same_results(before, after)


def test_registered_under_its_name():
    assert isinstance(kiln.transform.get_pass("PartialEval"), PE) and PE().info.name == "PartialEval"
