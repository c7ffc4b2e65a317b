import pytest

from kiln import relay
from kiln.relay.testing import run_opt_pass

SE = relay.transform.SimplifyExpr


def test_reshape_chain_collapses(check_pass):
    x = relay.var("x", shape=(2, 3, 4))
    before = relay.Function([x], relay.reshape(relay.squeeze(relay.expand_dims(relay.reshape(x, (6, 4)), 0)), (24,)))
    check_pass(before, SE(), """
        def @main(%x: Tensor[(2, 3, 4), float32]) {
          reshape(%x, newshape=[24])
        }
    """)


def test_reverse_reshape_joins_the_chain_but_a_dynamic_one_stays(check_pass):
    x = relay.var("x", shape=(1, 32, 4, 4))
    before = relay.Function([x], relay.reverse_reshape(relay.reshape(x, (4, 8, -1, 4)), (32, 0, -1)))
    check_pass(before, SE(), """
        def @main(%x: Tensor[(1, 32, 4, 4), float32]) {
          reshape(%x, newshape=[32, 4, 4])
        }
    """)
    y = relay.var("y", shape=(relay.Any(), 6))
    dynamic = relay.Function([y], relay.reshape(relay.reshape(y, (-1, 2, 3)), (-1, 3)))
    after = run_opt_pass(dynamic, SE())
    assert after.body.op.name == "reshape" and after.body.args[0].op.name == "reshape"


def test_reshape_to_same_shape_and_transposes(check_pass):
    x = relay.var("x", shape=(2, 3, 4))
    before = relay.Function([x], relay.transpose(relay.transpose(relay.reshape(x, (2, 12)), (1, 0)), (1, 0)))
    check_pass(before, SE(), """
        def @main(%x: Tensor[(2, 3, 4), float32]) {
          reshape(%x, newshape=[2, 12])
        }
    """)
    y = relay.var("y", shape=(2, 3, 4))
    composed = relay.transpose(relay.transpose(y, (1, 0, 2)), (0, 2, 1))
    check_pass(relay.Function([y], composed), SE(), """
        def @main(%y: Tensor[(2, 3, 4), float32]) {
          transpose(%y, axes=[1, 2, 0])
        }
    """)


@pytest.mark.parametrize("build", [
    lambda x: relay.multiply(x, relay.const(1.0)),
    lambda x: relay.multiply(relay.ones((2, 3)), x),
    lambda x: relay.add(relay.zeros((2, 3)), x),
    lambda x: relay.subtract(x, relay.const(0.0)),
    lambda x: relay.divide(x, relay.const(1.0)),
    lambda x: relay.cast(x, "float32"),
    lambda x: relay.negative(relay.negative(x)),
    lambda x: relay.layout_transform(relay.layout_transform(x, "NC", "CN"), "CN", "NC"),
])
def test_identities_vanish(check_pass, build):
    x = relay.var("x", shape=(2, 3))
    after = check_pass(relay.Function([x], build(x)), SE())
    assert after.body is after.params[0]


def test_identity_kept_when_it_broadcasts():
    x = relay.var("x", shape=(3,))
    after = run_opt_pass(relay.Function([x], relay.multiply(x, relay.ones((2, 3)))), SE())
    assert isinstance(after.body, relay.Call)


def test_rsqrt_and_widening_casts(check_pass):
    x = relay.var("x", shape=(4,), dtype="float16")
    before = relay.Function([x], relay.cast(relay.cast(x, "float32"), "float64"))
    check_pass(before, SE(), """
        def @main(%x: Tensor[(4), float16]) {
          cast(%x, dtype="float64")
        }
    """)
    y = relay.var("y", shape=(4,))
    before = relay.Function([y], relay.divide(relay.const(1.0), relay.sqrt(relay.abs(y))))
    check_pass(before, SE(), """
        def @main(%y: Tensor[(4), float32]) {
          %0 = abs(%y);
          rsqrt(%0)
        }
    """, rtol=1e-5)


def test_narrowing_cast_chain_kept():
    x = relay.var("x", shape=(4,))
    after = run_opt_pass(relay.Function([x], relay.cast(relay.cast(x, "int8"), "float32")), SE())
    assert after.body.args[0].op.name == "cast"


def test_rsqrt_of_a_scaled_division_full_identities_and_doubling(check_pass):
    x = relay.var("x", shape=(4, 1), dtype="float32")
    after = check_pass(relay.Function([x], relay.const(2.5) / relay.sqrt(relay.abs(x) + relay.const(1.0))),
                       relay.transform.SimplifyExpr())
    assert after.body.op.name == "multiply" and after.body.args[1].op.name == "rsqrt"
    after = check_pass(relay.Function([x], relay.full(relay.const(0.0), (4, 1), "float32") + x),
                       relay.transform.SimplifyExpr())
    assert after.body is after.params[0]
    after = check_pass(relay.Function([x], relay.add(x, x)), relay.transform.SimplifyExpr())
    assert after.body.op.name == "multiply" and float(after.body.args[1].data.numpy()) == 2.0


def test_clip_covering_an_integer_dtype_disappears_but_not_a_narrower_one(check_pass):
    x = relay.var("x", shape=(4, 8), dtype="int32")
    wide = check_pass(relay.Function([x], relay.clip(relay.cast(x, "uint8"), 0.0, 255.0)),
                      relay.transform.SimplifyExpr())
    assert wide.body.op.name == "cast"
    narrow = check_pass(relay.Function([x], relay.clip(relay.cast(x, "uint8"), 0.0, 200.0)),
                        relay.transform.SimplifyExpr())
    assert narrow.body.op.name == "clip"
