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


def test_unused_stateful_calls_stay():
    """An allocation or a kernel call of the memory dialect runs for its effect even when its value is unused."""
    from kiln.relay.op import memory

    x = relay.var("x", shape=(2,))
    unused, used = relay.var("unused"), relay.var("used")
    before = relay.Function([x], relay.Let(unused, memory.alloc_storage(8), relay.Let(used, relay.exp(x),
                                                                                       relay.Let(relay.var("dead"),
                                                                                                 relay.log(x), used))))
    after = run_opt_pass(before, relay.transform.DeadCodeElimination())
    assert after.body.var.name_hint == "unused" and after.body.body.var.name_hint == "used"
    assert not isinstance(after.body.body.body, relay.Let)  # the pure, unused log is gone
