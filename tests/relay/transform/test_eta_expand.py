import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.relay.function import Function


def _run_vm(mod, *args):
    return relay.create_executor("vm", mod=mod, target="llvm").evaluate()(*args)


def test_global_used_as_a_value_is_wrapped_and_still_runs():
    mod = relay.parse("""
        #[version = "0.0.5"]
        def @double(%x: Tensor[(3), float32]) -> Tensor[(3), float32] { add(%x, %x) }
        def @apply(%f: fn (Tensor[(3), float32]) -> Tensor[(3), float32], %y: Tensor[(3), float32]) { %f(%y) }
        def @main(%y: Tensor[(3), float32]) { @apply(@double, %y) }
    """)
    after = relay.transform.EtaExpand(expand_global_var=True)(mod)
    wrapped = after["main"].body.args[0]
    assert isinstance(wrapped, Function) and wrapped.body.op == mod.get_global_var("double")
    assert after["main"].body.op == mod.get_global_var("apply")  # a called global stays as it is
    y = np.arange(3, dtype="float32")
    np.testing.assert_allclose(_run_vm(after, y).numpy(), 2 * y)


def test_bare_constructor_becomes_a_polymorphic_function_and_patterns_keep_theirs():
    mod = kiln.IRModule()
    mod.import_from_std("prelude.rly")
    after = relay.transform.EtaExpand(expand_constructor=True)(relay.transform.InferType()(mod))
    _, cons, _ = mod.get_type("List")
    wrapped = []
    relay.analysis.post_order_visit(after["map"], lambda e: wrapped.append(e) if isinstance(e, Function) and
                                    getattr(e.body, "op", None) == cons else None)
    assert wrapped == []  # map calls Cons and matches on it: nothing used as a value
    x = relay.var("x", shape=(), dtype="int32")
    let_f = relay.Var("f")
    mod["main"] = relay.Function([x], relay.Let(let_f, cons, relay.Call(let_f, [x, mod.get_type("List")[2]()])))
    after = relay.transform.InferType()(relay.transform.EtaExpand(expand_constructor=True)(mod))
    value = after["main"].body.value
    assert isinstance(value, Function) and value.body.op == cons and len(value.type_params) == 1


def test_expanding_nothing_is_refused():
    mod = kiln.IRModule.from_expr(relay.Function([], relay.const(1)))
    with pytest.raises(KilnError, match="EtaExpand"):
        relay.transform.EtaExpand()(mod)
