from kiln import relay
from kiln.ir import structural_equal
from kiln.relay.testing import run_opt_pass

DCE = relay.transform.DeadCodeElimination


def _let_chain():
    x = relay.var("x", shape=(3,))
    a, b, c = relay.var("a"), relay.var("b"), relay.var("c")
    # b is unused; a is used only by b, so it dies with it; c is used once
    body = relay.Let(a, relay.exp(x), relay.Let(b, relay.add(a, a), relay.Let(c, relay.log(x), relay.negative(c))))
    return relay.Function([x], body)


def test_removes_unused_bindings_transitively(check_pass):
    check_pass(_let_chain(), DCE(), """
        def @main(%x: Tensor[(3), float32]) {
          let %c = log(%x);
          negative(%c)
        }
    """)


def test_inline_once(check_pass):
    check_pass(_let_chain(), DCE(inline_once=True), """
        def @main(%x: Tensor[(3), float32]) {
          negative(log(%x))
        }
    """)


def test_keeps_multiply_used_bindings_and_graph_form():
    x = relay.var("x", shape=(3,))
    a = relay.var("a")
    body = relay.Let(a, relay.exp(x), relay.add(a, a))
    after = run_opt_pass(relay.Function([x], body), DCE(inline_once=True))
    assert isinstance(after.body, relay.Let)
    graph = relay.Function([x], relay.add(relay.exp(x), x))
    assert structural_equal(run_opt_pass(graph, DCE()), relay.infer_type(graph))


def test_pass_name_and_options():
    assert str(DCE(inline_once=True)) == "DeadCodeElimination(inline_once=True)"
    assert DCE().info.opt_level == 1
