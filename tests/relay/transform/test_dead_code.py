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


REFS = """#[version = "0.0.5"]
def @f(%r: ref(int32)) -> int32 {
  let %v = ref_read(%r);
  let %u = ref_write(%r, %v + 1);
  %v
}
def @main() -> int32 {
  let %r = ref(0);
  let %y = @f(%r);
  let %z = @f(%r);
  %z
}
"""


def test_effects_on_references_stay():
    """ref_write, and a call of a function that writes a reference, run for their effect (TVM's purity rules):
    the unused bindings %u and %y stay, so @main still returns 1."""
    mod = relay.parse(REFS)
    after = DCE(inline_once=True)(mod)
    assert structural_equal(after, mod)
    run = relay.create_executor("debug", mod=after).evaluate()
    assert int(run().numpy()) == 1
    pure = DCE(ignore_impurity=True)(mod)  # everything taken as pure: the writes go, and @main returns 0
    assert int(relay.create_executor("debug", mod=pure).evaluate()().numpy()) == 0


def test_not_inlined_into_a_function_that_may_run_many_times(check_pass):
    """A value used once, but inside a local function, is kept bound (inlining it would evaluate it per call); a
    value used once in its own function is inlined."""
    after = check_pass(relay.parse("""#[version = "0.0.5"]
    def @main(%a: int32) {
        let %x = %a * 7;
        let %f = fn (%y: int32) -> int32 {
          let %z = %y + %y;
          %x + %z
        };
        (%f(2), %f(3))
    }""")["main"], DCE(inline_once=True), """#[version = "0.0.5"]
    def @main(%a: int32) {
        let %x = %a * 7;
        let %f = fn (%y: int32) -> int32 { %x + (%y + %y) };
        (%f(2), %f(3))
    }""")
    assert isinstance(after.body, relay.Let) and after.body.var.name_hint == "x"


def test_dead_recursive_closure_goes():
    mod = relay.parse("""#[version = "0.0.5"]
    def @main(%k: int32) {
        let %f = fn (%n: int32) -> int32 { if (%n == 0) { 0 } else { %f(%n - 1) } };
        %k
    }""")
    assert not isinstance(DCE()(mod)["main"].body, relay.Let)
