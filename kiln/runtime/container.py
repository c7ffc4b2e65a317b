"""Runtime containers at TVM's module path ``runtime.container``: the VM's ADT (a tuple is the ADT of tag 0)."""

from .vm.objects import ADT

__all__ = ["ADT", "tuple_object"]


def tuple_object(fields=None) -> ADT:
    """A tuple value (the ADT of tag 0) of ``fields`` (TVM's ``runtime.container.tuple_object``)."""
    return ADT(0, fields or ())
