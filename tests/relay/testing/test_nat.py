"""relay.testing.nat: Python ints to and from the unary naturals of nat.rly."""

import pytest

from kiln import relay
from kiln.relay.prelude import Prelude
from kiln.relay.testing import count, make_nat_expr, make_nat_value


def test_round_trips_through_the_interpreter():
    p = Prelude()
    for n in (0, 1, 4):
        assert count(p, make_nat_value(p, n)) == n  # imports nat.rly into the prelude's module
        double = p.mod.get_global_var("nat_double")
        value = relay.create_executor(mod=p.mod).evaluate(relay.Call(double, [make_nat_expr(p, n)]))
        assert count(p, value) == 2 * n
    add = relay.create_executor(mod=p.mod).evaluate(p.mod.get_global_var("nat_add"))
    assert count(p, add(make_nat_value(p, 2), make_nat_value(p, 3))) == 5
    with pytest.raises(ValueError, match="negative"):
        make_nat_expr(p, -1)
    with pytest.raises(ValueError, match="not a nat"):
        count(p, make_nat_value(p, 0).__class__(p.nil.tag, [], p.nil))
