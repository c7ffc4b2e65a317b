"""Per-operator tables (kiln/ir/registry.py) fail loudly: a misspelt operator or a second value for one key raises
at registration, a missing key at lookup; no registration creates an operator Relay does not define."""

import pytest

import kiln
from kiln.error import KilnError
from kiln.ir import Op
from kiln.ir.registry import Registry, op_table


def test_op_tables_refuse_unknown_operators_and_duplicates():
    table = op_table("layout rule")
    with pytest.raises(KilnError, match="layout rule registered for 'nn.reluu', which is not known"):
        table.register("nn.reluu")(lambda call: None)
    rule = table.register("nn.relu")(lambda call: None)
    assert table.get("nn.relu") is rule and "nn.relu" in table and len(table) == 1
    with pytest.raises(KilnError, match="a second layout rule registered for 'nn.relu'"):
        table.register("nn.relu")(lambda call: None)
    with pytest.raises(KilnError, match="no layout rule is registered for 'add'"):
        table["add"]
    several = op_table("rewrite rule", multiple=True, extra_keys=("TupleGetItem",))
    first, second = several.register("add", "TupleGetItem")(len), several.register("add")(abs)
    assert several.get("add") == (first, second) and several.get("TupleGetItem") == (first,)


def test_onnx_converters_are_registered_once():
    from kiln.relay.frontend.onnx import CONVERTERS
    from kiln.relay.frontend.onnx.common import OnnxOpConverter, register

    assert isinstance(CONVERTERS, Registry) and "Conv" in CONVERTERS
    with pytest.raises(KilnError, match="a second ONNX converter registered for 'Conv'"):
        register("Conv")(type("AnotherConv", (OnnxOpConverter,), {}))


def test_reference_of_an_unknown_operator_is_refused():
    from kiln.relay.reference.common import register

    with pytest.raises(KilnError, match="registered for 'nn.conv3dd', which is no operator"):
        register("nn.conv3dd")(lambda attrs, x: x)


def test_no_attribute_creates_a_ghost_operator():
    """Every operator that carries an attribute was defined by Relay (a type relation), or is a TIR intrinsic
    (``tir.*``, typed by TIR) or one registered by a test."""
    ghosts = [n for n in kiln.ir.list_op_names() if Op.get(n).get_attr("FTypeRelation") is None
              and not n.startswith(("tir.", "test"))]
    assert not ghosts, ghosts
