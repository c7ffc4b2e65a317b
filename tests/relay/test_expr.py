import numpy as np
import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.ir import TensorType


def test_var_builders():
    x = relay.var("x", shape=(1, 2), dtype="int8")
    assert x.name_hint == "x" and x.type_annotation == TensorType((1, 2), "int8")
    assert relay.var("s", "float32").type_annotation == TensorType((), "float32")
    assert relay.var("t", TensorType((3,))).type_annotation == TensorType((3,))
    with pytest.raises(KilnError, match="either"):
        relay.var("x", TensorType((1,)), shape=(1,))


@pytest.mark.parametrize("value,dtype", [(1, "int32"), (1.5, "float32"), (True, "bool"),
                                         (np.ones(3, "float64"), "float32"), (np.ones(3, "int64"), "int32"),
                                         (np.ones(3, "float16"), "float16")])
def test_const_dtype_rules(value, dtype):
    assert relay.const(value).data.dtype == dtype
    assert relay.const(value).checked_type.dtype == dtype


def test_const_explicit_dtype():
    assert relay.const(3, "int64").data.dtype == "int64"


def test_call_and_tuple_validation():
    with pytest.raises(KilnError, match="Relay expression"):
        relay.Call(relay.Op.get("add"), [1, 2])
    with pytest.raises(KilnError, match="Relay expression"):
        relay.Tuple([np.ones(2)])
    with pytest.raises(KilnError, match="must be a Var"):
        relay.Function([relay.const(1.0)], relay.const(1.0))


def test_tuple_wrapper():
    x = relay.var("x", shape=(6,))
    parts = relay.split(x, 3)
    assert len(parts) == 3
    items = list(parts)
    assert all(isinstance(i, relay.TupleGetItem) for i in items)
    assert parts[-1].index == 2
    with pytest.raises(IndexError):
        parts[3]


def test_bind_by_var_and_by_name():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    f = relay.Function([x, y], relay.add(x, y))
    c = relay.const(np.ones(2, "float32"))
    g = relay.bind(f, {"y": c})
    assert list(g.params) == [x] and g.body.args[1] is c
    e = relay.bind(relay.add(x, y), {x: c})
    assert e.args[0] is c and e.args[1] is y
    with pytest.raises(KilnError, match="no parameter named z"):
        relay.bind(f, {"z": c})


def test_operators_on_expressions():
    x = relay.var("x", shape=(2,))
    assert (x + x).op.name == "add" and (x - 1.0).op.name == "subtract"
    assert (2.0 * x).args[0].data.numpy() == 2.0
    assert (x / x).op.name == "divide" and (-x).op.name == "negative"
    assert x.astype("int32").attrs.dtype == "int32"
    f = relay.Function([x], x)
    assert isinstance(f(x), relay.Call)


def test_function_positional_attrs_as_in_spec():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], x, None, {"Primitive": 1})
    assert f.attrs["Primitive"] == 1 and f.ret_type is None and f.type_params == ()


def test_comparison_operators_build_calls():
    """As in TVM, ``<``/``>``/``<=``/``>=`` on Relay expressions build comparison calls; a value that is no
    expression nor number is a TypeError."""
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    for expr, name in ((x < y, "less"), (x > y, "greater"), (x <= y, "less_equal"), (x >= 1.0, "greater_equal")):
        assert isinstance(expr, relay.Call) and expr.op.name == name
    assert relay.infer_type(x < y).checked_type == relay.TensorType((2,), "bool")
    with pytest.raises(TypeError, match="list"):
        x < [1, 2]  # noqa: B015


def test_var_identity_survives_typed_copies():
    x = relay.var("x", shape=(2,))
    copy = x.with_fields(checked_type_=relay.TensorType((2,)))
    assert copy is not x and copy.vid.same_as(x.vid) and not relay.var("x").vid.same_as(x.vid)
    typed = relay.infer_type(relay.add(x, x))
    assert typed.args[0].vid.same_as(x.vid)


def test_astext_has_the_version_header_str_does_not():
    x = relay.var("x", shape=(2,))
    expr = relay.nn.relu(x)
    assert expr.astext() == '#[version = "0.0.5"]\n' + str(expr)
    assert relay.GlobalVar("f").astext() == '#[version = "0.0.5"]\n@f'
    typed = relay.infer_type(relay.Function([x], expr))
    note = typed.astext(annotate=lambda e: f"shape {e.checked_type.shape}" if isinstance(e, relay.Call) else "")
    assert "nn.relu(%x) /* shape (2,) */" in note
