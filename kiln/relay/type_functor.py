"""TypeFunctor, TypeVisitor, TypeMutator: TVM's overridable walkers over Relay types (``relay.TypeVisitor``).

``visit(t)`` dispatches on the kind of type to ``visit_<kind>``: ``visit_type_var``, ``visit_incomplete_type``,
``visit_tensor_type``, ``visit_func_type``, ``visit_tuple_type``, ``visit_type_relation``, ``visit_ref_type``,
``visit_global_type_var``, ``visit_type_call``, ``visit_type_data``. A TypeVisitor descends into every part;
a TypeMutator rebuilds the type from its visited parts (types are shallow, so there is no memo).
"""

from ..error import KilnError
from ..ir.adt import TypeData
from ..ir.type import IncompleteType, TensorType, TupleType
from ..ir.type_poly import FuncType, GlobalTypeVar, RelayRefType, TypeCall, TypeRelation, TypeVar

_METHOD_OF = (
    (TypeVar, "visit_type_var"),
    (IncompleteType, "visit_incomplete_type"),
    (TensorType, "visit_tensor_type"),
    (FuncType, "visit_func_type"),
    (TupleType, "visit_tuple_type"),
    (TypeRelation, "visit_type_relation"),
    (RelayRefType, "visit_ref_type"),
    (GlobalTypeVar, "visit_global_type_var"),
    (TypeCall, "visit_type_call"),
    (TypeData, "visit_type_data"),
)


class TypeFunctor:
    """Dispatch ``visit(t)`` to the ``visit_<kind>`` method of the type's kind; a subclass defines them."""

    def visit(self, typ):
        """The result of the ``visit_<kind>`` method for ``typ``."""
        for kind, name in _METHOD_OF:
            if isinstance(typ, kind):
                return getattr(self, name)(typ)
        raise KilnError(f"{type(self).__name__}: not a Relay type: {type(typ).__name__}")

    def _missing(self, typ):
        raise NotImplementedError(f"{type(self).__name__} has no visit method for {type(typ).__name__}")

    visit_type_var = visit_incomplete_type = visit_tensor_type = visit_func_type = visit_tuple_type = _missing
    visit_type_relation = visit_ref_type = visit_global_type_var = visit_type_call = visit_type_data = _missing


class TypeVisitor(TypeFunctor):
    """Visit every part of a type; override ``visit_<kind>`` and call ``super()`` to keep descending.

    Examples
    --------
    >>> class HasFunc(TypeVisitor):
    ...     found = False
    ...     def visit_func_type(self, ft):
    ...         self.found = True
    """

    def visit_type_var(self, tv):
        pass

    def visit_incomplete_type(self, it):
        pass

    def visit_tensor_type(self, tt):
        pass

    def visit_func_type(self, ft):
        for arg in ft.arg_types:
            self.visit(arg)
        self.visit(ft.ret_type)
        for param in ft.type_params:
            self.visit(param)
        for constraint in ft.type_constraints:
            self.visit(constraint)

    def visit_tuple_type(self, tt):
        for field in tt.fields:
            self.visit(field)

    def visit_type_relation(self, tr):
        for arg in tr.args:
            self.visit(arg)

    def visit_ref_type(self, rt):
        self.visit(rt.value)

    def visit_global_type_var(self, gtv):
        pass

    def visit_type_call(self, tc):
        self.visit(tc.func)
        for arg in tc.args:
            self.visit(arg)

    def visit_type_data(self, td):
        self.visit(td.header)
        for var in td.type_vars:
            self.visit(var)


class TypeMutator(TypeFunctor):
    """Rebuild a type from its visited parts; override ``visit_<kind>`` to replace some."""

    def visit_type_var(self, tv):
        return tv

    def visit_incomplete_type(self, it):
        return it

    def visit_tensor_type(self, tt):
        return tt

    def visit_func_type(self, ft):
        return FuncType(tuple(self.visit(a) for a in ft.arg_types), self.visit(ft.ret_type),
                        tuple(self.visit(p) for p in ft.type_params),
                        tuple(self.visit(c) for c in ft.type_constraints))

    def visit_tuple_type(self, tt):
        return TupleType(tuple(self.visit(f) for f in tt.fields))

    def visit_type_relation(self, tr):
        return tr.with_fields(args=tuple(self.visit(a) for a in tr.args))

    def visit_ref_type(self, rt):
        return RelayRefType(self.visit(rt.value))

    def visit_global_type_var(self, gtv):
        return gtv

    def visit_type_call(self, tc):
        return TypeCall(self.visit(tc.func), tuple(self.visit(a) for a in tc.args))

    def visit_type_data(self, td):
        return td


__all__ = ["TypeFunctor", "TypeMutator", "TypeVisitor"]
