"""Runtime containers at TVM's module path ``runtime.container``: the VM's ADT (a tuple is the ADT of tag 0),
``String`` and ``ShapeTuple`` (what runtime functions such as a graph executor's ``get_input_info`` return)."""

__all__ = ["ADT", "Array", "Map", "String", "ShapeTuple", "tuple_object"]


class Array(tuple):
    """An immutable sequence (TVM's ``ir.container.Array``, re-exported there)."""

    __slots__ = ()


class Map(dict):
    """A mapping (TVM's ``ir.container.Map``, re-exported there)."""

    __slots__ = ()

    def __repr__(self):
        return f"Map({dict.__repr__(self)})"


class String(str):
    """A runtime string (TVM's ``runtime.container.String``): a ``str``."""

    __slots__ = ()


class ShapeTuple(tuple):
    """A shape (TVM's ``runtime.container.ShapeTuple``): a tuple of ints, equal to any sequence of the same ints.

    Examples
    --------
    >>> ShapeTuple([1, 3]) == [1, 3]
    True
    """

    __slots__ = ()

    def __new__(cls, shape=()):
        return super().__new__(cls, (int(d) for d in shape))

    def __eq__(self, other):
        try:
            return len(self) == len(other) and all(a == int(b) for a, b in zip(self, other, strict=True))
        except (TypeError, ValueError):
            return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return tuple.__hash__(self)

    def __repr__(self):
        return f"ShapeTuple({list(self)})"


# last: the VM's modules import the containers above (a Map of late-bound constants), and this imports the VM
from .vm.objects import ADT  # noqa: E402


def tuple_object(fields=None) -> ADT:
    """A tuple value (the ADT of tag 0) of ``fields`` (TVM's ``runtime.container.tuple_object``)."""
    return ADT(0, fields or ())
