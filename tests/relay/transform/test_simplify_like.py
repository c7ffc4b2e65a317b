import pytest

from kiln import relay
from kiln.relay.testing import run_opt_pass

Simplify = relay.transform.SimplifyExpr


def _like_cases():
    x = relay.var("x", shape=(2, 3, 4))
    like = relay.var("like", shape=(6, 4))
    small = relay.var("small", shape=(3, 1))
    fill = relay.var("fill", shape=())
    return [
        (relay.zeros_like(x), "zeros"), (relay.ones_like(x), "ones"), (relay.full_like(x, fill), "full"),
        (relay.reshape_like(x, like), "reshape"), (relay.collapse_sum_like(x, small), "collapse_sum_to"),
        (relay.broadcast_to_like(small, x), "broadcast_to"), (relay.cast_like(x, relay.var("i", shape=(), dtype="int32")), "cast"),
    ]


@pytest.mark.parametrize("index", range(7))
def test_like_operator_becomes_its_concrete_form(check_pass, index):
    expr, concrete = _like_cases()[index]
    func = relay.Function(relay.analysis.free_vars(expr), expr)
    after = check_pass(func, Simplify())
    assert after.body.op.name == concrete


def test_dynamic_like_shape_keeps_the_like_form_but_cast_like_concretizes():
    x = relay.var("x", shape=(relay.Any(), 3))
    after = run_opt_pass(relay.Function([x], relay.zeros_like(x)), Simplify())
    assert after.body.op.name == "zeros_like"
    y = relay.var("y", shape=(relay.Any(), 3), dtype="int32")
    after = run_opt_pass(relay.Function([x, y], relay.cast_like(x, y)), Simplify())
    assert after.body.op.name == "cast" and after.body.checked_type.dtype == "int32"
