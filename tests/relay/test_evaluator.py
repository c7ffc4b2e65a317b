"""The evaluator's data types, pattern matching and references, against values computed by hand."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError, RuntimeArgumentError
from kiln.ir import IRModule
from kiln.relay.backend.interpreter import ConstructorValue, RefValue
from kiln.relay.evaluator import ConstructorFunction, bind_pattern, make_value
from kiln.relay.prelude import Prelude
from kiln.runtime.container import tuple_object


def _to_list(value, cons):
    out = []
    while value.tag == cons.tag:
        out.append(value.fields[0].numpy().item())
        value = value.fields[1]
    return out


def _make_list(p, values, dtype="int32"):
    expr = p.nil()
    for v in reversed(values):
        expr = p.cons(relay.const(v, dtype), expr)
    return expr


def test_constructor_values_and_patterns():
    p = Prelude()
    one = make_value(p.cons, [np.array(1), make_value(p.nil, [])])
    assert one.tag == p.cons.tag and one.constructor is p.cons
    with pytest.raises(KilnError, match="Cons takes 2 fields, got 1"):
        make_value(p.cons, [np.array(1)])
    h, t = relay.Var("h"), relay.Var("t")
    pattern = relay.PatternConstructor(p.cons, [relay.PatternVar(h), relay.PatternVar(t)])
    bindings = {}
    assert bind_pattern(pattern, one, bindings) and bindings[h] == 1 and bindings[t].tag == p.nil.tag
    assert not bind_pattern(relay.PatternConstructor(p.nil), one, {})
    assert bind_pattern(relay.PatternTuple([relay.PatternWildcard(), relay.PatternVar(h)]), (1, 2), bindings)
    assert bindings[h] == 2


def test_match_picks_the_first_fitting_clause():
    p = Prelude()
    xs = relay.var("xs", p.l(relay.scalar_type("int32")))
    h, t, h2 = relay.Var("h"), relay.Var("t"), relay.Var("h2")
    # sum of the first two elements, or of the first, or 0
    match = relay.Match(xs, [
        relay.Clause(relay.PatternConstructor(p.cons, [relay.PatternVar(h), relay.PatternConstructor(
            p.cons, [relay.PatternVar(h2), relay.PatternWildcard()])]), h + h2),
        relay.Clause(relay.PatternConstructor(p.cons, [relay.PatternVar(t), relay.PatternWildcard()]), t),
        relay.Clause(relay.PatternWildcard(), relay.const(0)),
    ])
    p.mod["first_two"] = relay.Function([xs], match)
    run = relay.create_executor(mod=p.mod).evaluate(p.mod.get_global_var("first_two"))
    for values, expected in (([5, 7, 9], 12), ([5], 5), ([], 0)):
        arg = ConstructorValue(p.nil.tag, [], p.nil)
        for v in reversed(values):
            arg = ConstructorValue(p.cons.tag, [kiln.nd.array(np.array(v, "int32")), arg], p.cons)
        assert run(arg).numpy().item() == expected


def test_partial_match_fails_at_run_time():
    p = Prelude()
    ex = relay.create_executor(mod=p.mod)
    empty = relay.var("empty", p.l(relay.scalar_type("int32")))
    with pytest.raises(KilnError, match="match failed: no clause handles a value made by Nil"):
        ex.evaluate(relay.Let(empty, p.nil(), relay.Call(p.hd, [empty])))


def test_references_are_mutable_cells():
    i, iv, u, uv = relay.Var("i"), relay.Var("iv"), relay.Var("u"), relay.Var("uv")
    body = relay.add(iv, uv)
    body = relay.Let(uv, relay.RefRead(i), body)
    body = relay.Let(u, relay.RefWrite(i, relay.const(2)), body)
    body = relay.Let(iv, relay.RefRead(i), body)
    body = relay.Let(i, relay.RefCreate(relay.const(1)), body)
    assert relay.create_executor().evaluate(body).numpy().item() == 3  # read 1, write 2, read 2
    cell = relay.var("cell", relay.RefType(relay.scalar_type("float32")))
    f = relay.create_executor().evaluate(relay.Function([cell], relay.RefRead(cell)))
    assert f(RefValue(kiln.nd.array(np.array(2.5, "float32")))).numpy() == 2.5
    with pytest.raises(RuntimeArgumentError, match="expects a reference"):
        f(np.array(2.5, "float32"))


def test_values_cross_the_python_boundary():
    p = Prelude()
    ident = relay.create_executor(mod=p.mod).evaluate(p.id)
    nil_value = ConstructorValue(p.nil.tag, [], p.nil)
    cons_value = ConstructorValue(p.cons.tag, [kiln.nd.array(np.arange(3, dtype="float32")), nil_value], p.cons)
    out = ident(cons_value)
    assert isinstance(out, ConstructorValue) and out.tag == p.cons.tag
    np.testing.assert_array_equal(out.fields[0].numpy(), np.arange(3, dtype="float32"))
    assert out.fields[1].tag == p.nil.tag and out.fields[1].fields == []
    ref = ident(RefValue(kiln.nd.array(np.ones(2, "float32"))))
    np.testing.assert_array_equal(ref.value.numpy(), np.ones(2))
    pair = ident(tuple_object([kiln.nd.array(np.array(1.0, "float32")), kiln.nd.array(np.array(2.0, "float32"))]))
    assert [v.numpy().item() for v in pair] == [1.0, 2.0]
    length = relay.create_executor(mod=p.mod).evaluate(p.length)
    with pytest.raises(RuntimeArgumentError, match="expects a value of data type List"):
        length(np.ones(3))


def test_unapplied_constructor_is_a_function_value():
    p = Prelude()
    x, xs = relay.var("x", "int32"), relay.var("xs", p.l(relay.scalar_type("int32")))
    f = relay.Var("f")
    body = relay.Let(f, p.cons, relay.Call(f, [x, xs]))  # Cons passed around as a function
    mod = IRModule(p.mod.functions, p.mod.type_definitions)
    mod["main"] = relay.Function([x, xs], body)
    ex = relay.create_executor(mod=mod)
    out = ex.evaluate()(np.array(4, "int32"), ex.evaluate(_make_list(p, [5])))
    assert _to_list(out, p.cons) == [4, 5]
    a = relay.TypeVar("a")
    returned = relay.Function([], p.cons, relay.FuncType([a, p.l(a)], p.l(a)), [a])
    assert isinstance(relay.create_executor(mod=mod).evaluate(returned)(), ConstructorFunction)
