import numpy as np

from kiln import relay
from kiln.relay.transform import Defunctionalization
from kiln.relay.transform.defunctionalization import has_func_type

PROGRAM = """
#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}
def @twice(%x: int32) -> int32 { %x * 2 }
def @map[A, B](%f: fn(A) -> B, %xs: List[A]) -> List[B] {
  match (%xs) {
    Cons(%x, %rest) => Cons(%f(%x), @map(%f, %rest)),
    Nil => Nil,
  }
}
def @fold(%f: fn(int32) -> int32, %k: List[int32]) -> int32 {
  match (%k) {
    Cons(%x, %rest) => %0 = fn (%n: int32) -> int32 { %x + %f(%n) }; @fold(%0, %rest),
    Nil => %f(1),
  }
}
def @main(%l: List[int32], %c: int32) -> int32 {
  %1 = fn (%y: int32) -> int32 { %y + %c };
  @fold(@twice, @map(%1, %l))
}
"""


def _first_order(mod):
    """Every call reachable from @main neither takes nor returns a function."""
    seen, bad = set(), []

    def visit(expr):
        def check(e):
            if isinstance(e, relay.Call) and (has_func_type(e.checked_type) or any(
                    has_func_type(a.checked_type) for a in e.args)):
                bad.append(e)
            if isinstance(e, relay.GlobalVar) and e not in seen:
                seen.add(e)
                visit(mod[e])
        relay.analysis.post_order_visit(expr, check)

    visit(mod["main"])
    return not bad


def _to_list(mod, values):
    _, cons, nil = mod.get_type("List")
    out = nil()
    for v in reversed(values):
        out = cons(relay.const(v, "int32"), out)
    return relay.create_executor(mod=mod).evaluate(out)


def test_higher_order_calls_become_first_order_and_compute_the_same():
    mod = relay.transform.InferType()(relay.parse(PROGRAM))
    before = relay.create_executor(mod=mod).evaluate()(_to_list(mod, [3, 4]), np.int32(10))
    mod["main"] = Defunctionalization(mod["main"], mod)
    mod = relay.transform.InferType()(mod)
    assert _first_order(mod)
    after = relay.create_executor(mod=mod).evaluate()(_to_list(mod, [3, 4]), np.int32(10))
    # map adds 10: [13, 14]; fold: 13 + (14 + twice(1)) = 29
    assert int(before.numpy()) == int(after.numpy()) == 29
