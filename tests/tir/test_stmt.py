"""Tests of kiln/tir/stmt.py, buffer.py and function.py: statements, buffers, PrimFunc, equality, JSON."""

import pytest

from kiln import tir
from kiln.error import TIRError
from kiln.ir import IRModule, PrimType, assert_structural_equal, load_json, save_json, structural_equal, structural_hash


def _add_one(n=16, name_i="i"):
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    i = tir.Var(name_i, "int32")
    body = tir.For(i, 0, n, tir.ForKind.SERIAL, tir.BufferStore(B, A[i] + 1.0, [i]))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    return tir.PrimFunc([a, b], body, buffer_map={a: A, b: B}).with_attr("global_symbol", "add_one")


def test_decl_buffer_defaults():
    A = tir.decl_buffer((4, 8), "float32", "A")
    assert A.name == "A" and A.dtype == "float32" and A.data.dtype == "handle"
    assert A.data.type_annotation.element_type.dtype == "float32"
    assert A.scope() == "global" and A.data_alignment == 64 and A.elem_offset.value == 0
    assert [s.value for s in A.default_strides()] == [8, 1]
    assert isinstance(A[1, 2], tir.BufferLoad) and A[1, 2].dtype == "float32"
    local = tir.decl_buffer((4,), "float32", "L", scope="local")
    assert local.scope() == "local"
    with pytest.raises(TIRError, match="2 dimensions but 1"):
        A[1]


def test_vector_load_store():
    A = tir.decl_buffer((16,), "float32", "A")
    i = tir.Var("i", "int32")
    load = A.vload(i, "float32x4")
    assert load.dtype == "float32x4" and isinstance(load.indices[0], tir.Ramp)
    store = A.vstore(i, load)
    assert isinstance(store, tir.BufferStore)
    with pytest.raises(TIRError, match="needs float32x4"):
        tir.BufferStore(A, tir.const(1.0), [tir.Ramp(i, 1, 4)])


def test_statements():
    i = tir.Var("i", "int32")
    A = tir.decl_buffer((8,), "int32", "A")
    store = tir.BufferStore(A, i, [i])
    loop = tir.For(i, 0, 8, tir.ForKind.PARALLEL, store)
    assert loop.kind == tir.ForKind.PARALLEL and loop.extent.value == 8
    seq = tir.stmt_seq(store, tir.stmt_seq(store, store))
    assert isinstance(seq, tir.SeqStmt) and len(seq) == 3
    assert tir.stmt_seq(store) is store
    branch = tir.IfThenElse(i < 3, store, None)
    assert branch.else_case is None
    with pytest.raises(TIRError, match="scalar bool"):
        tir.IfThenElse(i, store)
    data = tir.Var("buf", tir.PointerType(PrimType("float32"), "local"))
    alloc = tir.Allocate(data, "float32", [8], True, store)
    assert alloc.scope == "local" and alloc.condition.value == 1
    assert isinstance(tir.AssertStmt(i < 3, "bad i", store).message, tir.StringImm)
    assert isinstance(tir.Evaluate(tir.call_extern("int32", "f")), tir.Evaluate)
    assert tir.LetStmt(tir.Var("v", "int32"), 3, store).value.value == 3
    with pytest.raises(TIRError, match="loop variable"):
        tir.For(i, 0, tir.Var("n", "int64"), tir.ForKind.SERIAL, store)


def test_prim_func_in_module_and_attrs():
    f = _add_one()
    assert f.type_key == "tir.PrimFunc" and f.attrs["global_symbol"] == "add_one"
    mod = IRModule({"add_one": f})
    assert mod["add_one"] is f
    assert f.with_body(f.body) is f
    with pytest.raises(TIRError):  # a key that is no parameter is kept (as TVM), but a value must be a Buffer
        tir.PrimFunc([tir.Var("a", "handle")], f.body, buffer_map={tir.Var("x", "handle"): f.params[0]})


def test_prim_func_structural_equality_binds_vars():
    f1, f2 = _add_one(), _add_one(name_i="j")
    assert_structural_equal(f1, f2)
    assert structural_hash(f1) == structural_hash(f2)
    assert not structural_equal(f1, _add_one(n=8))


def test_prim_func_json_round_trip():
    f = _add_one()
    back = load_json(save_json(f))
    assert isinstance(back, tir.PrimFunc)
    assert_structural_equal(back, f)
    mod = IRModule({"add_one": f})
    assert_structural_equal(load_json(save_json(mod))["add_one"], f)


def test_prim_func_takes_a_buffer_as_a_parameter():
    """PrimFunc([x, buf], ...) binds a new handle parameter to the buffer, as TVM's constructor does."""
    x = tir.Var("x", "int32")
    buf = tir.decl_buffer((4,), "float32", "B")
    func = tir.PrimFunc([x, buf], tir.BufferStore(buf, tir.const(1, "float32"), [x]))
    handle = func.params[1]
    assert handle.dtype == "handle" and func.buffer_map[handle] is buf and func.params[0] is x


def test_buffer_map_may_hold_a_variable_that_is_no_parameter():
    from kiln.ir import structural_equal

    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    b0, b1 = tir.decl_buffer((10, 10)), tir.decl_buffer((10, 20))
    f0 = tir.PrimFunc([x], tir.Evaluate(x), buffer_map={x: b0})
    f1 = tir.PrimFunc([x], tir.Evaluate(x), buffer_map={x: b0, y: b1})
    assert len(f1.buffer_map) == 2 and not structural_equal(f0, f1)
    with pytest.raises(TIRError, match="buffer_map"):
        tir.PrimFunc([x], tir.Evaluate(x), buffer_map={x: 3})
