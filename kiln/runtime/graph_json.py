"""Reading a graph executor's JSON (the format :mod:`kiln.relay.backend.graph_codegen` writes) defensively.

The JSON may come from a file or a package anyone edited, and the executor turns it into raw memory views handed
to native kernels, so every field it reads is checked first: node inputs and heads name earlier entries, the row
pointer adds up, every entry has a shape of non-negative ints, a dtype numpy knows and a storage id. A malformed
graph raises :class:`~kiln.error.KilnError` naming the field and the node, never an ``IndexError`` or a
``TypeError`` from inside the executor.
"""

import json

import numpy as np

from ..error import KilnError

__all__ = ["parse_graph", "graph_attr", "entry_dtype"]


def _fail(message):
    raise KilnError(f"graph executor: {message}")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def graph_attr(graph, key, kind):
    """The list under ``graph["attrs"][key]``, stored as ``[kind, list]``."""
    attrs = graph.get("attrs")
    entry = attrs.get(key) if isinstance(attrs, dict) else None
    if not isinstance(entry, list) or len(entry) != 2 or entry[0] != kind or not isinstance(entry[1], list):
        _fail(f"the graph JSON has no attribute {key!r} of kind {kind}")
    return entry[1]


def entry_dtype(name) -> np.dtype:
    """The numpy dtype of a graph entry's ``dltype`` (TVM writes ``bool`` as ``uint1`` in some versions)."""
    if not isinstance(name, str):
        _fail(f"a dltype must be a str, got {name!r}")
    try:
        dtype = np.dtype("bool" if name in ("bool", "uint1") else name)
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind not in "biuf" or dtype.itemsize == 0:
        _fail(f"dltype {name!r} is not a tensor dtype kiln runs")
    return dtype


def _entry_ref(ref, row, limit, what):
    """Check ``[node, index(, version)]`` names an output of a node before ``limit``."""
    if not (isinstance(ref, list) and len(ref) in (2, 3) and all(_is_int(v) for v in ref)):
        _fail(f"{what} must be [node, index, version], got {ref!r}")
    nid, index = ref[0], ref[1]
    if not 0 <= nid < limit:
        _fail(f"{what} names node {nid}, which is not an earlier node (0..{limit - 1})")
    if not 0 <= index < row[nid + 1] - row[nid]:
        _fail(f"{what} names output {index} of node {nid}, which has {row[nid + 1] - row[nid]}")


def parse_graph(graph_json) -> dict:
    """The graph as a dict, checked for every field the executor reads (KilnError naming what is wrong)."""
    try:
        graph = json.loads(graph_json) if isinstance(graph_json, str | bytes) else dict(graph_json)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise KilnError(f"graph executor: the graph is not valid JSON ({exc})") from exc
    except (TypeError, ValueError) as exc:
        raise KilnError(f"graph executor: the graph must be JSON text or a dict, got {type(graph_json).__name__}") \
            from exc
    if not isinstance(graph, dict):
        _fail(f"the graph JSON must be an object, got {type(graph).__name__}")
    for key in ("nodes", "arg_nodes", "heads", "node_row_ptr", "attrs"):
        if key not in graph:
            _fail(f"the graph JSON has no {key!r}")
        if not isinstance(graph[key], dict if key == "attrs" else list):
            _fail(f"{key!r} must be a {'dict' if key == 'attrs' else 'list'}")
    nodes, row = graph["nodes"], graph["node_row_ptr"]
    if len(row) != len(nodes) + 1 or not all(_is_int(r) for r in row) or row[0] != 0 or \
            any(b < a for a, b in zip(row, row[1:], strict=False)):
        _fail(f"node_row_ptr must be {len(nodes) + 1} non-decreasing ints from 0 (one per node, and the end)")
    count = row[-1]
    for nid, node in enumerate(nodes):
        _check_node(nid, node, row)
    for key, kind in (("shape", "list_shape"), ("dltype", "list_str"), ("storage_id", "list_int")):
        if len(graph_attr(graph, key, kind)) != count:
            _fail(f"attribute {key!r} has {len(graph_attr(graph, key, kind))} entries, the graph has {count}")
    for eid, shape in enumerate(graph_attr(graph, "shape", "list_shape")):
        if not (isinstance(shape, list) and all(_is_int(d) and d >= 0 for d in shape)):
            _fail(f"the shape of entry {eid} must be a list of non-negative ints, got {shape!r}")
    for name in graph_attr(graph, "dltype", "list_str"):
        entry_dtype(name)
    if not all(_is_int(s) and s >= 0 for s in graph_attr(graph, "storage_id", "list_int")):
        _fail("every storage_id must be a non-negative int")
    if "storage_offset" in graph["attrs"]:
        offsets = graph_attr(graph, "storage_offset", "list_int")
        if len(offsets) != count or not all(_is_int(o) and o >= 0 for o in offsets):
            _fail(f"attribute 'storage_offset' must be {count} non-negative ints (byte offsets), one per entry")
    for k, nid in enumerate(graph["arg_nodes"]):
        if not (_is_int(nid) and 0 <= nid < len(nodes)) or nodes[nid]["op"] != "null":
            _fail(f"arg_nodes[{k}] = {nid!r} is not an input node")
    for k, ref in enumerate(graph["heads"]):
        _entry_ref(ref, row, len(nodes), f"heads[{k}]")
    return graph


def _check_node(nid, node, row):
    if not isinstance(node, dict) or not isinstance(node.get("op"), str) or not isinstance(node.get("name"), str):
        _fail(f"node {nid} must be an object with a str 'op' and 'name'")
    what = f"node {nid} ({node['name']})"
    if not isinstance(node.get("inputs", []), list) or not isinstance(node.get("attrs", {}), dict):
        _fail(f"{what}: 'inputs' must be a list and 'attrs' an object")
    for k, ref in enumerate(node.get("inputs", [])):
        _entry_ref(ref, row, nid, f"{what} input {k}")
    if node["op"] == "null":
        if row[nid + 1] - row[nid] != 1:
            _fail(f"{what}: an input node has one entry, node_row_ptr gives it {row[nid + 1] - row[nid]}")
    elif node["op"] == "tvm_op":
        if not isinstance(node.get("attrs", {}).get("func_name", node["name"]), str):
            _fail(f"{what}: func_name must be a str")
    else:
        _fail(f"{what} has the unknown op {node['op']!r}")
