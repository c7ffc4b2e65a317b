"""Structural equality and hashing of IR graphs.

Both walk the graph iteratively (a chain of 10,000 operators must not hit Python's recursion limit) with memo tables
keyed by node identity, so a subexpression shared by many users costs once: time is linear in distinct nodes.

Variables are compared by binding: a variable at a binding site (a field marked ``DEF``) is mapped to its counterpart,
and later uses must agree with that mapping. A free variable (used before any binding) equals only itself, unless
``map_free_vars`` maps it on first use. Relay's dataflow nodes (calls, tuples, lets, ifs: ``_graph_node``) are
matched one to one, as TVM's graph nodes are: ``add(%y, %y)`` with one shared ``%y = add(%x, %x)`` differs from
``add(add(%x, %x), add(%x, %x))``, and hashing tells them apart too (a repeated dataflow node hashes as a reference
to its first occurrence). Hashing is consistent with this: bound variables hash by the order in which
they are bound, free variables by identity (or by first-use order under ``map_free_vars``). Type variables follow
the same rules (bound by function type parameters and data type definitions); types that may hold them (tuple,
function, call and reference types) are walked field by field, other value nodes compare with ``==``.
"""

from collections.abc import Mapping
from typing import Any, TypeAlias

import numpy as np

from ..runtime.ndarray import NDArray
from .attrs import DictAttrs
from .node import Node, is_value_node, structural_fields
from .op import Op
from .type import Any as AnyDim
from .type import FuncType, IncompleteType, TensorType, TupleType
from .type_poly import RelayRefType, TypeCall, TypeRelation

_SEQUENCE = (tuple, list)
_LENGTH, _MAP_LENGTH = object(), object()  # stack markers: check two sequences' (maps') lengths
_FREE = "free"  # binding mode inside an expression of a binding field: free variables map on first sight
# value nodes compared and hashed field by field rather than by ``==``: types that may hold type variables, which
# correspond by binding (``fn [A](A) -> A`` equals ``fn [B](B) -> B``), and free-form attributes, whose values may be
# dicts keyed by variables (``{%x.vid: 1}``: compared by name, as the module's functions are)
_COMPOSITE_TYPES = (TupleType, FuncType, TypeCall, RelayRefType, TypeRelation, DictAttrs)


def _array_of(value):
    if isinstance(value, NDArray):
        return value.handle
    return value if isinstance(value, np.ndarray) else None


def _var_keyed(mapping) -> bool:
    return bool(mapping) and all(hasattr(k, "dtype") and hasattr(k, "name_hint") for k in mapping)


def _mapping_items(mapping):
    """Items of a mapping in a canonical order (keys may be GlobalVars, compared by name). A PrimFunc's buffer map,
    keyed by its TIR parameters (which carry a dtype), keeps the parameters' order: they correspond by position, and
    their names need not agree (a printed function names the parameter after its buffer)."""
    if _var_keyed(mapping):
        return list(mapping.items())
    return sorted(mapping.items(), key=lambda kv: str(getattr(kv[0], "name_hint", kv[0])))


def _scalar_equal(lhs, rhs) -> bool:
    if type(lhs) is not type(rhs):
        return False
    return lhs == rhs or (lhs != lhs and rhs != rhs)  # NaN equals NaN structurally


def _skips_type_args(lhs, rhs) -> bool:
    """Whether the type arguments of two calls are left out of the comparison: always for a call of a primitive
    operator (they are just its argument types), and when one call is untyped and gives none (it leaves them to
    inference, so it matches a typed call whose type arguments inference filled)."""
    if type(lhs).__name__ != "Call":
        return False
    if isinstance(lhs.op, Op):
        return True
    return any(not a.type_args and a.checked_type_ is None and b.checked_type_ is not None
               for a, b in ((lhs, rhs), (rhs, lhs)))


def _hash_skips_type_args(node) -> bool:
    """Whether hashing leaves out a call's type arguments: unless the call is untyped and gives some (a typed call
    may equal an untyped one without them, see :func:`_skips_type_args`)."""
    if type(node).__name__ != "Call":
        return False
    return isinstance(node.op, Op) or node.checked_type_ is not None or not node.type_args


class _Mismatch(Exception):
    pass




def _walks_fields(node) -> bool:
    """Whether a value node is compared field by field: a composite type, or a tensor type with a symbolic dimension
    (``Tensor[(b, 16)]`` in two copies of a function with their own size variable ``b``: the parameters bind it, as
    TVM's DefEqual does, so the copies are equal)."""
    if isinstance(node, _COMPOSITE_TYPES):
        return True
    return type(node) is TensorType and any(_symbolic(d) for d in node.shape)


def _symbolic(dim) -> bool:
    """Whether a dimension is a size variable (an ``Any`` named by one), compared as a variable."""
    return type(dim) is AnyDim and dim.var is not None


# where a compared part sits: (parent link, label such as ".body" or "[0]"), from the root's None
_PathLink: TypeAlias = "tuple"  # (parent link, label, step): rebuilt into a path only on failure


def _identity(var):
    """What makes a variable itself: a Relay Var's ``vid``, shared by its typed copies (two copies of one variable
    are the same variable, as TVM compares them), otherwise the node."""
    return getattr(var, "vid", None) or var


def _first_mismatch(lhs, rhs, map_free_vars):
    """Return ``None`` when equal, else ``(path_links, lhs_part, rhs_part)`` of the first difference in pre-order."""
    lmap: dict[int, object] = {}
    rmap: dict[int, object] = {}
    seen: set[tuple[int, int]] = set()
    lgraph: dict[int, object] = {}
    rgraph: dict[int, object] = {}
    # entries: (lhs, rhs, path link, binds_variables); a path link is (parent link, label), rebuilt only on failure
    stack: list[tuple[Any, Any, Any, Any]] = [(lhs, rhs, None, False)]
    while stack:
        l, r, link, is_def = stack.pop()
        if is_def is _LENGTH or is_def is _MAP_LENGTH:
            return _length_mismatch(l, r, link, is_def is _MAP_LENGTH)
        if isinstance(l, Node):
            if type(l) is not type(r):
                return link, l, r
            if l._is_var or type(l) is IncompleteType:  # a hole is a free variable of types
                lkey, rkey = _identity(l), _identity(r)
                lid, rid = id(lkey), id(rkey)
                if is_def is not True:
                    if lid in lmap:
                        if lmap[lid] is not rkey:
                            return link, l, r
                        continue
                    if rid in rmap:
                        return link, l, r
                    if lkey is rkey:
                        if is_def == _FREE:  # bound here: later uses must keep to it
                            lmap[lid], rmap[rid] = rkey, lkey
                        continue
                    if not map_free_vars and is_def != _FREE:
                        return link, l, r
                lmap[lid], rmap[rid] = rkey, lkey
            elif is_value_node(l):
                if not _walks_fields(l):
                    if l != r:
                        return link, l, r
                    continue
                # a composite type may hold type variables bound by an enclosing binder: compare field by field
            elif l is r:
                continue
            elif l._graph_node:
                # a dataflow node corresponds to exactly one node on the other side: sharing is structure
                mapped = lgraph.get(id(l))
                if mapped is not None:
                    if mapped is r:
                        continue
                    return link, l, r
                if id(r) in rgraph:
                    return link, l, r
                lgraph[id(l)], rgraph[id(r)] = r, l
            else:
                key = (id(l), id(r))
                if key in seen:
                    continue
                seen.add(key)
            # an expression in a binding field (``x * 8`` in a buffer's shape) binds the free variables in it, as
            # TVM's DefEqual does: they map on first sight, consistently after
            inner = _FREE if is_def else False
            for name, binds in reversed(structural_fields(type(l), _skips_type_args(l, r))):
                stack.append((getattr(l, name), getattr(r, name), (link, "." + name, ("attr", name)), binds or inner))
        elif isinstance(l, _SEQUENCE):
            if not isinstance(r, _SEQUENCE):
                return link, l, r
            if len(l) != len(r):  # checked after the common elements, whose differences TVM reports first
                stack.append((l, r, link, _LENGTH))
            for i in range(min(len(l), len(r)) - 1, -1, -1):
                stack.append((l[i], r[i], (link, f"[{i}]", ("index", i)), is_def))
        elif isinstance(l, Mapping):
            if not isinstance(r, Mapping):
                return link, l, r
            litems, ritems = _mapping_items(l), _mapping_items(r)
            if len(l) != len(r):
                stack.append((litems, ritems, link, _MAP_LENGTH))
            for (lk, lv), (rk, rv) in reversed(list(zip(litems, ritems, strict=False))):
                label = _key_label(lk)
                if _var_keyed(l):  # TIR variables: compared as variables (by binding), not by name
                    stack.append((lv, rv, (link, label, ("map", lk)), False))
                    stack.append((lk, rk, (link, label, ("map", lk)), False))
                    continue
                if str(getattr(lk, "name_hint", lk)) != str(getattr(rk, "name_hint", rk)):
                    return (link, label, ("map", lk)), lk, rk
                stack.append((lv, rv, (link, label, ("map", lk)), False))
        elif _symbolic(l):
            if not _symbolic(r):
                return link, l, r
            stack.append((l.var, r.var, link, is_def))
        elif (la := _array_of(l)) is not None:
            ra = _array_of(r)
            if ra is None or la.shape != ra.shape or la.dtype != ra.dtype or not np.array_equal(la, ra, equal_nan=True):
                return link, l, r
        elif not _scalar_equal(l, r):
            return link, l, r
    return None


def _key_label(key) -> str:
    """The path step of a map entry: ``['x']``, or ``[I.GlobalVar("main")]`` for a module's function (TVM's)."""
    if type(key).__name__ == "GlobalVar":
        return f'[I.GlobalVar("{key.name_hint}")]'
    return f"[{str(getattr(key, 'name_hint', key))!r}]"


class _PathPair(tuple):
    """Different paths on the two sides (one side lacks an element): ``(lhs link, rhs link)``."""


def _length_mismatch(l, r, link, is_map):
    """The first element one side lacks: TVM's missing_array_element / missing_map_entry on that side."""
    n = min(len(l), len(r))
    present: tuple
    missing: tuple
    if is_map:
        longer = l if len(l) > len(r) else r
        key = longer[n][0]
        present = (link, _key_label(key), ("map", key))
        missing = (link, "[<missing entry>]", ("missing_map",))
    else:
        present = (link, f"[{n}]", ("index", n))
        missing = (link, f"[<missing element #{n}>]", ("missing_index", n))
    pair = _PathPair((present, missing) if len(l) > len(r) else (missing, present))
    return pair, l, r


def _steps(link) -> list:
    out = []
    while link is not None:
        link, label, step = link[0], link[1], link[2] if len(link) > 2 else None
        out.append((label, step))
    return out[::-1]


def _render_path(link) -> str:
    if isinstance(link, _PathPair):
        link = link[0]
    return "<root>" + "".join(label for label, _ in _steps(link))


def first_mismatch_paths(lhs, rhs, map_free_vars=False):
    """``None`` when ``lhs`` and ``rhs`` are structurally equal, else the ``(lhs_path, rhs_path)`` ObjectPaths of
    their first difference (TVM's ``get_first_structural_mismatch``)."""
    from ..runtime.object_path import ObjectPath

    found = _first_mismatch(lhs, rhs, map_free_vars)
    if found is None:
        return None
    link = found[0]
    links = tuple(link) if isinstance(link, _PathPair) else (link, link)
    paths = []
    for one in links:
        path = ObjectPath.root()
        for _, step in _steps(one):
            path = ObjectPath(path, step)
        paths.append(path)
    return paths[0], paths[1]


def structural_equal(lhs, rhs, map_free_vars=False) -> bool:
    """Whether ``lhs`` and ``rhs`` are the same IR up to variable renaming (bound variables correspond by binding).

    Parameters
    ----------
    lhs, rhs : Node, IRModule, tuple, or scalar
        The values to compare.
    map_free_vars : bool
        Whether a free variable of ``lhs`` may correspond to a different free variable of ``rhs``.

    Examples
    --------
    >>> x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    >>> structural_equal(relay.Function([x], x), relay.Function([y], y))   # doctest: +SKIP
    True
    """
    lhs, rhs = _numbers_as_constants(lhs, rhs)
    return _first_mismatch(lhs, rhs, map_free_vars) is None


def _numbers_as_constants(lhs, rhs):
    """A Python number compared with an IR node is the constant ``runtime.convert`` makes of it (``32`` is
    ``T.int32(32)``), as TVM converts both sides first."""
    from ..runtime.convert import convert

    # ``x == y`` on TIR expressions is an EqualOp until used as an expression (TVM converts it the same way)
    lhs, rhs = (v.asobject() if hasattr(v, "asobject") else v for v in (lhs, rhs))
    if isinstance(rhs, Node) and isinstance(lhs, int | float) and not isinstance(lhs, bool):
        lhs = convert(lhs)
    if isinstance(lhs, Node) and isinstance(rhs, int | float) and not isinstance(rhs, bool):
        rhs = convert(rhs)
    # a bool against a TIR condition: TVM converts it to the constant ``T.bool(True)`` too
    if isinstance(rhs, bool) and getattr(lhs, "dtype", None) == "bool":
        rhs = convert(rhs)
    if isinstance(lhs, bool) and getattr(rhs, "dtype", None) == "bool":
        lhs = convert(lhs)
    if isinstance(lhs, list | tuple) and isinstance(rhs, list | tuple) and len(lhs) == len(rhs):
        pairs = [_numbers_as_constants(a, b) for a, b in zip(lhs, rhs, strict=True)]
        lhs, rhs = type(lhs)(p[0] for p in pairs), type(rhs)(p[1] for p in pairs)
    return lhs, rhs


def assert_structural_equal(lhs, rhs, map_free_vars=False):
    """Raise ``ValueError`` naming the path of the first mismatch when ``lhs`` and ``rhs`` differ structurally."""
    lhs, rhs = _numbers_as_constants(lhs, rhs)
    found = _first_mismatch(lhs, rhs, map_free_vars)
    if found is None:
        return
    link, l, r = found
    path = _render_path(link)
    raise ValueError(
        f"StructuralEqual check failed, caused by lhs at {path}:\n{_short(l)}\nand rhs at {path}:\n{_short(r)}\n"
        f"whole lhs:\n{_short(lhs, 4000)}\nwhole rhs:\n{_short(rhs, 4000)}"
    )


def _short(value, limit=600) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + " ..."


def structural_hash(node, map_free_vars=False) -> int:
    """Return a hash consistent with :func:`structural_equal` (equal values hash equally).

    Variables bound inside ``node`` hash by binding order, so alpha-equivalent functions hash the same.
    """
    memo: dict[int, int] = {}
    graph_index: dict[int, int] = {}
    var_index: dict[int, int] = {}
    values: list[int] = []
    # entries: (value, binds_variables, children_count or -1 before expansion)
    stack: list[tuple[Any, Any, int]] = [(node, False, -1)]
    while stack:
        v, is_def, count = stack.pop()
        if count >= 0:  # children are on the value stack: combine them
            children = tuple(values[len(values) - count :]) if count else ()
            del values[len(values) - count :]
            h = hash((type(v).__name__, children))
            if isinstance(v, Node) and not is_value_node(v) and not v._is_var and type(v) is not IncompleteType \
                    and not is_def:  # under a binding field the hash depends on the context
                memo[id(v)] = h
            values.append(h)
            continue
        if isinstance(v, Node):
            if v._is_var or type(v) is IncompleteType:
                vid = id(_identity(v))
                if is_def is True or ((map_free_vars or is_def == _FREE) and vid not in var_index):
                    var_index[vid] = len(var_index)
                    # a definition is compared with its fields (``let %v: int32``), so it hashes with them
                    fields = tuple(getattr(v, name) for name, _ in structural_fields(type(v)))
                    values.append(hash(("var", var_index[vid], structural_hash(fields, map_free_vars=True))))
                elif vid in var_index:
                    values.append(hash(("var", var_index[vid])))
                else:
                    values.append(hash(("free_var", vid)))
                continue
            if is_value_node(v) and not _walks_fields(v):
                values.append(hash(v))
                continue
            if v._graph_node:
                index = graph_index.get(id(v))
                if index is not None:  # a shared dataflow node: the sharing is part of the structure
                    values.append(hash(("graph_ref", index)))
                    continue
                graph_index[id(v)] = len(graph_index)
            else:
                cached = None if is_def else memo.get(id(v))
                if cached is not None:
                    values.append(cached)
                    continue
            spec = structural_fields(type(v), _hash_skips_type_args(v))
            stack.append((v, is_def, len(spec)))
            inner = _FREE if is_def else False
            for name, binds in reversed(spec):
                stack.append((getattr(v, name), binds or inner, -1))
        elif isinstance(v, _SEQUENCE):
            stack.append((v, is_def, len(v)))
            for item in reversed(v):
                stack.append((item, is_def, -1))
        elif isinstance(v, Mapping):
            items = _mapping_items(v)
            stack.append((v, is_def, 2 * len(items)))  # a key and a value per item
            var_keyed = _var_keyed(v)
            for key, item in reversed(items):
                stack.append((item, False, -1))
                stack.append((key, False, -1) if var_keyed else (str(getattr(key, "name_hint", key)), False, -1))
        elif _symbolic(v):
            stack.append((v.var, is_def, -1))
        elif (arr := _array_of(v)) is not None:
            values.append(hash((arr.shape, arr.dtype.str, arr.tobytes())))
        else:
            values.append(hash((type(v).__name__, v)))
    return values[-1]
