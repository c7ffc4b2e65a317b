from kiln import relay
from kiln.relay.analysis import post_order_visit


def _casts(func):
    found = []
    post_order_visit(func, lambda e: found.append(e) if getattr(getattr(e, "op", None), "name", "") == "cast" else 0)
    return found


def test_shared_upcast_gets_one_copy_per_elementwise_consumer(check_pass):
    x = relay.var("x", shape=(2, 8), dtype="int8")
    b1, b2 = relay.var("b1", shape=(8,), dtype="int32"), relay.var("b2", shape=(8,), dtype="int32")
    wide = relay.cast(x, "int32")
    before = relay.Function([x, b1, b2], relay.add(wide, b1) * relay.add(wide, b2))
    after = check_pass(before, relay.transform.CanonicalizeCast())
    assert len(_casts(before)) == 1 and len(_casts(after)) == 2


def test_downcast_and_non_elementwise_consumers_keep_one_cast(check_pass):
    x = relay.var("x", shape=(2, 8), dtype="int32")
    narrow = relay.cast(x, "int8")
    after = check_pass(relay.Function([x], relay.add(narrow, narrow)), relay.transform.CanonicalizeCast())
    assert len(_casts(after)) == 1
    y = relay.var("y", shape=(2, 8), dtype="int8")
    wide = relay.cast(y, "float32")
    after = check_pass(relay.Function([y], relay.concatenate([relay.sum(wide, axis=1), relay.sum(wide, axis=0)], 0)),
                       relay.transform.CanonicalizeCast())
    assert len(_casts(after)) == 1
