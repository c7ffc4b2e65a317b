"""Every TIR expression and statement kind, built from TIR nodes, compiled on both targets (C and LLVM) and checked
against the TIR evaluator (kiln/tir/evaluator.py) run on the same function.

Expressions are grouped: one PrimFunc per group writes one output buffer per expression, so a group compiles once
per target; each output is compared separately and a failure names the expression.
"""

import numpy as np
import pytest

import kiln
from kiln import tir
from kiln.error import RuntimeArgumentError
from kiln.tir import expr as E
from kiln.tir import stmt as S
from kiln.tir.evaluator import evaluate

N = 64


def _rand(dtype, rng, n=N, low=-50, high=50, nonzero=False):
    if np.dtype(dtype).kind == "f":
        x = rng.uniform(low / 10, high / 10, n).astype(dtype)
    elif np.dtype(dtype).kind == "u":
        x = rng.integers(0, min(high, np.iinfo(dtype).max), n).astype(dtype)
    else:
        x = rng.integers(max(low, np.iinfo(dtype).min), min(high, np.iinfo(dtype).max), n).astype(dtype)
    if nonzero:
        x[x == 0] = 3
    return x


def elementwise(name, inputs, outputs, lanes=1, kind=S.ForKind.SERIAL):
    """A PrimFunc ``for i: out_k[i] = f_k(inputs[i], i)`` for each output; ``lanes > 1`` uses Ramp indices."""
    bufs = {nm: tir.decl_buffer((N,), dt, nm) for nm, dt in inputs.items()}
    outs = [(nm, tir.decl_buffer((N,), dt, nm), fn) for nm, dt, fn in outputs]
    i = tir.Var("i", "int32")
    index = E.Ramp(E.Mul(i, E.IntImm("int32", lanes)), E.IntImm("int32", 1), lanes) if lanes > 1 else i
    loads = {nm: E.BufferLoad(b, [index]) for nm, b in bufs.items()}
    stores = [S.BufferStore(b, fn(loads, index), [index]) for _, b, fn in outs]
    body = S.For(i, 0, N // lanes, kind, S.stmt_seq(*stores))
    params = [tir.Var(nm, "handle") for nm in list(bufs) + [nm for nm, _, _ in outs]]
    buffer_map = dict(zip(params, list(bufs.values()) + [b for _, b, _ in outs], strict=True))
    return tir.PrimFunc(params, body, buffer_map=buffer_map, attrs={"global_symbol": name})


def check(func, arrays, target, rtol=1e-6, atol=1e-6):
    """Run ``func`` through the evaluator and compiled for ``target``; compare every array."""
    expected = [a.copy() for a in arrays]
    evaluate(func, *expected)
    got = [kiln.nd.array(a) for a in arrays]
    mod = kiln.build(func, target=target)
    mod(*got)
    names = [func.buffer_map[p].name for p in func.params]
    for name, want, have in zip(names, expected, got, strict=True):
        np.testing.assert_allclose(have.numpy(), want, rtol=rtol, atol=atol, err_msg=f"output {name} ({target})")
    return mod


ARITH = [
    ("add", lambda v, i: E.Add(v["a"], v["b"])),
    ("sub", lambda v, i: E.Sub(v["a"], v["b"])),
    ("mul", lambda v, i: E.Mul(v["a"], v["b"])),
    ("div", lambda v, i: E.Div(v["a"], v["b"])),
    ("mod", lambda v, i: E.Mod(v["a"], v["b"])),
    ("floordiv", lambda v, i: E.FloorDiv(v["a"], v["b"])),
    ("floormod", lambda v, i: E.FloorMod(v["a"], v["b"])),
    ("min", lambda v, i: E.Min(v["a"], v["b"])),
    ("max", lambda v, i: E.Max(v["a"], v["b"])),
    ("select_lt", lambda v, i: E.Select(E.LT(v["a"], v["b"]), v["a"], v["b"])),
    ("select_le", lambda v, i: E.Select(E.LE(v["a"], v["b"]), v["b"], v["a"])),
    ("select_gt", lambda v, i: E.Select(E.GT(v["a"], v["b"]), v["a"], v["b"])),
    ("select_ge", lambda v, i: E.Select(E.GE(v["a"], v["b"]), v["b"], v["a"])),
    ("select_eq", lambda v, i: E.Select(E.EQ(v["a"], v["a"]), v["a"], v["b"])),
    ("select_ne", lambda v, i: E.Select(E.NE(v["a"], v["b"]), v["a"], v["b"])),
    ("logic", lambda v, i: E.Select(E.Or(E.And(E.LT(v["a"], v["b"]), E.Not(E.EQ(v["a"], v["b"]))),
                                         E.GT(v["a"], v["b"])), v["a"], v["b"])),
]


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint32", "float32", "float64"])
@pytest.mark.parametrize("lanes", [1, 8])
def test_arithmetic_and_comparisons(target, dtype, lanes):
    cases = [(name, dtype, fn) for name, fn in ARITH]
    if np.dtype(dtype).kind == "u":  # unsigned floor division is truncating division
        cases = [c for c in cases if c[0] not in ("floordiv", "floormod")]
    func = elementwise(f"arith_{dtype}_{lanes}", {"a": dtype, "b": dtype}, cases, lanes=lanes)
    rng = np.random.default_rng(0)
    arrays = [_rand(dtype, rng, low=-40, high=40), _rand(dtype, rng, low=-9, high=9, nonzero=True)]
    arrays += [np.zeros(N, dtype) for _ in cases]
    check(func, arrays, target, rtol=1e-6 if dtype != "float32" else 2e-6)


def _cast(dtype, value):
    """``Cast`` to ``dtype`` with the lanes of ``value``."""
    lanes = _lanes(value)
    return E.Cast(dtype if lanes == 1 else f"{dtype}x{lanes}", value)


CASTS = [
    ("i2f", "float32", lambda v, i: _cast("float32", v["x"])),
    ("f2i", "int32", lambda v, i: _cast("int32", v["y"])),
    ("f2d", "float64", lambda v, i: _cast("float64", v["y"])),
    ("d2f_via", "float32", lambda v, i: _cast("float32", _cast("float64", v["y"]))),
    ("i2i8", "int8", lambda v, i: _cast("int8", v["x"])),
    ("i2i64", "int64", lambda v, i: _cast("int64", v["x"])),
    ("u8_to_f", "float32", lambda v, i: _cast("float32", v["u"])),
    ("bool_to_i", "int32", lambda v, i: _cast("int32", _cast("bool", v["x"]))),
    ("ramp_to_f", "float32", lambda v, i: _cast("float32", i)),
    ("let", "int32", lambda v, i: _let(v["x"])),
    ("broadcast_const", "float32", lambda v, i: E.Add(v["y"], _const_like(2.5, v["y"]))),
]


def _let(x):
    t = tir.Var("t", x.dtype)
    return E.Let(t, E.Mul(x, x), E.Add(t, t))


def _const_like(value, like):
    scalar = E.FloatImm("float32", value)
    lanes = int(like.dtype.split("x")[1]) if "x" in like.dtype else 1
    return E.Broadcast(scalar, lanes) if lanes > 1 else scalar


@pytest.mark.parametrize("lanes", [1, 16])
def test_casts_lets_ramps_broadcasts(target, lanes):
    func = elementwise(f"casts_{lanes}", {"x": "int32", "y": "float32", "u": "uint8"}, CASTS, lanes=lanes)
    rng = np.random.default_rng(1)
    arrays = [_rand("int32", rng), _rand("float32", rng), _rand("uint8", rng, high=250)]
    arrays += [np.zeros(N, dt) for _, dt, _ in CASTS]
    check(func, arrays, target)


def _intrin(name):
    return lambda v, i: tir.call_intrin("float32" if "x" not in v["p"].dtype else v["p"].dtype, name, v["p"])


MATH = [(n, "float32", _intrin(n)) for n in (
    "exp", "exp2", "log", "log2", "log10", "sqrt", "fabs", "floor", "ceil", "trunc", "round", "nearbyint", "sin",
    "cos", "tan", "tanh", "erf", "sigmoid", "rsqrt", "log1p", "atan", "sinh", "cosh", "exp10",
)] + [
    ("pow", "float32", lambda v, i: tir.call_intrin(v["p"].dtype, "tir.pow", v["p"], v["q"])),
    ("fma", "float32", lambda v, i: tir.call_intrin(v["p"].dtype, "tir.fma", v["p"], v["q"], v["s"])),
    ("atan2", "float32", lambda v, i: tir.call_intrin(v["p"].dtype, "tir.atan2", v["s"], v["q"])),
    ("copysign", "float32", lambda v, i: tir.call_intrin(v["p"].dtype, "tir.copysign", v["p"], v["s"])),
    ("fmod", "float32", lambda v, i: tir.call_intrin(v["p"].dtype, "tir.fmod", v["s"], v["q"])),
    ("isnan", "float32", lambda v, i: E.Select(tir.isnan(v["s"]), v["p"], v["q"])),
    ("isinf", "float32", lambda v, i: E.Select(tir.isinf(v["s"]), v["p"], v["q"])),
    ("isfinite", "float32", lambda v, i: E.Select(tir.isfinite(v["s"]), v["p"], v["q"])),
]


@pytest.mark.parametrize("lanes", [1, 16])
def test_math_intrinsics(target, lanes):
    func = elementwise(f"math_{lanes}", {"p": "float32", "q": "float32", "s": "float32"}, MATH, lanes=lanes)
    rng = np.random.default_rng(2)
    p = rng.uniform(0.1, 2.0, N).astype("float32")
    q = rng.uniform(0.5, 1.5, N).astype("float32")
    s = rng.uniform(-3, 3, N).astype("float32")
    s[:3] = [np.nan, np.inf, -np.inf]
    arrays = [p, q, s] + [np.zeros(N, "float32") for _ in MATH]
    check(func, arrays, target, rtol=2e-5, atol=2e-6)


BITS = [
    ("and", "int32", lambda v, i: tir.bitwise_and(v["a"], v["b"])),
    ("or", "int32", lambda v, i: tir.bitwise_or(v["a"], v["b"])),
    ("xor", "int32", lambda v, i: tir.bitwise_xor(v["a"], v["b"])),
    ("not", "int32", lambda v, i: tir.bitwise_not(v["a"])),
    ("shl", "int32", lambda v, i: tir.shift_left(v["a"], E.Broadcast(E.IntImm("int32", 3), _lanes(v["a"]))
                                                  if _lanes(v["a"]) > 1 else E.IntImm("int32", 3))),
    ("shr", "int32", lambda v, i: tir.shift_right(v["a"], v["s"])),
    ("popcount", "int32", lambda v, i: tir.popcount(v["s"])),
    ("reinterpret", "int32", lambda v, i: tir.reinterpret("int32" if _lanes(v["f"]) == 1 else
                                                          f"int32x{_lanes(v['f'])}", v["f"])),
]


def _lanes(e):
    return int(e.dtype.split("x")[1]) if "x" in e.dtype else 1


@pytest.mark.parametrize("lanes", [1, 8])
def test_bitwise_intrinsics(target, lanes):
    func = elementwise(f"bits_{lanes}", {"a": "int32", "b": "int32", "s": "int32", "f": "float32"}, BITS, lanes=lanes)
    rng = np.random.default_rng(3)
    arrays = [rng.integers(-1000, 1000, N).astype("int32"), rng.integers(-1000, 1000, N).astype("int32"),
              rng.integers(0, 8, N).astype("int32"), rng.standard_normal(N).astype("float32")]
    arrays += [np.zeros(N, "int32") for _ in BITS]
    check(func, arrays, target)


def test_guarded_loads_gathers_and_scatters(target):
    A = tir.decl_buffer((N,), "float32", "A")
    B = tir.decl_buffer((N,), "float32", "B")
    C = tir.decl_buffer((N,), "float32", "C")
    i = tir.Var("i", "int32")
    shifted = tir.if_then_else(E.GT(i, E.IntImm("int32", 0)), E.BufferLoad(A, [E.Sub(i, E.IntImm("int32", 1))]),
                               E.FloatImm("float32", -1.0))
    guarded = S.For(i, 0, N, S.ForKind.SERIAL, S.BufferStore(B, shifted, [i]))
    j = tir.Var("j", "int32")
    # gather A[2j .. 2j + 14 step 2] and scatter into C at stride 2
    gather = E.BufferLoad(A, [E.Ramp(E.Mul(j, E.IntImm("int32", 16)), E.IntImm("int32", 2), 8)])
    scatter = S.BufferStore(C, gather, [E.Ramp(E.Add(E.Mul(j, E.IntImm("int32", 16)), E.IntImm("int32", 1)),
                                                E.IntImm("int32", 2), 8)])
    strided = S.For(j, 0, N // 16, S.ForKind.SERIAL, scatter)
    params = [tir.Var(n, "handle") for n in "abc"]
    func = tir.PrimFunc(params, S.stmt_seq(guarded, strided), buffer_map=dict(zip(params, (A, B, C), strict=True)),
                        attrs={"global_symbol": "gather"})
    rng = np.random.default_rng(4)
    check(func, [rng.standard_normal(N).astype("float32"), np.zeros(N, "float32"), np.zeros(N, "float32")], target)


def _sum_func(kind, lanes_hint=None):
    """out[0] = sum(A) via a local accumulator; the loop is of ``kind``."""
    A = tir.decl_buffer((N, 4), "float32", "A")
    B = tir.decl_buffer((N, 4), "float32", "B")
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    body = S.For(i, 0, N, kind, S.For(j, 0, 4, S.ForKind.VECTORIZED if kind != S.ForKind.VECTORIZED
                                         else S.ForKind.SERIAL,
                                         S.BufferStore(B, E.Mul(E.BufferLoad(A, [i, j]), E.FloatImm("float32", 2.0)),
                                                       [i, j])))
    params = [tir.Var("a", "handle"), tir.Var("b", "handle")]
    return tir.PrimFunc(params, body, buffer_map=dict(zip(params, (A, B), strict=True)), attrs={"global_symbol": f"k{int(kind)}"})


@pytest.mark.parametrize("kind", [S.ForKind.SERIAL, S.ForKind.PARALLEL, S.ForKind.VECTORIZED, S.ForKind.UNROLLED])
def test_loop_kinds_on_two_dimensional_buffers(target, kind):
    func = _sum_func(kind)
    rng = np.random.default_rng(5)
    check(func, [rng.standard_normal((N, 4)).astype("float32"), np.zeros((N, 4), "float32")], target)


def test_control_flow_allocations_and_lets(target):
    """While, IfThenElse with else, LetStmt, stack and heap Allocate, AttrStmt, DeclBuffer, Evaluate."""
    A = tir.decl_buffer((N,), "int32", "A")
    B = tir.decl_buffer((N,), "int32", "B")
    n_big = 20000  # 80 KB: above the stack limit of both backends, so it goes to the heap
    acc_var = tir.Var("acc", tir.PointerType(kiln.ir.PrimType("int32"), "local"))
    acc = tir.decl_buffer((1,), "int32", "acc", data=acc_var, scope="local")
    big_var = tir.Var("big", tir.PointerType(kiln.ir.PrimType("int32"), "global"))
    big = tir.decl_buffer((n_big,), "int32", "big", data=big_var)
    i, k, t = tir.Var("i", "int32"), tir.Var("k", "int32"), tir.Var("t", "int32")
    zero, one = E.IntImm("int32", 0), E.IntImm("int32", 1)
    a_i = E.BufferLoad(A, [i])
    # acc = 0; while (acc < |A[i]|) acc += 1  -> |A[i]| ; then branch on parity
    count = S.stmt_seq(
        S.BufferStore(acc, zero, [zero]),
        S.While(E.LT(E.BufferLoad(acc, [zero]), E.Max(a_i, E.Sub(zero, a_i))),
                S.BufferStore(acc, E.Add(E.BufferLoad(acc, [zero]), one), [zero])),
        S.LetStmt(t, E.BufferLoad(acc, [zero]), S.IfThenElse(
            E.EQ(E.FloorMod(t, E.IntImm("int32", 2)), zero),
            S.BufferStore(B, E.Add(t, E.BufferLoad(big, [E.Mul(i, E.IntImm("int32", 300))])), [i]),
            S.BufferStore(B, E.Sub(zero, t), [i]))),
    )
    loop = S.For(i, 0, N, S.ForKind.SERIAL, S.Allocate(acc_var, "int32", [1], True, S.DeclBuffer(acc, count)))
    fill = S.For(k, 0, n_big, S.ForKind.SERIAL, S.BufferStore(big, E.FloorMod(k, E.IntImm("int32", 7)), [k]))
    body = S.Allocate(big_var, "int32", [n_big], True, S.AttrStmt(big_var, "pragma_note", zero, S.stmt_seq(
        fill, S.Evaluate(zero), loop)))
    params = [tir.Var("a", "handle"), tir.Var("b", "handle")]
    func = tir.PrimFunc(params, body, buffer_map=dict(zip(params, (A, B), strict=True)), attrs={"global_symbol": "control"})
    rng = np.random.default_rng(6)
    check(func, [rng.integers(-20, 20, N).astype("int32"), np.zeros(N, "int32")], target)


def test_external_calls(target):
    """call_pure_extern of a libm function (scalar) and call_extern for its effect inside Evaluate."""
    A = tir.decl_buffer((N,), "float32", "A")
    B = tir.decl_buffer((N,), "float32", "B")
    i = tir.Var("i", "int32")
    body = S.stmt_seq(
        S.Evaluate(tir.call_extern("int32", "abs", E.IntImm("int32", -3))),
        S.For(i, 0, N, S.ForKind.SERIAL, S.BufferStore(
            B, tir.call_pure_extern("float32", "expm1f", E.BufferLoad(A, [i])), [i])))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    func = tir.PrimFunc([a, b], body, buffer_map={a: A, b: B}, attrs={"global_symbol": "extern_calls"})
    mod = kiln.build(func, target=target)
    x = np.linspace(-2, 2, N).astype("float32")
    y = kiln.nd.empty((N,), "float32")
    mod(kiln.nd.array(x), y)
    np.testing.assert_allclose(y.numpy(), np.expm1(x), rtol=1e-6, atol=1e-7)


def test_assert_stmt_reports_its_message(target):
    A = tir.decl_buffer((N,), "float32", "A")
    i = tir.Var("i", "int32")
    check_positive = S.AssertStmt(E.GT(E.BufferLoad(A, [E.IntImm("int32", 0)]), E.FloatImm("float32", 0.0)),
                                  "first element must be positive",
                                  S.For(i, 0, N, S.ForKind.SERIAL, S.BufferStore(A, E.FloatImm("float32", 1.0), [i])))
    a = tir.Var("a", "handle")
    func = tir.PrimFunc([a], check_positive, buffer_map={a: A}, attrs={"global_symbol": "checked"})
    mod = kiln.build(func, target=target)
    ok = kiln.nd.array(np.full(N, 5.0, "float32"))
    mod(ok)
    assert (ok.numpy() == 1.0).all()
    with pytest.raises(RuntimeArgumentError, match="first element must be positive"):
        mod(kiln.nd.array(np.full(N, -1.0, "float32")))


def test_assert_inside_parallel_loop(target):
    A = tir.decl_buffer((N,), "float32", "A")
    i = tir.Var("i", "int32")
    body = S.For(i, 0, N, S.ForKind.PARALLEL, S.AssertStmt(
        E.GE(E.BufferLoad(A, [i]), E.FloatImm("float32", 0.0)), "negative element",
        S.BufferStore(A, E.Mul(E.BufferLoad(A, [i]), E.FloatImm("float32", 2.0)), [i])))
    a = tir.Var("a", "handle")
    func = tir.PrimFunc([a], body, buffer_map={a: A}, attrs={"global_symbol": "par_assert"})
    mod = kiln.build(func, target=target)
    good = kiln.nd.array(np.arange(N, dtype="float32"))
    mod(good)
    np.testing.assert_array_equal(good.numpy(), 2 * np.arange(N, dtype="float32"))
    bad = np.arange(N, dtype="float32")
    bad[40] = -1
    with pytest.raises(RuntimeArgumentError, match="negative element"):
        mod(kiln.nd.array(bad))


def test_symbolic_extent_and_dynamic_allocation(target):
    n = tir.Var("n", "int32")
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    tmp_var = tir.Var("tmp", tir.PointerType(kiln.ir.PrimType("float32"), "global"))
    tmp = tir.decl_buffer((n,), "float32", "tmp", data=tmp_var)
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    body = S.Allocate(tmp_var, "float32", [n], True, S.stmt_seq(
        S.For(i, 0, n, S.ForKind.SERIAL, S.BufferStore(tmp, tir.exp(E.BufferLoad(A, [i])), [i])),
        S.For(j, 0, n, S.ForKind.PARALLEL, S.BufferStore(
            B, E.Add(E.BufferLoad(tmp, [j]), E.BufferLoad(tmp, [E.Sub(E.Sub(n, j), E.IntImm("int32", 1))])), [j]))))
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    func = tir.PrimFunc([a, b], body, buffer_map={a: A, b: B}, attrs={"global_symbol": "dyn"})
    mod = kiln.build(func, target=target)
    for size in (1, 7, 1000):
        x = np.linspace(-1, 1, size).astype("float32")
        y = kiln.nd.empty((size,), "float32")
        mod(kiln.nd.array(x), y)
        np.testing.assert_allclose(y.numpy(), np.exp(x) + np.exp(x[::-1]), rtol=1e-6)
    with pytest.raises(RuntimeArgumentError, match=r"B.shape\[0\] must equal"):
        mod(kiln.nd.array(np.zeros(5, "float32")), kiln.nd.empty((6,), "float32"))


def test_scalar_parameters(target):
    A = tir.decl_buffer((N,), "float32", "A")
    scale, shift = tir.Var("scale", "float32"), tir.Var("shift", "int64")
    i = tir.Var("i", "int32")
    body = S.For(i, 0, N, S.ForKind.SERIAL, S.BufferStore(
        A, E.Add(E.Mul(E.BufferLoad(A, [i]), scale), E.Cast("float32", shift)), [i]))
    a = tir.Var("a", "handle")
    func = tir.PrimFunc([a, scale, shift], body, buffer_map={a: A}, attrs={"global_symbol": "affine"})
    mod = kiln.build(func, target=target)
    x = kiln.nd.array(np.ones(N, "float32"))
    mod(x, 3.0, 2)
    assert (x.numpy() == 5.0).all()
    mod(x, 2, -1)  # an int where a float is expected is converted, as in TVM
    assert (x.numpy() == 9.0).all()
    with pytest.raises(RuntimeArgumentError, match="shift"):
        mod(x, 1.0, 2.5)


@pytest.mark.skipif(not __import__("kiln.target.llvm_compile").target.llvm_compile.have_llvmlite(),
                    reason="needs llvmlite")
def test_tvm_codegen_queries_report_llvmlites_llvm_and_the_host():
    import llvmlite.binding as llvm

    from kiln.runtime.host import host_cpu_features
    from kiln.target import codegen

    assert codegen.llvm_version_major() == llvm.llvm_version_info[0] >= 8
    assert codegen.llvm_get_system_triple() == llvm.get_process_triple()
    assert codegen.llvm_get_system_cpu() == llvm.get_host_cpu_name()
    some = sorted(host_cpu_features())[:2]
    assert codegen.llvm_cpu_has_features(some) and not codegen.llvm_cpu_has_features("no-such-feature")
    with pytest.raises(kiln.error.CodegenError, match="host"):
        codegen.llvm_cpu_has_features("avx2", target="llvm -mcpu=skylake")
