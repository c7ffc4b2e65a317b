import numpy as np

import kiln
from kiln import relay
from kiln.relay.transform import to_cps, un_cps


def _run(func, *args):
    return relay.create_executor(mod=kiln.IRModule.from_expr(func)).evaluate()(*args).numpy()


def test_a_function_takes_its_continuation_and_returns_the_answer_type():
    x = relay.var("x", shape=(3,))
    func = relay.infer_type(relay.Function([x], relay.add(x, x)))
    cps = relay.infer_type(to_cps(func))
    assert len(cps.params) == 2 and isinstance(cps.params[1].type_annotation, relay.FuncType)
    assert cps.type_params and cps.ret_type == cps.type_params[-1]


def test_branches_join_through_one_reified_continuation_and_results_are_kept():
    c = relay.var("c", shape=(), dtype="bool")
    x = relay.var("x", shape=(4,))
    f = relay.var("f")
    a = relay.var("a", shape=(4,))
    body = relay.Let(f, relay.Function([a], relay.multiply(a, a)),
                     relay.add(relay.If(c, f(x), relay.negative(x)), relay.const(1.0)))
    func = relay.infer_type(relay.Function([c, x], body))
    back = relay.infer_type(un_cps(relay.infer_type(to_cps(func))))
    assert back.checked_type == func.checked_type
    data = np.arange(4, dtype="float32")
    for flag in (True, False):
        np.testing.assert_allclose(_run(back, np.bool_(flag), data), _run(func, np.bool_(flag), data))


def test_global_functions_are_converted_once_into_the_module():
    mod = kiln.IRModule()
    y = relay.var("y", shape=())
    double = relay.GlobalVar("double")
    mod[double] = relay.Function([y], relay.add(y, y))
    x = relay.var("x", shape=())
    mod["main"] = relay.Function([x], double(double(x)))
    mod = relay.transform.InferType()(mod)
    mod["main"] = to_cps(mod["main"], mod=mod)
    mod = relay.transform.InferType()(mod)
    assert [gv.name_hint for gv in mod.functions].count("double_cps") == 1
    mod["main"] = un_cps(mod["main"])
    mod = relay.transform.InferType()(mod)
    assert float(relay.create_executor(mod=mod).evaluate()(np.float32(1.5)).numpy()) == 6.0
