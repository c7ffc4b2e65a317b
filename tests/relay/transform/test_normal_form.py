import pytest

import kiln
from kiln import relay
from kiln.relay.analysis import well_formed
from kiln.relay.testing import run_opt_pass

ANF, GNF = relay.transform.ToANormalForm, relay.transform.ToGraphNormalForm


def _lets(expr):
    count = []
    relay.post_order_visit(expr, lambda e: count.append(e) if isinstance(e, relay.Let) else None)
    return len(count)


def test_anf_binds_each_call_once(check_pass):
    x = relay.var("x", shape=(3,))
    shared = relay.exp(x)
    before = relay.Function([x], relay.add(relay.log(shared), shared))
    check_pass(before, ANF(), """
        def @main(%x: Tensor[(3), float32]) {
          let %x0 = exp(%x);
          let %x1 = log(%x0);
          let %x2 = add(%x1, %x0);
          %x2
        }
    """)


def test_anf_scopes_branch_only_work_into_the_branch(check_pass):
    c = relay.var("c", shape=(), dtype="bool")
    x = relay.var("x", shape=(3,))
    both = relay.exp(x)
    only_true = relay.log(both)
    before = relay.Function([c, x], relay.If(c, only_true, relay.negative(both)))
    after = check_pass(before, ANF())
    assert well_formed(after)
    outer = after.body
    assert isinstance(outer, relay.Let) and outer.value.op.name == "exp"  # shared: before the if
    the_if = outer.body.value if isinstance(outer.body, relay.Let) else outer.body
    assert isinstance(the_if, relay.If)
    assert isinstance(the_if.true_branch, relay.Let) and the_if.true_branch.value.op.name == "log"


def test_graph_normal_form_round_trip(check_pass):
    from kiln.relay.testing import transformer

    net = transformer.get_net(seq=4, hidden=16, heads=2, ffn=32)
    anf = run_opt_pass(net, ANF())
    assert _lets(anf) > 20 and well_formed(anf)
    back = check_pass(anf, GNF(), rtol=1e-4, atol=1e-5)
    assert _lets(back) == 0


def test_graph_normal_form_keeps_recursive_closures(check_pass):
    x = relay.var("x", shape=(), dtype="int32")
    f = relay.var("f")
    n = relay.var("n", shape=(), dtype="int32")
    ftype = relay.FuncType([relay.TensorType((), "int32")], relay.TensorType((), "int32"))
    f = relay.var("f", ftype)
    cond = relay.cast(n, "bool")
    body = relay.If(cond, relay.add(n, relay.Call(f, [relay.subtract(n, relay.const(1))])), n)
    closure = relay.Function([n], body)
    before = relay.Function([x], relay.Let(f, closure, relay.Call(f, [x])))
    after = run_opt_pass(before, GNF())
    assert isinstance(after.body, relay.Let)


def test_long_chain_anf():
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(3000):
        y = relay.exp(y)
    after = run_opt_pass(relay.Function([x], y), ANF())
    assert _lets(after) == 3000


def test_graph_normal_form_expected_text(check_pass):
    x = relay.var("x", shape=(3,))
    a, b = relay.var("a"), relay.var("b")
    before = relay.Function([x], relay.Let(a, relay.exp(x), relay.Let(b, relay.add(a, a), relay.log(b))))
    check_pass(before, GNF(), """
        def @main(%x: Tensor[(3), float32]) {
          %0 = exp(%x);
          %1 = add(%0, %0);
          log(%1)
        }
    """)


def test_anf_keeps_let_bound_values_in_their_binding():
    """A value a let binds is not bound a second time, so a recursive closure keeps the name it calls itself by."""
    x = relay.var("x", shape=(), dtype="int32")
    ftype = relay.FuncType([relay.TensorType((), "int32")], relay.TensorType((), "int32"))
    f, n = relay.var("f", ftype), relay.var("n", shape=(), dtype="int32")
    closure = relay.Function([n], relay.If(relay.cast(n, "bool"), relay.Call(f, [n - relay.const(1)]), n))
    before = relay.Function([x], relay.Let(f, closure, relay.Call(f, [x])))
    after = run_opt_pass(before, ANF())
    binding = after.body
    assert binding.var.name_hint == "f" and isinstance(binding.value, relay.Function)
    assert binding.var in relay.analysis.free_vars(binding.value)  # the closure calls the variable binding it
    # f, in the closure the condition, the constant 1, n - 1, the recursive call and the if, then f(x)
    assert _lets(after) == 7


def test_basic_block_form_binds_only_what_branches_share(check_pass):
    c, x = relay.var("c", shape=(), dtype="bool"), relay.var("x", shape=(3,))
    shared = relay.add(x, x)  # used in both branches: bound before the if
    own = relay.multiply(x, x)  # used twice in one branch: stays a graph node there
    before = relay.Function([c, x], relay.If(c, relay.subtract(shared, relay.add(own, own)), relay.negative(shared)))
    with pytest.raises(kiln.error.KilnError, match="basic block normal form"):
        relay.analysis.check_basic_block_normal_form(before)
    after = check_pass(before, relay.transform.ToBasicBlockNormalForm())
    assert _lets(after) == 1 and isinstance(after.body, relay.Let) and isinstance(after.body.body, relay.If)
    assert relay.analysis.check_basic_block_normal_form(after)
    assert relay.analysis.Feature.fGraph in relay.analysis.detect_feature(after.body.body.true_branch)


def test_an_alias_binding_stands_for_its_value_in_the_body():
    x, y = relay.var("x"), relay.var("y")
    before = relay.Let(x, relay.const(4.0), relay.Let(y, x, relay.add(x, relay.const(1.0))))
    after = run_opt_pass(before, relay.transform.ToBasicBlockNormalForm())
    inner = after.body  # let %y = %x; add(%y, 1f): the body reads the alias, as TVM's conversion writes it
    assert inner.value.vid == after.var.vid and inner.body.args[0].vid == inner.var.vid
    assert float(relay.create_executor().evaluate(after).numpy()) == 5.0
