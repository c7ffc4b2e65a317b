from kiln import relay
from kiln.relay.analysis import all_vars, bound_vars, free_vars, well_formed, well_formed_error


def test_free_and_bound_vars():
    x, y, z = (relay.var(n, shape=(2,)) for n in "xyz")
    f = relay.Function([x], relay.add(x, y))
    assert free_vars(f) == [y]
    assert bound_vars(f) == [x]
    assert set(all_vars(f)) == {x, y}
    let = relay.Let(z, relay.exp(y), relay.add(z, x))
    assert free_vars(let) == [y, x]


def test_binders_come_before_what_they_bind():
    # a depth-first walk: a function's parameters, then the let variables of its body, in the order they bind
    x, y, z, a, b = (relay.var(n) for n in "xyzab")
    inner = relay.Let(b, a, relay.Tuple([b, z]))
    f = relay.Function([x, y], relay.Let(a, x, relay.Tuple([inner, y])))
    assert bound_vars(f) == [x, y, a, b]
    assert free_vars(f) == [z]
    assert all_vars(f) == [x, y, a, b, z]


def test_well_formed():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    assert well_formed(relay.Function([x], relay.add(x, y)))
    # binding the same variable twice
    twice = relay.Let(x, relay.const(1.0), relay.Let(x, relay.const(2.0), x))
    assert "bound more than once" in well_formed_error(twice)
    # a variable used outside the scope of its binding
    inner = relay.Function([x], x)
    assert "outside the scope" in well_formed_error(relay.Tuple([inner, x]))
