from kiln import relay
from kiln.relay.testing import run_opt_pass


def test_a_chain_of_shapes_read_from_dynamic_calls_becomes_static(check_pass):
    x, y = relay.var("x", shape=(2, 3, 4)), relay.var("y", shape=(8, 3))
    z1 = relay.reshape(x, relay.shape_of(y))
    z2 = relay.reshape(z1, relay.shape_of(x))
    z3 = relay.reshape(z2, relay.shape_of(z1))  # shape_of a dyn.reshape: static only once z1 is
    z4 = relay.reshape(z3, relay.shape_of(z2))
    before = relay.Function([x, y], z4)
    assert run_opt_pass(before, []).body.op.name == "dyn.reshape"
    after = check_pass(before, relay.transform.DynamicToStatic())
    names = []
    relay.analysis.post_order_visit(after, lambda e: names.append(e.op.name) if isinstance(e, relay.Call) else None)
    assert set(names) == {"reshape"} and tuple(after.body.checked_type.shape) == (2, 3, 4)
