import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.ir import IRModule, assert_structural_equal
from kiln.relay.testing import assert_same_results, run_opt_pass


def _module():
    a = relay.var("a", shape=(4,))
    t = relay.var("t")
    helper = relay.Function([a], relay.Let(t, relay.exp(a), relay.add(t, t))).with_attr("Inline", 1)
    x = relay.var("x", shape=(4,))
    mod = IRModule()
    mod["helper"] = helper
    gv = mod.get_global_var("helper")
    mod["main"] = relay.Function([x], relay.add(relay.Call(gv, [x]), relay.Call(gv, [relay.log(x)])))
    return mod


def test_inline_substitutes_and_drops_the_global():
    mod = _module()
    out = relay.transform.Inline()(mod)
    assert "helper" not in out and "helper" in mod
    calls = []
    relay.post_order_visit(out["main"], lambda e: calls.append(e) if isinstance(e, relay.Call)
                           and isinstance(e.op, relay.GlobalVar) else None)
    assert not calls
    assert relay.analysis.well_formed(out["main"])  # each inlined copy binds its own let variable
    assert_same_results(mod, out)


def test_non_inline_globals_stay():
    mod = _module()
    mod["helper"] = mod["helper"].with_attr("Inline", 0)
    out = relay.transform.Inline()(mod)
    assert out is mod or "helper" in out


def test_defuse_ops_undoes_fuse_ops():
    x = relay.var("x", shape=(1, 4, 8, 8))
    w = relay.var("w", shape=(4, 4, 3, 3))
    before = relay.Function([x, w], relay.nn.relu(relay.add(relay.nn.conv2d(x, w, padding=1), relay.const(1.0))))
    fused = run_opt_pass(before, relay.transform.FuseOps(), opt_level=2)
    assert isinstance(fused.body.op, relay.Function)
    defused = run_opt_pass(fused, relay.transform.DefuseOps())
    assert_structural_equal(defused, relay.infer_type(before))


def test_lambda_lift():
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(3,))
    closed = relay.Function([y], relay.exp(y))
    capturing = relay.Function([y], relay.add(x, y))
    mod = IRModule.from_expr(relay.Function([x], relay.add(relay.Call(closed, [x]), relay.Call(capturing, [x]))))
    out = relay.transform.LambdaLift()(mod)
    assert len(out.functions) == 3
    nested = []
    relay.post_order_visit(out["main"].body, lambda e: nested.append(e) if isinstance(e, relay.Function) else None)
    assert not nested
    closures = [f for gv, f in out.functions.items() if gv.name_hint != "main"]
    assert any(isinstance(f.body, relay.Function) and f.body.attrs.get("Closure") for f in closures)
    assert_same_results(mod, out)


@pytest.mark.parametrize("name", ["Inline", "DefuseOps", "LambdaLift"])
def test_registered(name):
    assert kiln.transform.get_pass(name).info.name == name


def test_inline_expected_text():
    mod = relay.parse("""
        def @main(%x: Tensor[(4), float32]) {
          %0 = @twice(%x);
          exp(%0)
        }

        def @twice(%a: Tensor[(4), float32], Inline=1) {
          add(%a, %a)
        }
    """)
    expected = relay.parse("""
        def @main(%x: Tensor[(4), float32]) {
          %0 = add(%x, %x);
          exp(%0)
        }
    """)
    out = relay.transform.InferType()(relay.transform.Inline()(mod))
    assert_structural_equal(out, relay.transform.InferType()(expected))


def test_lambda_lift_expected_text():
    mod = relay.parse("""
        def @main(%x: Tensor[(3), float32]) {
          %0 = fn (%y: Tensor[(3), float32]) {
            exp(%y)
          };
          %0(%x)
        }
    """)
    expected = relay.parse("""
        def @main(%x: Tensor[(3), float32]) {
          @lifted_name0(%x)
        }

        def @lifted_name0(%y: Tensor[(3), float32]) {
          exp(%y)
        }
    """)
    out = relay.transform.InferType()(relay.transform.LambdaLift()(mod))
    assert_structural_equal(out, relay.transform.InferType()(expected))


def test_lambda_lift_recursive_closure_inside_a_let_chain():
    """A-normal form puts a recursive closure in the middle of a let chain: it still refers to itself through the
    lifted global, and the global captures what the closure uses."""
    n = relay.var("n", shape=(), dtype="int32")
    step = relay.var("step", shape=(), dtype="int32")
    ftype = relay.FuncType([relay.TensorType((), "int32")], relay.TensorType((), "int32"))
    loop, k = relay.var("loop", ftype), relay.var("k", shape=(), dtype="int32")
    body = relay.If(relay.cast(k, "bool"), relay.Call(loop, [k - relay.const(1)]) + step, k)
    closure = relay.Function([k], body, ret_type=relay.TensorType((), "int32"))
    chain = relay.Let(step, n + relay.const(1), relay.Let(loop, closure, relay.Call(loop, [n])))
    mod = IRModule.from_expr(relay.Function([n], chain))
    anf = relay.transform.InferType()(relay.transform.ToANormalForm()(mod))
    out = relay.transform.InferType()(relay.transform.LambdaLift()(anf))
    lifted = [f for gv, f in out.functions.items() if gv.name_hint != "main"]
    assert len(lifted) == 1 and [p.name_hint for p in lifted[0].params] == ["step"]
    assert relay.create_executor("debug", out).evaluate()(np.array(3, "int32")).numpy() == 12
    assert_same_results(mod, out)


def test_only_functions_calling_no_global_are_inlined_and_entries_stay():
    mod = relay.parse("""
        #[version = "0.0.5"]
        def @leaf(%x: Tensor[(2), float32], Inline=1) { add(%x, %x) }
        def @middle(%x: Tensor[(2), float32], Inline=1) { @rec(@leaf(%x), 3) }
        def @rec(%x: Tensor[(2), float32], %n: int32, Inline=1) -> Tensor[(2), float32] {
          if (equal(%n, 0)) { %x } else { @rec(%x, subtract(%n, 1)) }
        }
        def @unused_entry(%y: Tensor[(2), float32], Inline=1) { negative(%y) }
        def @main(%x: Tensor[(2), float32]) { @middle(%x) }
    """)
    after = relay.transform.Inline()(mod)
    names = {gv.name_hint for gv in after.get_global_vars()}
    # leaf is inlined into middle; middle still calls the recursive rec, so it is not inlined into main
    assert names == {"middle", "rec", "unused_entry", "main"}
    assert "@leaf" not in after["middle"].astext() and "@middle" in after["main"].astext()
    x = np.array([1.0, -2.0], "float32")
    out = relay.create_executor("vm", mod=after, target="llvm").evaluate()(x)
    np.testing.assert_allclose(out.numpy(), 2 * x)
