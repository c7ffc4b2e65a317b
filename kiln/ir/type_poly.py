"""Polymorphic and algebraic types: type variables, type calls, references, type relations, and the full FuncType.

* :class:`TypeVar` (``A`` in ``fn [A](A) -> A``) is a graph node compared by identity, like a Relay ``Var``: two
  type parameters are the same only when bound at corresponding places (``FuncType.type_params``,
  ``Function.type_params``, ``TypeData.type_vars``), which :func:`kiln.ir.structural_equal` checks.
* :class:`~kiln.ir.type.IncompleteType` (defined with the monomorphic types, re-exported here) is a hole type
  inference fills; it is compared by identity.
* :class:`GlobalTypeVar` names an algebraic data type in a module (``List``); like ``GlobalVar`` it is compared by
  name. Applying it to types makes a :class:`TypeCall` (``List[A]``).
* :class:`RelayRefType` is the type of a mutable reference (``ref(float32)``).
* :class:`FuncType` extends the monomorphic function type of :mod:`kiln.ir.type` with type parameters and type
  constraints (:class:`TypeRelation`). ``==`` on it is structural equality, so ``fn [A](A) -> A`` equals
  ``fn [B](B) -> B`` as in TVM.
"""

from dataclasses import dataclass, field
from enum import IntEnum

from ..error import KilnError
from .node import IGNORE, TYPE_DEF, Node
from .type import FuncType as MonoFuncType
from .type import IncompleteType, Type


class TypeKind(IntEnum):
    """What a type variable stands for (TVM's ``relay.TypeKind``)."""

    Type = 0
    ShapeVar = 1
    BaseType = 2
    Constraint = 4
    AdtHandle = 5
    TypeData = 6


@dataclass(frozen=True, slots=True, eq=False)
class TypeVar(Type):
    """A type parameter (``A``); the same only as itself, or as its counterpart at a corresponding binding site.

    Examples
    --------
    >>> a = TypeVar("a")
    >>> a == a, a == TypeVar("a")
    (True, False)
    """

    name_hint: str = field(metadata=IGNORE)
    kind: int = TypeKind.Type
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    _is_var = True

    def __post_init__(self):
        if not isinstance(self.name_hint, str):
            raise KilnError(f"TypeVar: name_hint must be a str, not {type(self.name_hint).__name__}")
        object.__setattr__(self, "kind", int(self.kind))

    def __str__(self):
        return self.name_hint

    __repr__ = __str__


@dataclass(frozen=True, slots=True)
class GlobalTypeVar(Type):
    """The name of an algebraic data type of a module (``List``). Two GlobalTypeVars with one name are equal.

    Calling it on types gives the :class:`TypeCall` of the data type on them: ``List(a)`` is ``List[a]``.
    """

    name_hint: str
    kind: int = field(default=TypeKind.AdtHandle, compare=False)
    span: object = field(default=None, kw_only=True, compare=False, metadata=IGNORE)

    def __post_init__(self):
        if not isinstance(self.name_hint, str):
            raise KilnError(f"GlobalTypeVar: name_hint must be a str, not {type(self.name_hint).__name__}")
        object.__setattr__(self, "kind", int(self.kind))

    def __call__(self, *args):
        """The type ``self[args...]``; without arguments the type is ``self`` itself, the form kiln's type
        inference gives a data type without parameters (``nat()`` is ``nat``)."""
        return TypeCall(self, args) if args else self

    def __str__(self):
        return self.name_hint


@dataclass(frozen=True, slots=True)
class TypeCall(Type):
    """A data type applied to type arguments: ``List[float32]``."""

    func: Type
    args: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "args", tuple(self.args))
        _check_types(self.args, "TypeCall argument")

    def __str__(self):
        return f"{self.func}[{', '.join(str(a) for a in self.args)}]" if self.args else str(self.func)


@dataclass(frozen=True, slots=True)
class RelayRefType(Type):
    """The type of a mutable reference cell holding a value of type ``value`` (``ref(float32)``)."""

    value: Type

    def __post_init__(self):
        _check_types((self.value,), "RelayRefType value")

    def __str__(self):
        return f"ref({self.value})"


class TypeConstraint(Type):
    """Base of constraints a function type places on its type parameters."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class TypeRelation(TypeConstraint):
    """``func(args[:num_inputs]) -> args[num_inputs:]`` must hold: how an operator's type relation reads in a
    function type (TVM's ``TypeRelation``)."""

    func: object
    args: tuple
    num_inputs: int
    attrs: object = None

    def __post_init__(self):
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "num_inputs", int(self.num_inputs))

    def __str__(self):
        name = getattr(self.func, "name", self.func)
        return f"{name}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True, slots=True, eq=False)
class FuncType(MonoFuncType):
    """``fn [type_params](arg_types) -> ret_type``, with optional ``type_constraints``.

    ``==`` is structural equality: corresponding type parameters are identified, so ``fn [A](A) -> A`` equals
    ``fn [B](B) -> B``; a free type variable equals only itself.

    Parameters
    ----------
    arg_types : list of Type
        The parameter types.
    ret_type : Type
        The result type.
    type_params : list of TypeVar, optional
        The type parameters the types above may use.
    type_constraints : list of TypeConstraint, optional
        Relations among them.
    """

    type_params: tuple = field(default=(), metadata=TYPE_DEF)
    type_constraints: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "arg_types", tuple(self.arg_types))
        object.__setattr__(self, "type_params", tuple(self.type_params))
        object.__setattr__(self, "type_constraints", tuple(self.type_constraints))
        _check_types(self.arg_types, "FuncType argument type")
        _check_types((self.ret_type,), "FuncType return type")
        for tv in self.type_params:
            if not isinstance(tv, TypeVar):
                raise KilnError(f"FuncType: a type parameter must be a TypeVar, not {type(tv).__name__}")

    def __eq__(self, other):
        from .structural import structural_equal

        if not isinstance(other, Type):
            return NotImplemented
        return structural_equal(self, other)

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self):
        from .structural import structural_hash

        return structural_hash(self)

    def __str__(self):
        params = f"[{', '.join(str(t) for t in self.type_params)}]" if self.type_params else ""
        return f"fn {params}({', '.join(str(a) for a in self.arg_types)}) -> {self.ret_type}"

    __repr__ = __str__


def _check_types(values, what):
    for value in values:
        if not isinstance(value, Type):
            raise KilnError(f"{what} must be a type, not {type(value).__name__} ({value!r:.80})")


def free_type_vars_of(ttype) -> list:
    """The type variables ``ttype`` uses without binding them, in order of first appearance."""
    found: dict = {}

    def walk(t, bound):
        if isinstance(t, TypeVar):
            if t not in bound:
                found.setdefault(t, None)
        elif isinstance(t, MonoFuncType):
            inner = bound | set(getattr(t, "type_params", ()))
            for a in (*t.arg_types, t.ret_type, *getattr(t, "type_constraints", ())):
                walk(a, inner)
        elif isinstance(t, Node) and not isinstance(t, IncompleteType | GlobalTypeVar):
            for child in type_children(t):
                walk(child, bound)

    walk(ttype, frozenset())
    return list(found)


def type_children(ttype) -> tuple:
    """The types directly inside ``ttype`` (fields of a tuple type, arguments of a type call, ...)."""
    from .type import TupleType

    if isinstance(ttype, TupleType):
        return ttype.fields
    if isinstance(ttype, MonoFuncType):
        return (*ttype.arg_types, ttype.ret_type, *getattr(ttype, "type_constraints", ()))
    if isinstance(ttype, TypeCall):
        return (ttype.func, *ttype.args)
    if isinstance(ttype, RelayRefType):
        return (ttype.value,)
    if isinstance(ttype, TypeRelation):
        return ttype.args
    return ()


__all__ = ["FuncType", "GlobalTypeVar", "IncompleteType", "RelayRefType", "TypeCall", "TypeConstraint", "TypeKind",
           "TypeRelation", "TypeVar", "free_type_vars_of", "type_children"]
