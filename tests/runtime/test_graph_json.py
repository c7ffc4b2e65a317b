"""Reading a graph executor's JSON (kiln/runtime/graph_json.py): every malformed field is a KilnError naming the
field and the node, found before the executor makes memory views for native kernels out of it."""

import copy
import json

import pytest

from kiln.error import KilnError
from kiln.runtime.graph_json import entry_dtype, parse_graph

GRAPH = {
    "nodes": [{"op": "null", "name": "x", "inputs": []},
              {"op": "tvm_op", "name": "f", "inputs": [[0, 0, 0]], "attrs": {"func_name": "f", "num_outputs": "1"}}],
    "arg_nodes": [0], "heads": [[1, 0, 0]], "node_row_ptr": [0, 1, 2],
    "attrs": {"shape": ["list_shape", [[2, 3], [2, 3]]], "dltype": ["list_str", ["float32", "float32"]],
              "storage_id": ["list_int", [0, 1]]},
}


def _edit(change):
    graph = copy.deepcopy(GRAPH)
    change(graph)
    return json.dumps(graph)


def test_a_valid_graph_reads_back():
    assert parse_graph(json.dumps(GRAPH)) == GRAPH
    assert parse_graph(GRAPH) == GRAPH and parse_graph(json.dumps(GRAPH).encode()) == GRAPH


@pytest.mark.parametrize("change, message", [
    (lambda g: g["attrs"]["shape"][1][1].__setitem__(1, 0.5), r"the shape of entry 1 must be a list of non-neg"),
    (lambda g: g["attrs"]["shape"][1][0].__setitem__(0, -2), r"the shape of entry 0 must be"),
    (lambda g: g["attrs"]["shape"][1].__setitem__(1, "float32"), r"the shape of entry 1"),
    (lambda g: g["attrs"]["dltype"][1].__setitem__(0, "int4"), r"dltype 'int4' is not a tensor dtype kiln runs"),
    (lambda g: g["attrs"]["dltype"][1].__setitem__(0, None), r"a dltype must be a str, got None"),
    (lambda g: g["attrs"]["dltype"][1].__setitem__(0, "object"), r"dltype 'object' is not a tensor dtype"),
    (lambda g: g["attrs"]["storage_id"][1].__setitem__(0, -1), r"every storage_id must be a non-negative int"),
    (lambda g: g["attrs"].__setitem__("storage_id", ["list_str", [0, 1]]), r"no attribute 'storage_id' of kind"),
    (lambda g: g["nodes"][1]["inputs"].__setitem__(0, [1, 0, 0]), r"node 1 \(f\) input 0 names node 1, which is "
                                                                   r"not an earlier node"),
    (lambda g: g["nodes"][1]["inputs"].__setitem__(0, [0, 1, 0]), r"names output 1 of node 0, which has 1"),
    (lambda g: g["nodes"][1]["inputs"].__setitem__(0, [0.5, 0, 0]), r"input 0 must be \[node, index, version\]"),
    (lambda g: g["nodes"][1].__setitem__("op", "conv"), r"node 1 \(f\) has the unknown op 'conv'"),
    (lambda g: g["nodes"][1]["attrs"].__setitem__("func_name", 3), r"node 1 \(f\): func_name must be a str"),
    (lambda g: g["nodes"][0].pop("name"), r"node 0 must be an object with a str 'op' and 'name'"),
    (lambda g: g["nodes"].__setitem__(0, []), r"node 0 must be an object"),
    (lambda g: g.__setitem__("node_row_ptr", [0, 1, 1]), r"attribute 'shape' has 2 entries, the graph has 1"),
    (lambda g: g.__setitem__("node_row_ptr", [0, 0, 2]), r"node 0 \(x\): an input node has one entry"),
    (lambda g: g.__setitem__("node_row_ptr", [0, 2, 1]), r"node_row_ptr must be 3 non-decreasing ints"),
    (lambda g: g.__setitem__("node_row_ptr", [0, 1, 2, 3]), r"node_row_ptr must be 3"),
    (lambda g: g.__setitem__("arg_nodes", [1]), r"arg_nodes\[0\] = 1 is not an input node"),
    (lambda g: g.__setitem__("arg_nodes", [7]), r"arg_nodes\[0\] = 7 is not an input node"),
    (lambda g: g.__setitem__("heads", [[2, 0, 0]]), r"heads\[0\] names node 2, which is not an earlier node"),
    (lambda g: g.__setitem__("heads", {}), r"'heads' must be a list"),
    (lambda g: g.__setitem__("attrs", []), r"'attrs' must be a dict"),
])
def test_malformed_fields_are_named(change, message):
    """Found by the bad-input probe: a changed number in a graph's JSON raised TypeError or ValueError from inside
    the executor."""
    with pytest.raises(KilnError, match=message):
        parse_graph(_edit(change))


def test_an_op_node_without_inputs_runs():
    """Found by the bad-input probe: the checks took a missing 'inputs' as none, the executor raised KeyError."""
    import numpy as np

    import kiln
    from kiln import te
    from kiln.runtime.graph_executor import GraphExecutor

    out = te.compute((2, 3), lambda i, j: te.const(7.0, "float32"), name="out")
    lib = kiln.build(te.create_schedule(out.op), [out], target="llvm", name="f")
    graph = {"nodes": [{"op": "null", "name": "x"}, {"op": "tvm_op", "name": "f", "attrs": {"func_name": "f"}}],
             "arg_nodes": [0], "heads": [[1, 0, 0]], "node_row_ptr": [0, 1, 2], "attrs": GRAPH["attrs"]}
    m = GraphExecutor(json.dumps(graph), lib)
    m.set_input("x", np.zeros((2, 3), "float32"))
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.full((2, 3), 7.0, "float32"))


def test_not_a_graph():
    with pytest.raises(KilnError, match="not valid JSON"):
        parse_graph("[" * 100000)
    with pytest.raises(KilnError, match="must be an object, got list"):
        parse_graph("[]")
    with pytest.raises(KilnError, match="must be JSON text or a dict, got int"):
        parse_graph(3)


def test_entry_dtypes():
    assert entry_dtype("uint1") == entry_dtype("bool") and entry_dtype("float16").itemsize == 2
