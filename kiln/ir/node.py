"""The base of every IR node: immutability, reflection and a registry of node classes by type key.

Two kinds of node exist:

* graph nodes (``@dataclass(frozen=True, slots=True, eq=False)``): expressions and statements. ``==`` and ``hash`` are
  identity, as for TVM's ObjectRef, so memo tables keyed by nodes are O(1) and two ``%x`` stay different variables;
  structural comparison is :func:`kiln.ir.structural_equal`.
* value nodes (``@dataclass(frozen=True, slots=True)``): types, attributes, spans. Shallow, compared by value.

Field metadata steers the structural algorithms: ``IGNORE`` marks fields that structural equality and hashing skip
(spans, inferred types, variable names) and ``DEF`` marks fields that bind variables (function parameters, let
variables, loop variables); ``TYPE_DEF`` marks fields that bind type variables (type parameters). Binding fields are
visited before the others, type binders first.
"""

import dataclasses
from typing import Any, ClassVar

from ..error import ImmutableNodeError
from ..runtime.object import Object

IGNORE = {"structural": False}
DEF = {"def": True}
TYPE_DEF = {"def": True, "binds_types": True}  # binds type variables, which the other fields' types may use
OP_CALL_IGNORE = {"op_call_ignore": True}  # a call's type arguments: compared only in some cases (structural.py)

_NODE_TYPES: dict[str, type] = {}


def _refuse_assignment(self, name, value=None):
    raise ImmutableNodeError(f"{type(self).__name__}.{name} cannot be set: IR nodes are immutable (make a copy with "
                             f"node.with_fields({name}=...))")


class Node(Object):
    """Base class of IR nodes: see the module docstring."""

    __slots__ = ("__weakref__",)
    _is_var = False  # variables compare by binding, not by their fields
    _graph_node = False  # a dataflow node (Relay call, tuple, let, if): structural equality maps these one to one
    type_key: ClassVar[str]  # set for each subclass by __init_subclass__ unless the class sets it
    # every concrete node class is a dataclass; declared so type checkers accept dataclasses.fields(node)
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "type_key" not in cls.__dict__:
            cls.type_key = f"{cls.__module__.split('.')[1]}.{cls.__name__}"
        _NODE_TYPES[cls.type_key] = cls  # a slots dataclass re-creates the class; the last one wins
        if "__setattr__" in cls.__dict__ and "__dataclass_params__" in cls.__dict__:
            # the frozen slots dataclass's own __setattr__ refers to the class it replaced and fails with an
            # unrelated TypeError; an assignment gets this message instead
            setattr(cls, "__setattr__", _refuse_assignment)  # noqa: B010  (mypy refuses assigning a method)
            setattr(cls, "__delattr__", _refuse_assignment)  # noqa: B010

    def same_as(self, other) -> bool:
        """Whether ``other`` is this very node (TVM's ``ObjectRef.same_as``)."""
        return self is other

    def fields(self) -> dict[str, Any]:
        """Return the node's public fields by name, in declaration order.

        Examples
        --------
        >>> list(relay.Call(op, [x]).fields())   # doctest: +SKIP
        ['op', 'args', 'attrs', 'span', 'checked_type_']
        """
        ordered = sorted(dataclasses.fields(self), key=lambda f: f.kw_only is True)  # own fields, then span & co.
        return {f.name: getattr(self, f.name) for f in ordered if not f.name.startswith("_")}

    def with_fields(self, **changes):
        """Return a copy with ``changes`` applied, or ``self`` when every change is the value already held.

        An inferred type (``checked_type_``) is dropped when anything changes, since it may no longer hold.
        """
        if all(_same(getattr(self, name), value) for name, value in changes.items()):
            return self
        if "checked_type_" in self.__dataclass_fields__ and "checked_type_" not in changes:
            changes["checked_type_"] = None
        return dataclasses.replace(self, **changes)


def _same(old, new) -> bool:
    """Identity, looking one level into tuples (children are stored as tuples)."""
    if old is new:
        return True
    return (
        isinstance(old, tuple) and isinstance(new, tuple | list) and len(old) == len(new)
        and all(a is b for a, b in zip(old, new, strict=True))
    )


def node_type(type_key: str) -> type:
    """Return the node class registered under ``type_key`` (such as ``"relay.Call"``)."""
    from ..error import KilnError

    cls = _NODE_TYPES.get(type_key)
    if cls is None:
        raise KilnError(f"unknown IR node type {type_key!r}")
    return cls


def is_value_node(obj) -> bool:
    """Whether ``obj`` is a value node (compared by ``==``) rather than a graph node."""
    params = getattr(type(obj), "__dataclass_params__", None)
    return params is not None and params.eq


def structural_fields(cls, op_call=False) -> tuple[tuple[str, bool], ...]:
    """Return ``(name, binds_variables)`` for each field structural algorithms visit, cached per class.

    ``op_call``: skip the fields marked ``OP_CALL_IGNORE`` (a call's type arguments, which structural equality
    compares only between calls of functions that both give them, and hashing never uses).
    """
    spec = _STRUCTURAL_FIELDS.get((cls, op_call))
    if spec is None:
        fields = [f for f in dataclasses.fields(cls)
                  if f.metadata.get("structural", True) and not f.name.startswith("_")
                  and not (op_call and f.metadata.get("op_call_ignore"))]
        # binding fields first, type binders before all: a function's type parameters are declared after the
        # parameters and types that use them
        fields.sort(key=lambda f: 0 if f.metadata.get("binds_types") else 1 if f.metadata.get("def") else 2)
        spec = tuple((f.name, bool(f.metadata.get("def"))) for f in fields)
        _STRUCTURAL_FIELDS[(cls, op_call)] = spec
    return spec


_STRUCTURAL_FIELDS: dict[tuple, tuple] = {}
