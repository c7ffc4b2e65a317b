"""Match, clauses and patterns: construction checks, visitors and mutators, structural equality."""

import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.ir import Constructor, GlobalTypeVar, IRModule, TypeData, TypeVar, structural_equal, structural_hash
from kiln.relay.adt import pattern_vars


def list_type():
    lst, a = GlobalTypeVar("List"), TypeVar("A")
    cons = Constructor("Cons", [a, lst(a)], lst)
    nil = Constructor("Nil", [], lst)
    TypeData(lst, [a], [cons, nil])
    return lst, cons, nil


def _length_match(cons, nil, data):
    rest = relay.Var("rest")
    return relay.Match(data, [
        relay.Clause(relay.PatternConstructor(cons, [relay.PatternWildcard(), relay.PatternVar(rest)]),
                     relay.add(relay.const(1), relay.const(1))),
        relay.Clause(relay.PatternConstructor(nil), relay.const(0)),
    ])


def test_construction_is_checked():
    with pytest.raises(KilnError, match="needs a Constructor"):
        relay.PatternConstructor(relay.var("c"))
    with pytest.raises(KilnError, match="binds a Var"):
        relay.PatternVar(relay.const(1))
    with pytest.raises(KilnError, match="must be a pattern"):
        relay.PatternTuple([relay.var("x")])
    with pytest.raises(KilnError, match="must be Clauses"):
        relay.Match(relay.var("x"), [relay.const(1)])
    with pytest.raises(KilnError, match="right-hand side"):
        relay.Clause(relay.PatternWildcard(), "not an expression")


def test_pattern_vars_in_order():
    _, cons, _ = list_type()
    x, y, z = relay.Var("x"), relay.Var("y"), relay.Var("z")
    pattern = relay.PatternTuple([relay.PatternVar(x), relay.PatternConstructor(cons, [relay.PatternVar(y),
                                                                                        relay.PatternVar(z)])])
    assert pattern_vars(pattern) == [x, y, z]


def test_match_structural_equality_maps_pattern_variables():
    _, cons, nil = list_type()
    data = cons(relay.const(1), nil())
    one, two = _length_match(cons, nil, data), _length_match(cons, nil, data)
    assert structural_equal(one, two) and structural_hash(one) == structural_hash(two)
    partial = relay.Match(data, one.clauses, complete=False)
    assert not structural_equal(one, partial)
    swapped = relay.Match(data, one.clauses[::-1])
    assert not structural_equal(one, swapped)
    # the right-hand side may use the pattern's variable: bound alike on both sides
    a, b = relay.Var("a"), relay.Var("b")
    ca = relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(a), relay.PatternWildcard()]), a)
    cb = relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(b), relay.PatternWildcard()]), b)
    assert structural_equal(relay.Match(data, [ca]), relay.Match(data, [cb]))
    cfree = relay.Clause(relay.PatternConstructor(cons, [relay.PatternWildcard(), relay.PatternVar(b)]), a)
    assert not structural_equal(relay.Match(data, [ca]), relay.Match(data, [cfree]))


def test_refs_are_expressions():
    r = relay.RefCreate(relay.const(1.0))
    w = relay.RefWrite(r, relay.const(2.0))
    assert structural_equal(relay.RefRead(r), relay.RefRead(relay.RefCreate(relay.const(1.0))))
    assert not structural_equal(w, relay.RefWrite(r, relay.const(3.0)))
    with pytest.raises(KilnError, match="RefCreate value"):
        relay.RefCreate(3)


def test_call_type_arguments_compare_between_function_calls_only():
    f = relay.Var("f")
    t1, t2 = relay.TensorType((1,)), relay.TensorType((2,))
    assert structural_equal(relay.Call(f, [], None, [t1]), relay.Call(f, [], None, [t1]))
    assert not structural_equal(relay.Call(f, [], None, [t1]), relay.Call(f, [], None, [t2]))
    assert not structural_equal(relay.Call(f, [], None, [t1]), relay.Call(f, []))
    # an operator's type arguments are its argument types: never compared
    add = relay.op.get("add")
    x = relay.var("x", shape=(1,))
    assert structural_equal(relay.Call(add, [x, x], None, [t1, t1]), relay.Call(add, [x, x]))


def test_visitors_and_mutators_walk_matches_and_refs():
    _, cons, nil = list_type()
    x = relay.var("x", "int32")
    match = _length_match(cons, nil, cons(x, nil()))
    expr = relay.Tuple([match, relay.RefRead(relay.RefCreate(x))])
    seen = []
    relay.analysis.post_order_visit(expr, lambda e: seen.append(type(e).__name__))
    assert {"Match", "Constructor", "RefRead", "RefCreate", "Var"} <= set(seen)
    assert relay.analysis.free_vars(expr) == [x]

    class ToTwo(relay.ExprMutator):
        def visit_constant(self, const):
            return relay.const(2) if int(const.data.numpy()) == 1 else const

    out = ToTwo().visit(expr)
    assert int(out.fields[0].clauses[0].rhs.args[0].data.numpy()) == 2
    assert out.fields[0].clauses[1] is match.clauses[1]  # unchanged parts keep their identity
    assert ToTwo().visit(relay.Tuple([relay.const(3)])).fields[0].data.numpy() == 3


def test_module_from_expr_keeps_type_definitions():
    lst, cons, nil = list_type()
    data = cons._type_data
    mod = IRModule.from_expr(cons(relay.const(1), nil()), type_defs={lst: data})
    assert mod.get_type("List")[1] is cons
