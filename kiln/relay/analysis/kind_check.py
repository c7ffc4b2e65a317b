"""Kind checking of Relay types (TVM's ``relay.analysis.check_kind``).

Every type has a kind: tensors, tuples, functions and references are ``Type``; a type relation is a ``Constraint``;
a type variable has the kind it was declared with; a data type's name is an ``AdtHandle`` and its definition a
``TypeData``. A type is ill-kinded when a part sits where another kind is expected (a shape variable as a tuple
field, a type call of something that is not a defined data type, or with the wrong number of arguments); that raises
a :class:`~kiln.error.TypeInferenceError` naming the part and where it is.
"""

from ...error import TypeInferenceError
from ...ir.adt import TypeData
from ...ir.type import FuncType, IncompleteType, TensorType, TupleType
from ...ir.type_poly import GlobalTypeVar, RelayRefType, TypeCall, TypeKind, TypeRelation, TypeVar


class _KindChecker:
    def __init__(self, mod):
        self.mod = mod

    def expect(self, part, outer, kind, what):
        found = self.kind(part)
        if found != kind:
            raise TypeInferenceError(f"check_kind: the {what} {part} in {outer} is of kind {found.name}, expected "
                                     f"{TypeKind(kind).name}")

    def kind(self, ttype) -> TypeKind:
        if isinstance(ttype, (TypeVar, GlobalTypeVar, IncompleteType)):
            return TypeKind(ttype.kind)
        if isinstance(ttype, TensorType):
            return TypeKind.Type
        if isinstance(ttype, TupleType):
            for field in ttype.fields:
                self.expect(field, ttype, TypeKind.Type, "tuple member")
            return TypeKind.Type
        if isinstance(ttype, FuncType):
            for arg in ttype.arg_types:
                self.expect(arg, ttype, TypeKind.Type, "function parameter type")
            self.expect(ttype.ret_type, ttype, TypeKind.Type, "function return type")
            for constraint in getattr(ttype, "type_constraints", ()):
                self.expect(constraint, ttype, TypeKind.Constraint, "function type constraint")
            return TypeKind.Type
        if isinstance(ttype, RelayRefType):
            self.expect(ttype.value, ttype, TypeKind.Type, "reference contents")
            return TypeKind.Type
        if isinstance(ttype, TypeRelation):
            for arg in ttype.args:
                self.expect(arg, ttype, TypeKind.Type, "type relation argument")
            return TypeKind.Constraint
        if isinstance(ttype, TypeCall):
            return self.type_call(ttype)
        if isinstance(ttype, TypeData):
            self.expect(ttype.header, ttype, TypeKind.AdtHandle, "data type header")
            for var in ttype.type_vars:
                self.expect(var, ttype, TypeKind.Type, "data type parameter")
            for ctor in ttype.constructors:
                for field in ctor.inputs:
                    self.expect(field, ttype, TypeKind.Type, f"input of constructor {ctor.name_hint}")
            return TypeKind.TypeData
        raise TypeInferenceError(f"check_kind: {ttype!r} is not a Relay type")

    def type_call(self, call):
        if not isinstance(call.func, GlobalTypeVar):
            raise TypeInferenceError(f"check_kind: the callee of {call} is not a global type variable but {call.func}")
        self.expect(call.func, call, TypeKind.AdtHandle, "type call function")
        for arg in call.args:
            self.expect(arg, call, TypeKind.Type, "type call argument")
        data = self.mod.type_definitions.get(call.func) if self.mod is not None else None
        if data is None:
            raise TypeInferenceError(f"check_kind: the data type {call.func.name_hint} of {call} is not defined")
        if len(data.type_vars) != len(call.args):
            raise TypeInferenceError(f"check_kind: {call} gives {len(call.args)} arguments, data type "
                                     f"{call.func.name_hint} takes {len(data.type_vars)}")
        return TypeKind.Type


def check_kind(ttype, mod=None) -> TypeKind:
    """The kind of ``ttype`` (data types are looked up in ``mod``); raises TypeInferenceError when ill-kinded."""
    return _KindChecker(mod).kind(ttype)


__all__ = ["check_kind"]
