"""Type variables, polymorphic function types, type calls, references, and algebraic data types in a module."""

import pytest

from kiln.error import KilnError
from kiln.ir import (
    Constructor,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    IRModule,
    RelayRefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeData,
    TypeKind,
    TypeVar,
    load_json,
    save_json,
    structural_equal,
    structural_hash,
)

F32 = TensorType((), "float32")


def _list_type():
    lst, a = GlobalTypeVar("List"), TypeVar("A")
    cons = Constructor("Cons", [a, lst(a)], lst)
    nil = Constructor("Nil", [], lst)
    return lst, a, cons, nil, TypeData(lst, [a], [cons, nil])


def test_type_vars_are_equal_only_to_themselves_or_where_bound_alike():
    a, b = TypeVar("a"), TypeVar("a")
    assert a == a and a != b
    assert not structural_equal(a, b)
    assert structural_equal(a, b, map_free_vars=True)
    # bound by corresponding type parameters, they correspond: alpha-equivalent function types are equal
    assert FuncType([a], a, [a]) == FuncType([b], b, [b])
    assert hash(FuncType([a], a, [a])) == hash(FuncType([b], b, [b]))
    assert structural_hash(FuncType([a], TupleType([a, a]), [a])) == structural_hash(FuncType([b], TupleType([b, b]),
                                                                                              [b]))
    assert FuncType([a], a, [a]) != FuncType([b], a, [b])  # the result is the free `a`, not the parameter
    assert FuncType([a, b], a, [a, b]) != FuncType([a, b], b, [a, b])
    # kinds must agree at binding sites
    assert FuncType([], a, [a]) != FuncType([], b, [TypeVar("b", TypeKind.ShapeVar)])
    # a monomorphic function type equals one written without type parameters
    assert FuncType([F32], F32) == FuncType([F32], F32, [], [])
    assert str(FuncType([a], a, [a])) == "fn [a](a) -> a"


def test_incomplete_types_are_distinct_holes():
    h1, h2 = IncompleteType(), IncompleteType()
    assert h1 == h1 and h1 != h2
    assert FuncType([h1], h1) == FuncType([h1], h1) and FuncType([h1], h1) != FuncType([h2], h2)


def test_type_calls_references_and_global_type_vars():
    lst = GlobalTypeVar("List")
    assert lst == GlobalTypeVar("List") and lst != GlobalTypeVar("Tree")
    assert lst(F32) == TypeCall(lst, [F32]) and str(lst(F32)) == "List[float32]"
    assert lst(F32) != lst(TensorType((), "int32"))
    assert RelayRefType(F32) == RelayRefType(F32) and str(RelayRefType(F32)) == "ref(float32)"
    with pytest.raises(KilnError, match="must be a type"):
        TypeCall(lst, [1])


def test_type_data_tags_and_validation():
    lst, a, cons, nil, data = _list_type()
    assert cons.tag != nil.tag and cons.tag & 0xFFFFFF == 0 and nil.tag & 0xFFFFFF == 1
    other = GlobalTypeVar("Other")
    with pytest.raises(KilnError, match="belongs to List"):
        TypeData(other, [], [Constructor("C", [], lst)])
    with pytest.raises(KilnError, match="defined twice"):
        TypeData(lst, [], [Constructor("C", [], lst), Constructor("C", [], lst)])
    with pytest.raises(KilnError, match="must be a TypeVar"):
        TypeData(lst, [F32], [])
    assert str(data) == "type List[A] { Cons, Nil }"


def test_module_holds_type_definitions():
    lst, a, cons, nil, data = _list_type()
    mod = IRModule()
    mod[lst] = data
    assert mod[lst] is data and lst in mod and GlobalTypeVar("List") in mod
    assert mod.get_global_type_var("List") == lst
    assert mod.get_type("List") == (lst, cons, nil)
    assert mod.get_constructor(nil.tag) is nil
    with pytest.raises(KilnError, match="no type definition Tree; it has List"):
        mod.get_global_type_var("Tree")
    with pytest.raises(KilnError, match="no constructor with tag"):
        mod.get_constructor(12345)
    with pytest.raises(KilnError, match="must be a TypeData"):
        mod[GlobalTypeVar("Bad")] = F32
    copy = mod.shallow_copy()
    assert copy.type_definitions == mod.type_definitions
    assert IRModule(type_definitions={lst: data}).get_type("List")[1] is cons


def test_modules_compare_type_definitions_up_to_renaming():
    mods = []
    for _ in range(2):
        lst, a, cons, nil, data = _list_type()
        mod = IRModule()
        mod[lst] = data
        mods.append(mod)
    assert structural_equal(mods[0], mods[1])
    assert structural_hash(mods[0]) == structural_hash(mods[1])
    lst, a = GlobalTypeVar("List"), TypeVar("A")
    other = IRModule()
    other[lst] = TypeData(lst, [a], [Constructor("Cons", [a, a], lst), Constructor("Nil", [], lst)])
    assert not structural_equal(mods[0], other)


def test_json_round_trip_keeps_constructors_and_type_parameters():
    lst, a, cons, nil, data = _list_type()
    mod = IRModule()
    mod[lst] = data
    loaded = load_json(save_json(mod))
    assert structural_equal(loaded, mod)
    _, cons2, nil2 = loaded.get_type("List")
    assert (cons2.tag, nil2.tag) == (cons.tag, nil.tag)
