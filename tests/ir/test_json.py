import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.ir import IRModule, load_json, save_json, structural_equal


def test_roundtrip_function_with_constants_of_several_dtypes():
    x = relay.var("x", shape=(2, 3), dtype="float32")
    body = relay.add(x, relay.const(np.arange(6, dtype="float32").reshape(2, 3)))
    body = relay.cast(relay.multiply(body, relay.const(2.0)), "int64")
    body = relay.add(body, relay.const(np.array([1, 2, 3]), "int64"))
    f = relay.Function([x], body).with_attr("Primitive", 1)
    g = load_json(save_json(f))
    assert structural_equal(f, g)
    assert g.attrs["Primitive"] == 1
    assert g.body.args[1].data.dtype == "int64"


def test_roundtrip_module_keeps_sharing_and_types():
    x = relay.var("x", shape=(4,))
    shared = relay.exp(x)
    mod = IRModule.from_expr(relay.Function([x], relay.add(shared, shared)))
    mod = relay.infer_type(mod)
    back = load_json(save_json(mod))
    assert isinstance(back, IRModule)
    assert structural_equal(back, mod)
    body = back["main"].body
    assert body.args[0] is body.args[1]
    assert str(body.checked_type) == "Tensor[(4), float32]"


def test_roundtrip_ops_attrs_and_tuples():
    x = relay.var("x", shape=(1, 8, 6, 6))
    parts = relay.split(x, 2, axis=1)
    pooled = relay.nn.max_pool2d(parts[0], (2, 2), ceil_mode=True)
    f = relay.Function([x], relay.Tuple([pooled, parts[1]]))
    assert structural_equal(load_json(save_json(f)), f)


def test_long_chain():
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(10000):
        y = relay.add(y, relay.const(1.0))
    assert structural_equal(load_json(save_json(relay.Function([x], y))), relay.Function([x], y))


def test_bad_documents():
    with pytest.raises(KilnError, match="not JSON"):
        load_json("{not json")
    with pytest.raises(KilnError, match="kiln_json"):
        load_json('{"a": 1}')
    with pytest.raises(KilnError, match="unknown IR node type"):
        load_json('{"kiln_json": 1, "root": {"ref": 0}, "nodes": [{"type": "relay.Nope", "fields": {}}]}')


def test_ndarray_value():
    arr = kiln.nd.array(np.ones((2, 2), "float16"))
    back = load_json(save_json((arr,)))
    assert back[0].dtype == "float16" and back[0].shape == (2, 2)


def _damaged(edit):
    """A saved function with ``edit(doc)`` applied to its JSON document."""
    import json

    x = relay.var("x", shape=(2,))
    doc = json.loads(save_json(relay.Function([x], relay.add(x, relay.const(np.ones(2, "float32"))))))
    edit(doc)
    return json.dumps(doc)


def _const(doc):
    return next(e for e in doc["nodes"] if e["type"] == "relay.Constant")["fields"]["data"]


@pytest.mark.parametrize("edit, message", [
    (lambda d: _const(d).update(shape=[2, 3]), r"node \d+ \(relay.Constant\): an array of shape \[2, 3\] and dtype "
                                               r"float32 needs 24 bytes, its data has 8"),
    (lambda d: _const(d).update(ndarray="@@@"), "an array's data or dtype is malformed"),
    (lambda d: _const(d).update(dtype="no-such-type"), "an array's data or dtype is malformed"),
    (lambda d: _const(d).update(dtype="|O"), "an array cannot have dtype object"),
    (lambda d: _const(d).update(shape=[-1]), "shape must be a list of non-negative ints"),
    (lambda d: d["nodes"][-1]["fields"].update(body={"ref": 999}), r"refers to node 999, which is not an earlier"),
    (lambda d: d["nodes"][-1]["fields"].update(nope=1), r"relay.Function\): its fields do not make a relay.Function"),
    (lambda d: next(e for e in d["nodes"] if e["type"] == "ir.TensorType")["fields"].update(
        shape={"tuple": [float("inf")]}), r"\(ir.TensorType\): its fields do not make a ir.TensorType \(Overflow"),
    (lambda d: d["nodes"].append(7), r"node \d+ is not \{'type': str"),
    (lambda d: d.pop("nodes"), "needs a 'nodes' list"),
    (lambda d: d.update(root={"map": [[1]]}), "a map must be a list of"),
    (lambda d: d.update(root={"map": [[[1], 2]]}), "a map key cannot be"),
    (lambda d: d.update(root={"enum": "os:system.x"}), "enumeration 'os:system.x' is not one of kiln's"),
    (lambda d: d.update(root={"enum": "kiln.error:KilnError.X"}), "no enumeration member"),
    (lambda d: d.update(root={"what": 1}), r"the root: unknown value encoding \['what'\]"),
])
def test_damaged_documents_name_the_node_and_the_problem(edit, message):
    """Found by the bad-input probe: a document edited by hand (or a Relay text's metadata section) raised
    ValueError from numpy, IndexError or TypeError, and could import any module through an ``enum``."""
    with pytest.raises(KilnError, match=message):
        load_json(_damaged(edit))


def test_enumerations_round_trip():
    from kiln.relay.op.op import OpPattern

    assert load_json(save_json((OpPattern.INJECTIVE,)))[0] is OpPattern.INJECTIVE
