"""``runtime.Object``: the base class of every node kiln's IR is made of (TVM's root of the object system), so
``isinstance(x, kiln.runtime.Object)`` holds for IR nodes as TVM users expect."""

__all__ = ["Object"]


class Object:
    """Base class of IR nodes and the other values TVM treats as objects."""

    __slots__ = ()
