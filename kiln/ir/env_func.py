"""``EnvFunc``: a global function referred to by name inside the IR (TVM's ``tvm.ir.EnvFunc``), as a type
relation names the function that checks it. Two EnvFuncs of one name are equal, and ``EnvFunc.get`` returns the
same object for a name, so IR holding one compares and serializes by the name."""

from dataclasses import dataclass

from ..error import KilnError
from ..runtime.packed_func import get_global_func
from .node import Node

_BY_NAME: dict = {}


@dataclass(frozen=True, slots=True)
class EnvFunc(Node):
    """The global function ``name``; calling the EnvFunc calls it."""

    name: str

    type_key = "ir.EnvFunc"

    @staticmethod
    def get(name) -> "EnvFunc":
        """The EnvFunc of the registered global function ``name``; a KilnError when none is registered."""
        found = _BY_NAME.get(name)
        if found is None:
            if get_global_func(name, allow_missing=True) is None:
                raise KilnError(f"EnvFunc.get: no global function is registered as {name!r}")
            found = _BY_NAME[name] = EnvFunc(name)
        return found

    def __call__(self, *args):
        return get_global_func(self.name)(*args)


__all__ = ["EnvFunc"]
