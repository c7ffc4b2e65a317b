import pytest

import kiln
from kiln import relay
from kiln.error import TypeInferenceError
from kiln.relay.analysis import check_kind

K = relay.TypeKind


def test_kinds_of_well_formed_types():
    a, shape = relay.TypeVar("a"), relay.TypeVar("s", K.ShapeVar)
    tensor = relay.TensorType((2, 3), "float32")
    func = relay.FuncType([a, tensor], relay.TupleType([a, relay.RefType(tensor)]), [a], [])
    assert check_kind(func) == K.Type and check_kind(shape) == K.ShapeVar
    assert check_kind(relay.TypeRelation(None, [tensor, a], 1, None)) == K.Constraint
    mod = kiln.IRModule()
    mod.import_from_std("prelude.rly")
    list_gtv = mod.get_global_type_var("List")
    assert check_kind(list_gtv) == K.AdtHandle and check_kind(mod.type_definitions[list_gtv], mod) == K.TypeData
    assert check_kind(relay.TypeCall(list_gtv, [tensor]), mod) == K.Type


@pytest.mark.parametrize("make, message", [
    (lambda s, m: relay.TupleType([s]), "tuple member"),
    (lambda s, m: relay.FuncType([], s, [], []), "return type"),
    (lambda s, m: relay.RefType(s), "reference contents"),
    (lambda s, m: relay.TypeCall(m.get_global_type_var("List"), []), "takes 1"),
    (lambda s, m: relay.TypeCall(relay.GlobalTypeVar("Nowhere"), []), "not defined"),
])
def test_ill_kinded_types_are_refused_with_the_part(make, message):
    mod = kiln.IRModule()
    mod.import_from_std("prelude.rly")
    with pytest.raises(TypeInferenceError, match=message):
        check_kind(make(relay.TypeVar("s", K.ShapeVar), mod), mod)
