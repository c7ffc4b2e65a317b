"""JSON serialization of any IR node or IRModule, constants included.

The document is a node table in post-order (children before parents), so a shared node is written once and a
10,000-deep chain needs no recursion: ``{"kiln_json": 1, "root": <value>, "nodes": [{"type": key, "fields": {...}}]}``.
Values encode as JSON scalars, lists, ``{"ref": i}`` (node i), ``{"tuple": [...]}``, ``{"map": [[k, v], ...]}``,
``{"ndarray": <base64 bytes>, "dtype": ..., "shape": [...]}``, ``{"enum": "module:Class.NAME"}``.
"""

import base64
import dataclasses
import enum
import importlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..error import KilnError
from ..runtime.ndarray import NDArray, array
from .node import Node, node_type


def _node_fields(node):
    return [f.name for f in dataclasses.fields(node) if f.init]


def _children(value):
    """Direct child values of a field value that may contain nodes."""
    if isinstance(value, Node):
        return [getattr(value, name) for name in _node_fields(value)]
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, Mapping):
        return [x for kv in value.items() for x in kv]
    return []


def save_json(node) -> str:
    """Serialize ``node`` (any IR node, IRModule, or container of them) to a JSON string.

    Examples
    --------
    >>> text = save_json(mod)               # doctest: +SKIP
    >>> structural_equal(load_json(text), mod)   # doctest: +SKIP
    True
    """
    index: dict[int, int] = {}
    table: list = []

    def encode(value):
        if isinstance(value, Node):
            return {"ref": index[id(value)]}
        if isinstance(value, enum.Enum):
            return {"enum": f"{type(value).__module__}:{type(value).__qualname__}.{value.name}"}
        if isinstance(value, bool | int | float | str) or value is None:
            return value
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, NDArray | np.ndarray):
            arr = np.asarray(value.handle if isinstance(value, NDArray) else value)
            return {"ndarray": base64.b64encode(arr.tobytes(order="C")).decode("ascii"), "dtype": arr.dtype.str,
                    "shape": list(arr.shape), "wrap": isinstance(value, NDArray)}
        if isinstance(value, tuple):
            return {"tuple": [encode(v) for v in value]}
        if isinstance(value, list):
            return [encode(v) for v in value]
        if isinstance(value, Mapping):
            return {"map": [[encode(k), encode(v)] for k, v in value.items()]}
        raise KilnError(f"save_json: cannot serialize a value of type {type(value).__name__}")

    # iterative post-order over nodes and the containers that hold them
    stack = [(node, False)]
    visiting: set[int] = set()
    keep_alive = []
    while stack:
        value, expanded = stack.pop()
        is_node = isinstance(value, Node)
        if is_node and id(value) in index:
            continue
        if not expanded:
            if is_node:
                if id(value) in visiting:
                    continue
                visiting.add(id(value))
            stack.append((value, True))
            stack.extend((child, False) for child in reversed(_children(value)))
            continue
        if is_node:
            fields = {name: encode(getattr(value, name)) for name in _node_fields(value)}
            index[id(value)] = len(table)
            keep_alive.append(value)
            table.append({"type": value.type_key, "fields": fields})
    return json.dumps({"kiln_json": 1, "root": encode(node), "nodes": table})


def load_json(text: str):
    """Rebuild the node that :func:`save_json` serialized."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise KilnError(f"load_json: not JSON ({exc})") from exc
    if not isinstance(doc, dict) or doc.get("kiln_json") != 1:
        raise KilnError("load_json: not a kiln IR document (missing 'kiln_json': 1)")
    nodes: list = []

    def decode(value):
        if isinstance(value, list):
            return [decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        if "ref" in value:
            return nodes[value["ref"]]
        if "tuple" in value:
            return tuple(decode(v) for v in value["tuple"])
        if "map" in value:
            return {decode(k): decode(v) for k, v in value["map"]}
        if "ndarray" in value:
            raw = base64.b64decode(value["ndarray"])
            arr = np.frombuffer(raw, dtype=np.dtype(value["dtype"])).reshape(value["shape"]).copy()
            return array(arr) if value.get("wrap") else arr
        if "enum" in value:
            module, _, qualname = value["enum"].partition(":")
            cls_name, _, member = qualname.rpartition(".")
            obj: Any = importlib.import_module(module)
            for part in cls_name.split("."):
                obj = getattr(obj, part)
            return obj[member]
        raise KilnError(f"load_json: unknown value encoding {sorted(value)}")

    for entry in doc["nodes"]:
        cls = node_type(entry["type"])
        fields = {name: decode(v) for name, v in entry["fields"].items()}
        maker = getattr(cls, "__from_json__", None)
        nodes.append(maker(fields) if maker is not None else cls(**fields))
    return decode(doc["root"])
