import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.relay.dataflow_pattern import is_op, wildcard


def _conv_relu():
    x, w = relay.var("x", shape=(1, 4, 6, 6)), relay.var("w", shape=(4, 4, 3, 3))
    conv = relay.nn.conv2d(x, w, kernel_size=(3, 3), channels=4)
    y = relay.var("y", shape=(1, 4, 4, 4))
    return relay.Function([x, w, y], relay.add(relay.nn.relu(conv), relay.nn.relu(y)))


def _composites(func):
    found = []
    relay.post_order_visit(func, lambda e: found.append(e.attrs["Composite"]) if isinstance(e, relay.Function) and
                           "Composite" in e.attrs else None)
    return found


def test_matches_become_composite_functions_in_table_order(check_pass):
    conv_relu = is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()))
    relu = is_op("nn.relu")(wildcard())
    after = check_pass(_conv_relu(), relay.transform.MergeComposite([("conv_relu", conv_relu), ("relu", relu)]))
    assert sorted(_composites(after)) == ["conv_relu", "relu"]  # the conv's relu was claimed by the first pattern


def test_check_can_refuse_a_match(check_pass):
    relu = is_op("nn.relu")(wildcard())
    only_4d_conv_inputs = ("relu", relu, lambda call: call.args[0].checked_type.shape[2] == 6)
    after = check_pass(_conv_relu(), relay.transform.MergeComposite([only_4d_conv_inputs]))
    assert _composites(after) == []


def test_bad_table_entry_is_named():
    with pytest.raises(KilnError, match="pattern table entry"):
        relay.transform.MergeComposite([("relu",)])(relay.transform.InferType()(
            __import__("kiln").IRModule.from_expr(_conv_relu())))
