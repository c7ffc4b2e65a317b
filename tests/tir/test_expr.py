"""Tests of kiln/tir/expr.py, expr_op.py and op.py: construction, dtype rules, operators, constant folding."""

import pytest

import kiln
from kiln import tir
from kiln.error import TIRError
from kiln.ir import structural_equal, structural_hash


def test_seed_add_fields():
    x = kiln.tir.Var("x", "int32")
    node = kiln.tir.Add(x, x)
    assert node.a is x and node.b is x and node.dtype == "int32"
    assert node.type_key == "tir.Add"


def test_var_identity_and_dict_keys():
    x, x2 = tir.Var("x", "int32"), tir.Var("x", "int32")
    table = {x: 1, x2: 2}
    assert table[x] == 1 and table[x2] == 2
    same = x
    assert bool(x == same) and not bool(x == x2)
    assert bool(x != x2)
    eq = (x == 1).asobject()
    assert isinstance(eq, tir.EQ) and eq.dtype == "bool" and eq.b.value == 1
    assert isinstance(x.equal(x2), tir.EQ)


def test_bool_of_expression_raises():
    x = tir.Var("x", "int32")
    with pytest.raises(TIRError, match="tir.all"):
        bool(x < 3)


def test_constants_and_ranges():
    assert tir.IntImm("int32", 3).value == 3
    assert tir.FloatImm("float32", 1.5).value == 1.5
    assert tir.const(True).dtype == "bool"
    assert tir.const(2**40).dtype == "int64"
    with pytest.raises(TIRError, match="out of the range"):
        tir.IntImm("int8", 300)
    with pytest.raises(TIRError):
        tir.FloatImm("int32", 1.0)
    vec = tir.const(1.0, "float32x4")
    assert isinstance(vec, tir.Broadcast) and vec.dtype == "float32x4"


def test_python_operators_build_nodes():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    assert isinstance(x + y, tir.Add) and isinstance(x - y, tir.Sub) and isinstance(x * y, tir.Mul)
    assert isinstance(x // y, tir.FloorDiv) and isinstance(x % y, tir.FloorMod)
    assert isinstance(x < y, tir.LT) and isinstance(x <= y, tir.LE)
    assert isinstance(x > y, tir.GT) and isinstance(x >= y, tir.GE)
    assert isinstance((x < y) & (y < 3), tir.And) and isinstance((x < y) | (y < 3), tir.Or)
    assert isinstance(~(x < y), tir.Not)
    assert isinstance(-x, tir.Mul)
    with pytest.raises(TIRError, match="ambiguous"):
        x / y
    f = tir.Var("f", "float32")
    assert isinstance(f / 2.0, tir.Div) and (f / 2.0).dtype == "float32"


def test_scalar_adopts_other_dtype_and_promotion():
    i64 = tir.Var("n", "int64")
    assert (i64 + 1).dtype == "int64"
    f16 = tir.Var("h", "float16")
    assert (f16 * 2.0).dtype == "float16"
    i = tir.Var("i", "int32")
    mixed = i * 0.5
    assert mixed.dtype == "float32" and isinstance(mixed.a, tir.Cast)
    assert (i + i64).dtype == "int64"
    assert (tir.Var("u", "uint32") + i).dtype == "uint32"


def test_constant_folding_like_tvm():
    x = tir.Var("x", "int32")
    assert (tir.const(2) + tir.const(3)).value == 5
    assert (x + 0) is x and (0 + x) is x and (x * 1) is x
    assert (x * 0).value == 0
    assert tir.floordiv(-7, tir.const(2)).value == -4
    assert tir.floormod(-7, tir.const(2)).value == 1
    assert tir.truncdiv(tir.const(-7), 2).value == -3
    assert tir.truncmod(tir.const(-7), 2).value == -1
    assert tir.const(127, "int8") + tir.const(1, "int8") is not None
    assert (tir.const(127, "int8") + tir.const(1, "int8")).value == -128  # wraps like the hardware
    assert (tir.const(1) < 2).value == 1 and (tir.const(1) < 2).dtype == "bool"
    with pytest.raises(TIRError, match="division by zero"):
        tir.floordiv(x, 0)


def test_constructor_dtype_mismatch():
    with pytest.raises(TIRError, match="dtypes differ"):
        tir.Add(tir.Var("a", "int32"), tir.Var("b", "int64"))
    assert tir.Add(tir.Var("a", "int64"), 1).b.dtype == "int64"


def test_vectors():
    i = tir.Var("i", "int32")
    ramp = tir.Ramp(i, 1, 4)
    assert ramp.dtype == "int32x4" and ramp.lanes == 4
    b = tir.Broadcast(tir.const(1.0), 4)
    assert b.dtype == "float32x4"
    assert (ramp + 1).dtype == "int32x4" and isinstance((ramp + 1).b, tir.Broadcast)
    assert (ramp < 3).dtype == "boolx4"
    with pytest.raises(TIRError):
        tir.Ramp(i, 1, 1)


def test_select_cast_let_call():
    x = tir.Var("x", "int32")
    s = tir.Select(x < 3, x, 3)
    assert s.dtype == "int32" and s.false_value.value == 3
    assert tir.Cast("float32", x).dtype == "float32"
    assert tir.cast(x, "int32") is x
    assert tir.cast(tir.const(3), "float32").value == 3.0
    v = tir.Var("v", "int32")
    let = tir.Let(v, x + 1, v * 2)
    assert let.dtype == "int32"
    call = tir.exp(tir.Var("f", "float32"))
    assert isinstance(call, tir.Call) and call.op.name == "tir.exp" and call.dtype == "float32"
    assert tir.Call("float32", "tir.exp", [tir.Var("g", "float32")]).op is call.op
    with pytest.raises(TIRError, match="float"):
        tir.exp(x)


def test_intrinsic_builders_fold_constants():
    assert abs(tir.exp(tir.const(0.0)).value - 1.0) < 1e-7
    assert abs(tir.sigmoid(tir.const(0.0)).value - 0.5) < 1e-7
    assert abs(tir.erf(tir.const(0.5)).value - 0.5204998778) < 1e-6
    f = tir.Var("f", "float32")
    for builder in (tir.log, tir.sqrt, tir.tanh, tir.erf, tir.sigmoid, tir.fabs, tir.floor, tir.ceil, tir.round):
        assert builder(f).op.name == f"tir.{builder.__name__}"
    assert tir.pow(f, 2.0).op.name == "tir.pow"
    assert tir.fma(f, f, 1.0).op.name == "tir.fma"
    assert tir.isnan(f).dtype == "bool"
    assert tir.abs(f).op.name == "tir.fabs"
    assert isinstance(tir.abs(tir.Var("i", "int32")), tir.Select)
    assert tir.if_then_else(True, f, 1.0) is f
    ext = tir.call_extern("float32", "my_fn", f)
    assert ext.op.name == "tir.call_extern" and ext.args[0].value == "my_fn"


def test_all_any_min_max():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    assert isinstance(tir.all(x < 1, y < 2), tir.And)
    assert isinstance(tir.any(x < 1, y < 2), tir.Or)
    assert tir.all().value == 1 and tir.any().value == 0  # TVM raises; kiln's builders join possibly empty lists
    with pytest.raises(TIRError, match="bool condition"):
        tir.any(x, y < 2)
    assert tir.all(x < 1) is not None and tir.any(tir.const(False), y < 2).dtype == "bool"
    assert isinstance(tir.min(x, y), tir.Min) and isinstance(tir.max(x, y), tir.Max)
    assert tir.max_value("int8").value == 127 and tir.min_value("int32").value == -(2**31)


def test_structural_equality_of_expressions():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    assert structural_equal(x + 1, x + 1)
    assert not structural_equal(x + 1, y + 1)
    assert structural_equal(x + 1, y + 1, map_free_vars=True)
    assert structural_hash(x * 2 + 1) == structural_hash(x * 2 + 1)
    v1, v2 = tir.Var("v", "int32"), tir.Var("w", "int32")
    assert structural_equal(tir.Let(v1, x, v1 + 1), tir.Let(v2, x, v2 + 1))
    assert structural_hash(tir.Let(v1, x, v1 + 1)) == structural_hash(tir.Let(v2, x, v2 + 1))


def test_range_and_itervar():
    r = tir.Range(2, 10)
    assert r.min.value == 2 and r.extent.value == 8
    assert tir.Range(5).extent.value == 5 and tir.Range(5).min.value == 0
    assert tir.Range.from_min_extent(3, 4).extent.value == 4
    iv = tir.IterVar(tir.Range(8), "k", tir.IterVarType.CommReduce)
    assert iv.var.name_hint == "k" and (iv + 1).a is iv.var
    total = tir.sum(tir.Var("a", "float32") * 2.0, axis=iv)
    assert isinstance(total, tir.Reduce) and total.dtype == "float32"
    assert isinstance(tir.min(tir.Var("a", "float32"), 1.0), tir.Min)


def test_const_of_a_numpy_scalar_keeps_its_dtype():
    """``tir.const(np.uint8(3))`` is uint8, as in TVM (issue 13); Python ints stay int32 (int64 when too wide)."""
    import numpy as np

    assert tir.const(np.uint8(3)).dtype == "uint8"
    assert tir.const(np.int64(3)).dtype == "int64"
    assert tir.const(np.float16(0.5)).dtype == "float16"
    assert tir.const(3).dtype == "int32" and tir.const(2**40).dtype == "int64"


def test_tvm_constructor_forms():
    assert tir.Var(name="n", dtype="int64").name == "n"
    with pytest.raises(TIRError, match="name must be a string"):
        tir.Var(name=1, dtype="int32")
    iv = tir.IterVar((2, 6), "x", tir.IterVarType.CommReduce)
    assert (iv.dom.min.value, iv.dom.extent.value, iv.var.name) == (2, 4, "x")
    red = tir.Reduce(None, [1], [iv], None, 0)
    assert red.combiner is None and red.value_index == 0 and red.dtype == "int32"


def test_constant_compared_with_none_is_refused():
    with pytest.raises(ValueError):
        tir.IntImm("int8", 1) != None  # noqa: E711, B015
    with pytest.raises(ValueError):
        tir.IntImm("int8", 1) == None  # noqa: E711, B015
    assert tir.StringImm("abc") != None  # noqa: E711


def test_cast_of_a_handle_is_refused():
    with pytest.raises(TIRError, match="Can't cast a handle"):
        tir.StringImm("s").astype("int32")
    with pytest.raises(TIRError, match="Can't cast a handle"):
        tir.cast(tir.Var("p", "handle"), "int64")


def test_isnan_of_half_tests_in_float():
    y = tir.Var("y", "float16")
    call = tir.isnan(y)
    assert call.dtype == "bool" and isinstance(call.args[0], tir.Cast) and call.args[0].dtype == "float32"
    assert tir.isnan(tir.Var("v", "float16x4")).args[0].dtype == "float32x4"
    assert tir.isnan(tir.Var("z", "float32")).args[0].dtype == "float32"
    assert not tir.isnan(tir.const(1.0, "float16"))


def test_deferred_equality_converts_to_its_comparison():
    x = tir.Var("x", "int32")
    eq = kiln.runtime.convert(x == 1)
    assert isinstance(eq, tir.EQ) and eq.a is x
    assert isinstance(tir.And(x > 1, x == 1).b, tir.EQ)


def test_prim_func_with_attr_takes_a_dict():
    f = tir.PrimFunc([], tir.Evaluate(0))
    g = f.with_attr({"calling_conv": 1, "tir.noalias": True})
    assert g.attrs["calling_conv"] == 1 and g.attrs["tir.noalias"] and not f.attrs


def test_float_literals_are_range_checked_and_typed():
    with pytest.raises(ValueError, match="exceeds the range of float16"):
        tir.const(65505.0, "float16")
    with pytest.raises(ValueError, match="float32"):
        tir.FloatImm("float32", -3.5e38)
    assert tir.const(float("inf"), "float16").value == float("inf")
    assert tir.const(3.402e39).dtype == "float64" and tir.const(3.14).dtype == "float32"
    assert tir.const(-3.38953139e38, "bfloat16").value < 0


def test_float_folding_is_float32_arithmetic():
    import numpy as np

    rng = np.random.default_rng(0)
    for _ in range(200):
        x, y = (float(v) for v in rng.uniform(-3e38, 3e38, 2))
        a, b = tir.const(x, "float32"), tir.const(y, "float32")
        with np.errstate(over="ignore"):
            fx, fy = np.float32(x), np.float32(y)
            for folded, expected in ((a + b, fx + fy), (a - b, fx - fy), (a * b, fx * fy), (a / b, fx / fy)):
                assert folded.value == float(expected)
    with pytest.raises(TIRError, match="division by zero"):
        tir.const(1.0, "float32") / tir.const(0.0, "float32")


def test_integer_constants_compare_by_value_across_dtypes():
    assert tir.const(1) == tir.const(True)
    assert tir.const(2) != tir.const(True)
    assert tir.IntImm("int64", 7) == tir.IntImm("int32", 7)
    assert not (tir.IntImm("int8", 7) == tir.IntImm("int32", 8))
