"""unmatched_cases: which values a match leaves unhandled."""

from kiln import relay
from kiln.ir import Constructor, GlobalTypeVar, TypeData, TypeVar
from kiln.relay.analysis import unmatched_cases
from kiln.relay.analysis.match_exhaustion import pattern_text

W = relay.PatternWildcard


def list_type():
    lst, a = GlobalTypeVar("List"), TypeVar("A")
    cons, nil = Constructor("Cons", [a, lst(a)], lst), Constructor("Nil", [], lst)
    TypeData(lst, [a], [cons, nil])
    return lst, cons, nil


def _match(*patterns):
    return relay.Match(relay.var("x"), [relay.Clause(p, relay.const(0)) for p in patterns], complete=False)


def _left(*patterns):
    return sorted(pattern_text(p) for p in unmatched_cases(_match(*patterns)))


def test_constructor_cases():
    _, cons, nil = list_type()
    assert _left() == ["_"]
    assert _left(W()) == []
    assert _left(relay.PatternVar(relay.var("y"))) == []
    assert _left(relay.PatternConstructor(nil)) == ["Cons(_, _)"]
    assert _left(relay.PatternConstructor(cons, [W(), W()])) == ["Nil"]
    assert _left(relay.PatternConstructor(cons, [W(), W()]), relay.PatternConstructor(nil)) == []


def test_nested_patterns_split_only_as_deep_as_needed():
    _, cons, nil = list_type()
    one = relay.PatternConstructor(cons, [W(), relay.PatternConstructor(nil)])  # exactly one element
    assert _left(one) == ["Cons(_, Cons(_, _))", "Nil"]
    two_or_more = relay.PatternConstructor(cons, [W(), relay.PatternConstructor(cons, [W(), W()])])
    assert _left(one, two_or_more) == ["Nil"]
    assert _left(one, two_or_more, relay.PatternConstructor(nil)) == []


def test_tuple_patterns():
    _, cons, nil = list_type()
    both_cons = relay.PatternTuple([relay.PatternConstructor(cons, [W(), W()]),
                                    relay.PatternConstructor(cons, [W(), W()])])
    # what escapes a tuple pattern: a value escaping one field's pattern (the cases may overlap)
    assert _left(both_cons) == ["(Nil, _)", "(_, Nil)"]
    assert _left(both_cons, W()) == []
    first_nil = relay.PatternTuple([relay.PatternConstructor(nil), W()])
    second_nil = relay.PatternTuple([W(), relay.PatternConstructor(nil)])
    assert _left(both_cons, first_nil, second_nil) == []
