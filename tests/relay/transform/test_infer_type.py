import numpy as np
import pytest

from kiln import relay
from kiln.error import TypeInferenceError
from kiln.ir import FuncType, IRModule, Span, TensorType, TupleType


def test_function_types_and_ret_type_filled():
    x = relay.var("x", shape=(2, 3))
    f = relay.infer_type(relay.Function([x], relay.nn.relu(x)))
    assert f.ret_type == TensorType((2, 3))
    assert f.checked_type == FuncType([TensorType((2, 3))], TensorType((2, 3)))
    assert f.body.checked_type == TensorType((2, 3))
    assert f.params[0].checked_type == TensorType((2, 3))


def test_module_with_global_calls_and_recursion():
    x = relay.var("x", shape=(2,))
    mod = IRModule()
    mod["double"] = relay.Function([x], relay.add(x, x))
    y = relay.var("y", shape=(2,))
    mod["main"] = relay.Function([y], relay.Call(mod.get_global_var("double"), [y]))
    typed = relay.infer_type(mod)
    assert typed["main"].body.checked_type == TensorType((2,))
    # a recursive function needs annotations
    n = relay.var("n", shape=(), dtype="int32")
    fact = relay.GlobalVar("fact")
    body = relay.If(relay.Call(relay.Op.get("maximum"), [n, n]) if False else relay.const(True),
                    n, relay.Call(fact, [n]))
    mod2 = IRModule({"fact": relay.Function([n], body, ret_type=TensorType((), "int32"))})
    assert relay.infer_type(mod2)["fact"].body.checked_type == TensorType((), "int32")
    mod3 = IRModule({"fact": relay.Function([n], body)})
    assert relay.infer_type(mod3)["fact"].checked_type == FuncType([TensorType((), "int32")], TensorType((), "int32"))
    # nothing says what a function that only calls itself returns
    loop = relay.GlobalVar("loop")
    mod4 = IRModule({"loop": relay.Function([n], relay.Call(loop, [n]))})
    with pytest.raises(TypeInferenceError, match="in function @loop: cannot infer the type"):
        relay.infer_type(mod4)


def test_let_tuple_if_closure():
    x = relay.var("x", shape=(3,))
    t = relay.var("t")
    body = relay.Let(t, relay.Tuple([x, relay.exp(x)]), relay.TupleGetItem(t, 1))
    f = relay.infer_type(relay.Function([x], body))
    assert f.body.checked_type == TensorType((3,))
    assert f.body.var.type_annotation == TupleType([TensorType((3,)), TensorType((3,))])
    c = relay.var("c", shape=(), dtype="bool")
    g = relay.infer_type(relay.Function([c, x], relay.If(c, x, relay.negative(x))))
    assert g.body.checked_type == TensorType((3,))
    y = relay.var("y", shape=(3,))
    closure = relay.Function([y], relay.add(x, y))
    h = relay.infer_type(relay.Function([x], relay.Call(closure, [x])))
    assert h.body.checked_type == TensorType((3,))


def test_errors_name_operator_types_and_span():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 5, 3, 3))
    call = relay.nn.conv2d(x, w).with_fields(span=Span("model.relay", 3, 7))
    with pytest.raises(TypeInferenceError) as info:
        relay.infer_type(relay.Function([x, w], call))
    msg = str(info.value)
    assert "nn.conv2d" in msg and "Tensor[(4, 5, 3, 3), float32]" in msg and "model.relay:3:7" in msg
    c = relay.var("c", shape=(2,), dtype="bool")
    with pytest.raises(TypeInferenceError, match="if condition expected bool"):
        relay.infer_type(relay.Function([c], relay.If(c, relay.const(1.0), relay.const(2.0))))
    with pytest.raises(TypeInferenceError, match="branches differ"):
        cs = relay.var("c", shape=(), dtype="bool")
        relay.infer_type(relay.Function([cs], relay.If(cs, relay.const(1.0), relay.const(2))))
    with pytest.raises(TypeInferenceError, match="no type annotation"):
        relay.infer_type(relay.Function([relay.var("u")], relay.const(1.0)))
    with pytest.raises(TypeInferenceError, match="non-tuple"):
        relay.infer_type(relay.Function([x], relay.TupleGetItem(x, 0)))
    with pytest.raises(TypeInferenceError, match="return type"):
        relay.infer_type(relay.Function([x], x, ret_type=TensorType((1,))))


def test_incremental_keeps_typed_nodes():
    x = relay.var("x", shape=(4,))
    f = relay.infer_type(relay.Function([x], relay.exp(x)))
    again = relay.infer_type(f)
    assert again is f
    extended = relay.Function(f.params, relay.log(f.body))
    typed = relay.infer_type(extended)
    assert typed.body.args[0] is f.body


def test_ten_thousand_chain_and_deep_lets():
    x = relay.var("x", shape=(4,))
    y = x
    for _ in range(10000):
        y = relay.add(y, relay.const(1.0))
    assert relay.infer_type(relay.Function([x], y)).body.checked_type == TensorType((4,))
    body = x
    lets = []
    for i in range(5000):
        v = relay.var(f"v{i}")
        lets.append((v, relay.add(body, relay.const(1.0))))
        body = v
    for v, value in reversed(lets):
        body = relay.Let(v, value, body)
    assert relay.infer_type(relay.Function([x], body)).body.checked_type == TensorType((4,))


def test_untyped_weights_take_the_type_their_operator_requires():
    x = relay.var("x", shape=(1, 16, 8, 8))
    w, b, dw = relay.var("w"), relay.var("b"), relay.var("dw", relay.IncompleteType())
    y = relay.nn.bias_add(relay.nn.conv2d(x, w, channels=32, kernel_size=(3, 3), padding=(1, 1)), b)
    y = relay.nn.conv2d(y, dw, channels=32, groups=32, kernel_size=(3, 3))
    d = relay.var("d")
    y = relay.nn.dense(relay.nn.batch_flatten(y), d, units=10)
    typed = relay.infer_type(relay.Function([x, w, b, dw, d], relay.add(y, y)))
    assert [str(p.checked_type) for p in typed.params[1:]] == [
        "Tensor[(32, 16, 3, 3), float32]", "Tensor[(32), float32]", "Tensor[(32, 1, 3, 3), float32]",
        "Tensor[(10, 1152), float32]"]
    assert str(typed.ret_type) == "Tensor[(1, 10), float32]"


def test_an_untyped_weight_in_another_layout_follows_the_kernel_layout():
    x = relay.var("x", shape=(1, 8, 8, 16))
    w = relay.var("w")
    y = relay.nn.conv2d(x, w, channels=4, kernel_size=(1, 3), data_layout="NHWC", kernel_layout="HWIO")
    assert str(relay.infer_type(relay.Function([x, w], y)).params[1].checked_type) == "Tensor[(1, 3, 16, 4), float32]"


def test_an_untyped_variable_no_operator_can_type_is_named():
    x, u = relay.var("x", shape=(2, 3)), relay.var("u")
    with pytest.raises(TypeInferenceError, match=r"%u has no type annotation and add cannot infer one"):
        relay.infer_type(relay.Function([x, u], relay.add(x, u)))
    with pytest.raises(TypeInferenceError, match=r"needs channels= and kernel_size="):
        relay.infer_type(relay.Function([x, u], relay.nn.conv2d(relay.reshape(x, (1, 1, 2, 3)), u)))


def test_untyped_weights_run_like_typed_ones():
    x, w = relay.var("x", shape=(1, 3, 6, 6)), relay.var("w")
    mod = relay.transform.InferType()(IRModule.from_expr(
        relay.Function([x, w], relay.nn.conv2d(x, w, channels=4, kernel_size=(3, 3)))))
    data, weight = np.random.rand(1, 3, 6, 6).astype("float32"), np.random.rand(4, 3, 3, 3).astype("float32")
    got = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(data, weight).numpy()
    want = relay.create_executor("debug", mod=mod).evaluate()(data, weight).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)
