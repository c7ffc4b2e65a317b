"""JSON serialization of any IR node or IRModule, constants included.

The document is a node table in post-order (children before parents), so a shared node is written once and a
10,000-deep chain needs no recursion: ``{"kiln_json": 1, "root": <value>, "nodes": [{"type": key, "fields": {...}}]}``.
Values encode as JSON scalars, lists, ``{"ref": i}`` (node i), ``{"tuple": [...]}``, ``{"map": [[k, v], ...]}``,
``{"ndarray": <base64 bytes>, "dtype": ..., "shape": [...]}``, ``{"enum": "module:Class.NAME"}``.
"""

import base64
import binascii
import dataclasses
import enum
import importlib
import json
import math
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
    """Rebuild the node that :func:`save_json` serialized.

    The document may come from anywhere (a file, the metadata section of Relay text), so it is checked as it is
    read: a malformed one raises :class:`~kiln.error.KilnError` naming the node entry and what is wrong with it.
    Enumerations are looked up only in kiln's own modules, so a document cannot make kiln import anything else.
    """
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, TypeError, RecursionError) as exc:
        raise KilnError(f"load_json: not JSON ({exc})") from exc
    if not isinstance(doc, dict) or doc.get("kiln_json") != 1:
        raise KilnError("load_json: not a kiln IR document (missing 'kiln_json': 1)")
    if not isinstance(doc.get("nodes"), list) or "root" not in doc:
        raise KilnError("load_json: the document needs a 'nodes' list and a 'root'")
    nodes: list = []
    for k, entry in enumerate(doc["nodes"]):
        if not (isinstance(entry, dict) and isinstance(entry.get("type"), str) and isinstance(entry.get("fields"),
                                                                                              dict)):
            raise KilnError(f"load_json: node {k} is not {{'type': str, 'fields': {{...}}}}")
        where = f"load_json: node {k} ({entry['type']})"
        cls = node_type(entry["type"])
        fields = {name: _decode(v, nodes, where) for name, v in entry["fields"].items()}
        maker = getattr(cls, "__from_json__", None)
        try:
            nodes.append(maker(fields) if maker is not None else cls(**fields))
        except KilnError as exc:
            raise KilnError(f"{where}: {exc}") from exc
        except (TypeError, ValueError, ArithmeticError, LookupError, AttributeError) as exc:
            # a constructor given fields of the wrong kind fails wherever it first touches them
            raise KilnError(f"{where}: its fields do not make a {entry['type']} ({type(exc).__name__}: {exc})") \
                from exc
    return _decode(doc["root"], nodes, "load_json: the root")


def _decode(value, nodes: list, where: str):
    """A field value of the node table (``nodes`` holds the entries decoded so far; post-order means a reference
    points backwards)."""
    if isinstance(value, list):
        return [_decode(v, nodes, where) for v in value]
    if not isinstance(value, dict):
        return value
    if "ref" in value:
        ref = value["ref"]
        if not isinstance(ref, int) or isinstance(ref, bool) or not 0 <= ref < len(nodes):
            raise KilnError(f"{where}: refers to node {ref!r}, which is not an earlier node (there are "
                            f"{len(nodes)})")
        return nodes[ref]
    if "tuple" in value and isinstance(value["tuple"], list):
        return tuple(_decode(v, nodes, where) for v in value["tuple"])
    if "map" in value and isinstance(value["map"], list):
        if not all(isinstance(kv, list) and len(kv) == 2 for kv in value["map"]):
            raise KilnError(f"{where}: a map must be a list of [key, value] pairs")
        try:
            return {_decode(k, nodes, where): _decode(v, nodes, where) for k, v in value["map"]}
        except TypeError as exc:  # an unhashable key
            raise KilnError(f"{where}: a map key cannot be a {exc}") from exc
    if "ndarray" in value:
        return _decode_ndarray(value, where)
    if "enum" in value and isinstance(value["enum"], str):
        return _decode_enum(value["enum"], where)
    raise KilnError(f"{where}: unknown value encoding {sorted(value)}")


def _decode_ndarray(value: dict, where: str):
    try:
        raw = base64.b64decode(value["ndarray"], validate=True)
        dtype = np.dtype(value["dtype"])
    except (binascii.Error, TypeError, ValueError, KeyError) as exc:
        raise KilnError(f"{where}: an array's data or dtype is malformed ({exc})") from exc
    shape = value.get("shape")
    if not (isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                            for d in shape)):
        raise KilnError(f"{where}: an array's shape must be a list of non-negative ints, got {shape!r}")
    if dtype.hasobject or dtype.itemsize == 0:
        raise KilnError(f"{where}: an array cannot have dtype {dtype}")
    if math.prod(shape) * dtype.itemsize != len(raw):
        raise KilnError(f"{where}: an array of shape {shape} and dtype {dtype} needs "
                        f"{math.prod(shape) * dtype.itemsize} bytes, its data has {len(raw)}")
    arr = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    return array(arr) if value.get("wrap") else arr


def _decode_enum(spec: str, where: str):
    module, _, qualname = spec.partition(":")
    cls_name, _, member = qualname.rpartition(".")
    if module != "kiln" and not module.startswith("kiln."):
        raise KilnError(f"{where}: enumeration {spec!r} is not one of kiln's")
    try:
        obj: Any = importlib.import_module(module)
        for part in cls_name.split("."):
            obj = getattr(obj, part)
        if not (isinstance(obj, type) and issubclass(obj, enum.Enum)):
            raise TypeError(f"{cls_name} is not an enumeration")
        return obj[member]
    except (ImportError, AttributeError, TypeError, KeyError) as exc:
        raise KilnError(f"{where}: no enumeration member {spec!r} ({exc})") from exc
