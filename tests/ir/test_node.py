import dataclasses

import pytest

from kiln import relay
from kiln.error import KilnError, TypeInferenceError
from kiln.ir import DictAttrs, FuncType, Op, TensorType, TupleType, register_op_attr


def test_nodes_are_immutable_and_reflective():
    x = relay.var("x", shape=(2,))
    call = relay.exp(x)
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.op = Op.get("log")
    fields = call.fields()
    assert list(fields)[:3] == ["op", "args", "attrs"]
    assert fields["op"] is Op.get("exp") and fields["args"] == (x,)
    assert call.with_fields(args=(x,)) is call
    other = call.with_fields(op=Op.get("log"))
    assert other is not call and other.op.name == "log"


def test_identity_equality_of_vars():
    a, b = relay.var("x"), relay.var("x")
    assert a != b and len({a, b}) == 2


def test_checked_type_before_inference_raises():
    with pytest.raises(TypeInferenceError, match="InferType"):
        relay.exp(relay.var("x", shape=(1,))).checked_type


def test_types_print_like_tvm_and_compare_by_value():
    t = TensorType((1, 3, 224, 224), "float32")
    assert str(t) == "Tensor[(1, 3, 224, 224), float32]"
    assert str(TensorType((5,), "int64")) == "Tensor[(5), int64]"
    assert str(TensorType((), "float32")) == "float32"
    assert t == TensorType([1, 3, 224, 224], "float32")
    assert str(TupleType([t, t])).startswith("(Tensor")
    assert str(FuncType([t], t)) == "fn (Tensor[(1, 3, 224, 224), float32]) -> Tensor[(1, 3, 224, 224), float32]"
    with pytest.raises(TypeInferenceError, match="dtype"):
        TensorType((1,), "float31x")


def test_op_registry_and_attrs():
    conv = Op.get("nn.conv2d")
    assert conv is Op.get("nn.conv2d")
    assert conv.get_attr("TOpPattern") == relay.op.OpPattern.OUT_ELEMWISE_FUSABLE
    assert conv.get_attr("no-such-attr") is None
    with pytest.raises(KilnError, match="not registered"):
        Op.get("nn.nope")
    register_op_attr("nn.relu", "test_attr", 1)
    assert Op.get("nn.relu").get_attr("test_attr") == 1
    with pytest.raises(KilnError, match="already registered"):
        register_op_attr("nn.relu", "test_attr", 2)
    register_op_attr("nn.relu", "test_attr", 3, level=11)
    assert Op.get("nn.relu").get_attr("test_attr") == 3

    @register_op_attr("nn.relu", "test_decorated")
    def impl():
        return 7

    assert Op.get("nn.relu").get_attr("test_decorated")() == 7


def test_op_pattern_values_match_tvm():
    P = relay.op.OpPattern
    assert (P.ELEMWISE, P.BROADCAST, P.INJECTIVE, P.COMM_REDUCE, P.OUT_ELEMWISE_FUSABLE, P.TUPLE, P.OPAQUE) == (
        0, 1, 2, 3, 4, 7, 8)
    assert Op.get("add").get_attr("TOpPattern") == P.BROADCAST
    assert Op.get("sum").get_attr("TOpPattern") == P.COMM_REDUCE
    assert Op.get("nn.softmax").get_attr("TOpPattern") == P.OUT_ELEMWISE_FUSABLE  # TVM: kOutEWiseFusable
    assert Op.get("cumsum").get_attr("TOpPattern") == P.OPAQUE


def test_function_attrs():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], x, attrs={"Primitive": 1})
    assert f.attrs["Primitive"] == 1
    g = f.with_attr("Inline", 1)
    assert g.attrs["Inline"] == 1 and "Inline" not in f.attrs and g is not f
    assert DictAttrs.make({"a": [1, 2]})["a"] == (1, 2)


def test_assigning_a_field_says_nodes_are_immutable():
    """``node.field = v`` (which TVM programs sometimes do) is refused with a clear error, an AttributeError as
    Python's own for a frozen object, not the TypeError a frozen slots dataclass raises."""
    import pytest

    from kiln import relay
    from kiln.error import ImmutableNodeError

    x = relay.var("x", shape=(2,))
    with pytest.raises(AttributeError, match="immutable.*with_fields"):
        x.virtual_device_ = None
    with pytest.raises(ImmutableNodeError, match="TensorType.shape"):
        relay.TensorType((2,), "float32").shape = (3,)
    with pytest.raises(ImmutableNodeError):
        del x.name_hint
