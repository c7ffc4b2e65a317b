from kiln import relay
from kiln.ir import Op
from kiln.relay.testing import run_opt_pass

CSE = relay.transform.EliminateCommonSubexpr


def test_shares_identical_calls(check_pass):
    x = relay.var("x", shape=(1, 16))
    y1 = relay.nn.relu(relay.add(x, relay.const(1.0)))
    y2 = relay.nn.relu(relay.add(x, relay.const(1.0)))
    before = relay.Function([x], relay.add(y1, y2))
    after = check_pass(before, CSE(), """
        def @main(%x: Tensor[(1, 16), float32]) {
          %0 = add(%x, 1f);
          %1 = nn.relu(%0);
          add(%1, %1)
        }
    """)
    assert after.body.args[0] is after.body.args[1]


def test_attrs_must_match():
    x = relay.var("x", shape=(2, 6))
    a = relay.sum(x, axis=0)
    b = relay.sum(x, axis=1)
    after = run_opt_pass(relay.Function([x], relay.Tuple([a, b, relay.sum(x, axis=0)])), CSE())
    assert after.body.fields[0] is after.body.fields[2] and after.body.fields[1] is not after.body.fields[0]


def test_fskip_and_branch_scopes():
    x = relay.var("x", shape=(4,))
    skip = lambda call: call.op == Op.get("exp")  # noqa: E731
    after = run_opt_pass(relay.Function([x], relay.add(relay.exp(x), relay.exp(x))), CSE(fskip=skip))
    assert after.body.args[0] is not after.body.args[1]
    c = relay.var("c", shape=(), dtype="bool")
    inside = relay.If(c, relay.log(x), relay.negative(x))
    before = relay.Function([c, x], relay.add(inside, relay.log(x)))
    after = run_opt_pass(before, CSE())
    # the log inside the branch must not become the one outside the if
    assert after.body.args[0].true_branch is not after.body.args[1]


def test_transformer_block_results(check_pass):
    from kiln.relay.testing import transformer

    check_pass(transformer.get_net(seq=8, hidden=32, ffn=64), CSE(), rtol=1e-4, atol=1e-5)


def test_stateful_calls_are_never_merged():
    from kiln.relay.op import memory

    first, second = memory.alloc_storage(16), memory.alloc_storage(16)
    x = relay.var("x", shape=(2,))
    before = relay.Function([x], relay.Tuple([first, second, relay.exp(x), relay.exp(x)]))
    after = run_opt_pass(before, relay.transform.EliminateCommonSubexpr())
    fields = after.body.fields
    assert fields[0] is not fields[1] and fields[2] is fields[3]


def test_calls_on_tuples_of_the_same_values_are_shared(check_pass):
    """concatenate((%y, %c)) twice is one value even though the two tuple nodes differ (TVM compares a tuple
    argument field by field); a tuple with another field order is not."""
    import numpy as np

    x = relay.var("x", shape=(1, 4))
    c = relay.const(np.arange(4, dtype="float32").reshape(1, 4))
    ys = [relay.add(relay.nn.relu(x), relay.const(1.0)) for _ in range(3)]
    cat1, cat2 = relay.concatenate([ys[0], c], axis=0), relay.concatenate([ys[1], c], axis=0)
    cat3 = relay.concatenate([c, ys[2]], axis=0)
    after = check_pass(relay.Function([x], relay.Tuple([relay.add(cat1, cat2), cat3])), CSE())
    total, swapped = after.body.fields
    assert total.args[0] is total.args[1] and swapped is not total.args[0]
