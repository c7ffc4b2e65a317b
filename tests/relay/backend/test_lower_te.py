"""LowerTE (kiln/relay/backend/lower_te.py) and the call_lowered operator (call_lowered.py): the lowered module
as instruments see it, kernel names, sharing, the forms of primitive calls, typing and printing."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import TypeInferenceError
from kiln.ir.verify_instruments import VerifySemantics, VerifyWellFormed
from kiln.relay.backend.call_lowered import CALL_LOWERED, CallLoweredAttrs, is_call_lowered
from kiln.relay.backend.lower_te import LowerTE, lower_te
from kiln.tir import PrimFunc


@kiln.instrument.pass_instrument
class RecordAfter:
    def __init__(self, pass_name):
        self.pass_name = pass_name
        self.seen = []

    def run_after_pass(self, mod, info):
        if info.name == self.pass_name:
            self.seen.append(mod)


def calls_of(func):
    calls = []
    relay.analysis.post_order_visit(func, lambda e: calls.append(e) if is_call_lowered(e) else None)
    return calls


def fused(func, opt_level=3, **ctx):
    with kiln.transform.PassContext(opt_level=opt_level, **ctx):
        return relay.optimize(kiln.IRModule.from_expr(func), "llvm")[0]


def test_instruments_see_the_lowered_module():
    x = relay.var("x", shape=(1, 2, 6, 6))
    w = relay.const(np.ones((3, 2, 3, 3), "float32"))
    y = relay.nn.softmax(relay.nn.relu(relay.nn.conv2d(x, w)), axis=1)
    rec = RecordAfter("LowerTE")
    # without the x86 conv2d layout alteration, which would add layout_transform groups around the blocked conv
    with kiln.transform.PassContext(opt_level=3, instruments=[rec], disabled_pass=["AlterOpLayout"]):
        relay.build(relay.Function([x], y), "llvm")
    (mod,) = rec.seen
    prims = {gv.name_hint: f for gv, f in mod.functions.items() if isinstance(f, PrimFunc)}
    assert sorted(prims) == ["tvmgen_default_fused_nn_conv2d_nn_relu", "tvmgen_default_fused_nn_softmax"]
    assert all(f.attrs["global_symbol"] == name for name, f in prims.items())
    calls = calls_of(mod["main"])
    assert [c.args[0].name_hint for c in calls] == ["tvmgen_default_fused_nn_conv2d_nn_relu",
                                                      "tvmgen_default_fused_nn_softmax"]
    assert calls[0].checked_type == relay.TensorType((1, 3, 4, 4), "float32")
    assert isinstance(calls[0].args[1], relay.Tuple) and isinstance(calls[0].args[1].fields[1], relay.Constant)
    text = str(mod)
    assert "call_lowered(@tvmgen_default_fused_nn_softmax, %" in text and "out_type" not in text
    assert "@T.prim_func" in text


def test_names_are_unique_and_identical_groups_share_a_kernel():
    a, b = relay.var("a", shape=(2, 3)), relay.var("b", shape=(4,))
    c = relay.var("c", shape=(2, 3))
    body = relay.Tuple([relay.exp(a), relay.exp(b), relay.exp(relay.add(a, c)), relay.exp(c)])
    mod = fused(relay.Function(relay.analysis.free_vars(body), body), opt_level=0)
    with kiln.target.Target("llvm"):
        lowered = LowerTE(module_name="net")(mod)
    names = [c.args[0].name_hint for c in calls_of(lowered["main"])]
    assert names.count("tvmgen_net_fused_exp") == 3  # exp on (2, 3) three times: one kernel
    assert "tvmgen_net_fused_exp_1" in names and "tvmgen_net_fused_add" in names
    assert len([f for f in lowered.functions.values() if isinstance(f, PrimFunc)]) == 3


def test_bare_operators_let_bound_and_global_primitives():
    x = relay.var("x", shape=(3,))
    # FuseOps disabled: every operator call is lowered on its own
    rec = RecordAfter("LowerTE")
    with kiln.transform.PassContext(opt_level=3, disabled_pass=["FuseOps"], instruments=[rec]):
        lib = relay.build(relay.Function([x], relay.nn.relu(relay.exp(x) * relay.const(2.0))), "llvm")
    assert [c.args[0].name_hint for c in calls_of(rec.seen[0]["main"])] == [
        "tvmgen_default_fused_exp", "tvmgen_default_fused_multiply", "tvmgen_default_fused_nn_relu"]
    m = lib["default"](kiln.cpu(0))
    m.set_input("x", np.array([-1, 0, 1], "float32"))
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), 2 * np.exp([-1, 0, 1]), rtol=1e-6)
    # a primitive function bound by let, and one held as a global function
    p = relay.var("p0", shape=(3,))
    prim = relay.Function([p], relay.sigmoid(p), attrs={"Primitive": 1})
    f = relay.var("f")
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.Let(f, prim, relay.Call(f, [x]))))
    mod["glob"] = relay.Function([p], relay.tanh(p), attrs={"Primitive": 1})
    mod["main"] = relay.Function([x], relay.Tuple([mod["main"].body, relay.Call(mod.get_global_var("glob"), [x])]))
    lowered = lower_te(mod)
    assert "glob" not in lowered and len(calls_of(lowered["main"])) == 2
    assert not any(isinstance(e, relay.Let) for e in _nodes(lowered["main"]))
    leaky = kiln.IRModule.from_expr(relay.Function([x], relay.Let(f, prim, relay.Tuple([relay.Call(f, [x]), f]))))
    with pytest.raises(kiln.error.CodegenError, match="bound to %f in @main is used as a value"):
        lower_te(leaky)


def _nodes(expr):
    out = []
    relay.analysis.post_order_visit(expr, out.append)
    return out


def test_link_params_constants_become_arguments():
    x = relay.var("x", shape=(2, 3))
    w = relay.const(np.arange(6, dtype="float32").reshape(2, 3))
    func = relay.Function([x], relay.nn.relu(relay.add(x, w)))
    rec = RecordAfter("LowerTE")
    with kiln.transform.PassContext(opt_level=3, config={"relay.FuseOps.link_params": True}, instruments=[rec]):
        lib = relay.build(func, "llvm")
    (call,) = calls_of(rec.seen[0]["main"])
    assert isinstance(call.args[1].fields[-1], relay.Constant)  # lifted out of the kernel, passed as an argument
    m = lib["default"](kiln.cpu(0))
    m.set_input("x", -np.ones((2, 3), "float32"))
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.maximum(np.arange(6).reshape(2, 3) - 1, 0))


def test_call_lowered_typing():
    x = relay.var("x", shape=(2,))
    mod = fused(relay.Function([x], relay.exp(x)))
    with kiln.target.Target("llvm"):
        lowered = kiln.transform.get_pass("LowerTE")(mod)
    assert relay.transform.InferType()(lowered)["main"].checked_type == relay.FuncType(
        [relay.TensorType((2,))], relay.TensorType((2,)))
    gv = lowered.get_global_var("tvmgen_default_fused_exp")
    y = relay.var("y", shape=(2,))
    untyped = kiln.IRModule({gv: lowered[gv]})
    untyped["main"] = relay.Function([y], relay.Call(CALL_LOWERED, [gv, relay.Tuple([y])],
                                                     CallLoweredAttrs(relay.TensorType((2,)))))
    assert relay.transform.InferType()(untyped)["main"].body.checked_type == relay.TensorType((2,))
    untyped["main"] = relay.Function([y], relay.Call(CALL_LOWERED, [gv, relay.Tuple([y])], CallLoweredAttrs()))
    with pytest.raises(TypeInferenceError, match="no result type"):
        relay.transform.InferType()(untyped)
    untyped["main"] = relay.Function([y], relay.Call(CALL_LOWERED, [gv, y], CallLoweredAttrs(relay.TensorType((2,)))))
    with pytest.raises(TypeInferenceError, match="tuple of arguments"):
        relay.transform.InferType()(untyped)
    with pytest.raises(kiln.error.OpAttributeInvalid, match="out_type"):
        CallLoweredAttrs(3)


def test_verification_instruments_accept_the_lowered_module():
    x = relay.var("x", shape=(2, 4))
    func = relay.Function([x], relay.nn.softmax(relay.exp(x)))
    for _ in range(2):  # the second build hits the TE cache: LowerTE runs no nested TIR pass
        with pytest.warns(UserWarning, match="cannot evaluate"):
            with kiln.transform.PassContext(opt_level=3, instruments=[VerifySemantics(), VerifyWellFormed()]):
                relay.build(func, "llvm")
