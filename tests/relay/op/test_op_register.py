"""Operators registered from Python with TVM's builder API (relay.op.op.register, Op.add_type_rel ...)."""

import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.ir import EnvFunc, TensorType
from kiln.ir import op as ir_op
from kiln.relay.op import op as _op


@pytest.fixture(autouse=True)
def _forget_test_operators():
    """Operators registered here are removed afterwards: tests that run every operator must not meet them."""
    yield
    for name in [n for n in ir_op.list_op_names() if n.startswith("test_op_register.")]:
        ir_op._OPS.pop(name, None)
        ir_op._OP_ATTRS.pop(name, None)


def test_register_an_operator_with_a_named_relation():
    _op.register("test_op_register.twice", "doubles its input")
    op = _op.get("test_op_register.twice")
    op.set_num_inputs(1)
    op.add_argument("data", "Tensor", "the input")
    op.add_type_rel("Identity")
    op.set_support_level(1)
    _op.register_pattern("test_op_register.twice", _op.OpPattern.ELEMWISE)
    _op.register_stateful("test_op_register.twice", False)
    x = relay.var("x", shape=(3, 2))
    assert relay.transform.InferTypeLocal(relay.Call(op, [x])) == TensorType((3, 2))
    assert op.get_attr("arguments") == (("data", "Tensor", "the input"),) and op.get_attr("support_level") == 1
    assert op.get_attr("TOpIsStateful") is False
    with pytest.raises(KilnError, match="Operator test_op_register.twice is registered before"):
        _op.register("test_op_register.twice")


def test_custom_relation_and_env_funcs():
    def first_of_two(arg_types, attrs):
        return arg_types[0]

    _op.register("test_op_register.first")
    op = _op.get("test_op_register.first")
    op.set_num_inputs(2)
    op.add_type_rel("first", first_of_two)
    a, b = relay.var("a", shape=(4,)), relay.var("b", shape=(1,), dtype="int8")
    assert relay.transform.InferTypeLocal(relay.Call(op, [a, b])) == TensorType((4,))
    with pytest.raises(KilnError, match="test_op_register.first expects 2 arguments, got 1"):
        relay.transform.InferTypeLocal(relay.Call(op, [a]))
    broadcast = EnvFunc.get("tvm.relay.type_relation.Broadcast")
    assert broadcast is EnvFunc.get("tvm.relay.type_relation.Broadcast")
    assert broadcast([TensorType((4, 1)), TensorType((3,))], None) == TensorType((4, 3))
    with pytest.raises(KilnError, match="no global function is registered as 'no.such.relation'"):
        EnvFunc.get("no.such.relation")
