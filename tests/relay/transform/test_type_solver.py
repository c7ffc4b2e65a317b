"""The unifier: holes, occurs check, dimension modes, rigid type variables, polymorphic function types."""

import pytest

from kiln.error import TypeInferenceError
from kiln.ir import Any, FuncType, GlobalTypeVar, IncompleteType, RelayRefType, TensorType, TupleType, TypeVar
from kiln.relay.transform.type_solver import TypeSolver, UnifyError, bind_type_vars, has_holes, instantiate

F32, I32 = TensorType((), "float32"), TensorType((), "int32")


def test_holes_bind_and_resolve_deeply():
    s = TypeSolver()
    h1, h2 = IncompleteType(), IncompleteType()
    assert s.unify(h1, TupleType([h2, F32])) == TupleType([h2, F32])
    s.unify(h2, I32)
    assert s.resolve(h1) == TupleType([I32, F32])
    assert s.complete(h1) and not has_holes(s.resolve(h1))
    with pytest.raises(UnifyError, match="contain itself"):
        h3 = IncompleteType()
        s.unify(h3, TupleType([h3]))
    assert isinstance(UnifyError(F32, I32), TypeInferenceError)


def test_tensor_dimension_modes():
    s = TypeSolver()
    dyn, ten, five = TensorType((Any(), 3)), TensorType((10, 3)), TensorType((5, 3))
    assert s.unify(dyn, ten, "fits") == dyn  # a declared dynamic dimension accepts any size
    with pytest.raises(UnifyError, match="dimension 0 conflicts"):
        s.unify(ten, dyn, "fits")  # a declared static one accepts only itself
    assert s.unify(ten, dyn, "same") == dyn
    assert s.unify(ten, five, "join") == dyn  # the branches of an if: the sizes they disagree on are dynamic
    with pytest.raises(UnifyError, match="dimension 0 conflicts"):
        s.unify(ten, five, "same")
    with pytest.raises(UnifyError, match="dtype float32 does not match int32"):
        s.unify(F32, I32)
    with pytest.raises(UnifyError, match="rank"):
        s.unify(ten, TensorType((10,)))


def test_type_variables_are_rigid_and_data_types_match_by_name():
    s = TypeSolver()
    a, b = TypeVar("a"), TypeVar("b")
    assert s.unify(a, a) is a
    with pytest.raises(UnifyError):
        s.unify(a, b)
    with pytest.raises(UnifyError):
        s.unify(a, F32)
    lst = GlobalTypeVar("List")
    h = IncompleteType()
    assert s.resolve(s.unify(lst(h), lst(F32))) == lst(F32)
    assert s.unify(lst(), lst) == lst  # a data type applied to nothing is the data type
    with pytest.raises(UnifyError):
        s.unify(lst(F32), GlobalTypeVar("Tree")(F32))
    h = IncompleteType()
    assert s.resolve(s.unify(RelayRefType(h), RelayRefType(I32))) == RelayRefType(I32)


def test_polymorphic_function_types():
    s = TypeSolver()
    a, b = TypeVar("a"), TypeVar("b")
    ident = FuncType([a], a, [a])
    # identified type parameters: alpha-equivalent types unify
    assert s.unify(ident, FuncType([b], b, [b])) == FuncType([b], b, [b])
    # a polymorphic function where a monomorphic one is expected: instantiated first
    h = IncompleteType()
    s.unify(FuncType([h], I32), ident)
    assert s.resolve(h) == I32
    inst, holes = instantiate(FuncType([a, b], TupleType([b, a]), [a, b]))
    assert len(holes) == 2 and inst.type_params == () and inst.ret_type == TupleType([holes[1], holes[0]])
    with pytest.raises(UnifyError, match="2 parameters"):
        s.unify(FuncType([F32, F32], F32), FuncType([F32], F32))


def test_bind_type_vars_respects_shadowing():
    a, b = TypeVar("a"), TypeVar("b")
    inner = FuncType([a], a, [a])  # binds its own `a`
    t = TupleType([a, inner, FuncType([b], a)])
    out = bind_type_vars(t, {a: F32, b: I32})
    assert out.fields[0] == F32 and out.fields[1] == inner and out.fields[2] == FuncType([I32], F32)


def test_deferred_relations_run_when_their_inputs_are_known():
    s = TypeSolver()
    h, out = IncompleteType(), IncompleteType()
    calls = []
    s.defer([h], out, lambda types: calls.append(types) or TupleType(types))
    s.solve()
    assert calls == [] and s.deferred
    s.unify(h, F32)
    s.solve()
    assert calls == [[F32]] and s.resolve(out) == TupleType([F32]) and not s.deferred
