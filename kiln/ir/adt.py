"""Algebraic data types: ``TypeData`` (a type definition) and its ``Constructor``s (TVM's ``tvm.ir.adt``).

``type List[A] { Cons(A, List[A]), Nil }`` is a :class:`TypeData` whose ``header`` is the :class:`GlobalTypeVar`
``List``, whose ``type_vars`` are ``[A]`` and whose constructors are ``Cons`` (inputs ``A`` and ``List[A]``) and
``Nil``. A constructor is a Relay expression: calling it (``cons(x, xs)``) builds a value of the data type.

Each constructor carries a ``tag``, the number the interpreter and the VM store in a value to say which constructor
made it. It is fixed when the TypeData is built: the constructor's position in the definition, prefixed by a byte
of a stable hash of the type's name, so constructors of different types have different tags (as TVM's
``RegisterConstructors`` does); the prefix is never 0, so no constructor shares the tag of tuples in the VM.
"""

import zlib
from dataclasses import dataclass, field

from ..error import KilnError
from .expr import RelayExpr
from .node import IGNORE, TYPE_DEF
from .type import Type
from .type_poly import GlobalTypeVar, TypeVar, _check_types


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Constructor(RelayExpr):
    """A constructor of an algebraic data type: ``name_hint(inputs...)`` makes a value of ``belong_to``.

    Parameters
    ----------
    name_hint : str
        The constructor's name (``Cons``).
    inputs : list of Type
        The types of its fields (they may use the data type's type variables).
    belong_to : GlobalTypeVar
        The data type it constructs.
    """

    name_hint: str
    inputs: tuple
    belong_to: GlobalTypeVar
    tag: int = field(default=-1, kw_only=True, metadata=IGNORE)
    # the TypeData defining this constructor (its type parameters give the constructor's type), set by the TypeData
    _type_data: object = field(default=None, init=False, repr=False, metadata=IGNORE)

    def __post_init__(self):
        if not isinstance(self.name_hint, str):
            raise KilnError(f"Constructor: name_hint must be a str, not {type(self.name_hint).__name__}")
        object.__setattr__(self, "inputs", tuple(self.inputs))
        _check_types(self.inputs, f"input of constructor {self.name_hint}")
        if not isinstance(self.belong_to, GlobalTypeVar):
            raise KilnError(f"Constructor {self.name_hint}: belong_to must be a GlobalTypeVar, not "
                            f"{type(self.belong_to).__name__}")

    def __call__(self, *args):
        """Apply the constructor to expressions (a Relay ``Call``)."""
        from ..runtime.packed_func import get_global_func

        return get_global_func("relay.Call")(self, list(args))

    def __str__(self):
        return self.name_hint

    __repr__ = __str__


def constructor_tag(type_name: str, index: int) -> int:
    """The tag of the ``index``-th constructor of the data type ``type_name``: never 0, the VM's tag of tuples."""
    return (zlib.crc32(type_name.encode()) % 127 + 1) << 24 | index


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TypeData(Type):
    """The definition of an algebraic data type: ``type header[type_vars] { constructors }``.

    An empty constructor list declares an external type (``extern type T[A]``).
    """

    header: GlobalTypeVar
    type_vars: tuple = field(default=(), metadata=TYPE_DEF)
    constructors: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "type_vars", tuple(self.type_vars))
        object.__setattr__(self, "constructors", tuple(self.constructors))
        if not isinstance(self.header, GlobalTypeVar):
            raise KilnError(f"TypeData: the header must be a GlobalTypeVar, not {type(self.header).__name__}")
        for tv in self.type_vars:
            if not isinstance(tv, TypeVar):
                raise KilnError(f"TypeData {self.header}: a type parameter must be a TypeVar, not {type(tv).__name__}")
        names = set()
        for index, ctor in enumerate(self.constructors):
            if not isinstance(ctor, Constructor):
                raise KilnError(f"TypeData {self.header}: constructors must be Constructors, not {type(ctor).__name__}")
            if ctor.belong_to != self.header:
                raise KilnError(f"TypeData {self.header}: constructor {ctor.name_hint} belongs to {ctor.belong_to}")
            if ctor.name_hint in names:
                raise KilnError(f"TypeData {self.header}: constructor {ctor.name_hint} is defined twice")
            names.add(ctor.name_hint)
            # the tag (the position in this definition) and the link back are derived data, set once here like a
            # cached value
            object.__setattr__(ctor, "tag", constructor_tag(self.header.name_hint, index))
            object.__setattr__(ctor, "_type_data", self)

    def __str__(self):
        params = f"[{', '.join(str(t) for t in self.type_vars)}]" if self.type_vars else ""
        return f"type {self.header}{params} {{ {', '.join(c.name_hint for c in self.constructors)} }}"

    __repr__ = __str__


__all__ = ["Constructor", "TypeData", "constructor_tag"]
