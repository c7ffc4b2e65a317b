"""Attribute records: per-operator attrs (``Conv2DAttrs`` ...) and ``DictAttrs`` for functions and modules.

Per-operator records subclass :class:`Attrs` as frozen slotted dataclasses; they validate and normalize their
values in ``__post_init__`` (lists become tuples) and raise :class:`kiln.error.OpAttributeInvalid` naming the field.
"""

import dataclasses
from dataclasses import dataclass

from ..error import OpAttributeInvalid
from .node import Node

_IMMEDIATES = ("tir.IntImm", "tir.FloatImm", "tir.StringImm")


def _freeze(value):
    """An attribute value as kiln stores it: sequences as tuples, and TIR immediates as the Python values they hold
    (TVM's ``runtime.convert`` makes them of Python values), so ``with_attr("Primitive", tir.IntImm("int32", 1))``
    equals ``with_attr("Primitive", 1)``."""
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if getattr(type(value), "type_key", None) in _IMMEDIATES:
        return bool(value.value) if getattr(value, "dtype", "") == "bool" else value.value
    return value


class Attrs(Node):
    """Base of attribute records; fields read as attributes or with ``attrs["name"]``."""

    __slots__ = ()

    def keys(self):
        """Names of the attributes, in declaration order."""
        return [f.name for f in dataclasses.fields(self)]

    def __getitem__(self, key):
        if key not in self.keys():
            raise KeyError(f"{type(self).__name__} has no attribute {key!r}")
        return getattr(self, key)

    def get(self, key, default=None):
        """The attribute ``key``, or ``default`` when the record has none."""
        return getattr(self, key) if key in self.keys() else default

    def non_default_items(self):
        """``(name, value)`` for each attribute whose value differs from its default (what the printer shows), and
        for each field marked ``metadata={"always_printed": True}`` (a TVM field declared without a default, which
        TVM's printer always shows, such as transpose's ``axes``)."""
        items = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            default = f.default if f.default is not dataclasses.MISSING else dataclasses.MISSING
            if default is dataclasses.MISSING or value != default or f.metadata.get("always_printed"):
                items.append((f.name, value))
        return items

    def _normalize(self, *names):
        for name in names:
            object.__setattr__(self, name, _freeze(getattr(self, name)))

    def _require(self, condition, field, message):
        if not condition:
            raise OpAttributeInvalid(f"{type(self).__name__}.{field}: {message} (got {getattr(self, field)!r})")


@dataclass(frozen=True, slots=True)
class DictAttrs(Attrs):
    """Free-form attributes of a function or module: a read-only mapping from str to int/float/str/tuple.

    Examples
    --------
    >>> attrs = DictAttrs.make({"Primitive": 1})
    >>> attrs["Primitive"]
    1
    """

    entries: tuple = ()

    @staticmethod
    def make(mapping=None) -> "DictAttrs":
        """Build from a dict (or another DictAttrs, returned as is)."""
        if isinstance(mapping, DictAttrs):
            return mapping
        return DictAttrs(tuple(sorted((str(k), _freeze(v)) for k, v in (mapping or {}).items())))

    def keys(self):
        return [k for k, _ in self.entries]

    def items(self):
        """``(key, value)`` pairs sorted by key."""
        return list(self.entries)

    def __getitem__(self, key):
        for k, v in self.entries:
            if k == key:
                return v
        raise KeyError(key)

    def get(self, key, default=None):
        for k, v in self.entries:
            if k == key:
                return v
        return default

    def __contains__(self, key):
        return any(k == key for k, _ in self.entries)

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.entries)

    def with_attr(self, key, value) -> "DictAttrs":
        """Return a copy with ``key`` set to ``value``."""
        return DictAttrs.make({**dict(self.entries), key: value})

    def __str__(self):
        return "{" + ", ".join(f"{k}={v}" for k, v in self.entries) + "}"


@dataclass(frozen=True, slots=True)
class TestAttrs(Attrs):
    """TVM's attribute record for testing the attribute machinery (``tvm.ir.make_node("attrs.TestAttrs", ...)``)."""

    axis: int = 10
    name: str = "abc"
    padding: tuple = (0, 0)
    func: object = None

    type_key = "attrs.TestAttrs"
    __test__ = False  # not a pytest test class

    def __post_init__(self):
        self._normalize("padding")


def make_node(type_key: str, **kwargs):
    """Build the IR node registered as ``type_key`` from its fields (TVM's ``tvm.ir.make_node``); ``"DictAttrs"``
    makes free-form attributes of the keyword arguments.

    Examples
    --------
    >>> make_node("DictAttrs", Primitive=1)["Primitive"]
    1
    """
    if type_key in ("DictAttrs", "ir.DictAttrs"):
        return DictAttrs.make(kwargs)
    from ..error import KilnError
    from .node import node_type

    cls = node_type(type_key)
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise KilnError(f"make_node({type_key!r}): {exc}") from None
