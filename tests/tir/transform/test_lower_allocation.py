"""tir.LowerAllocation (kiln/tir/transform/lower_allocation.py) and the TIR pipeline (pipeline.py): the pass places
every allocation, the code generators print what it decided, kiln.lower and kiln.build run one list of passes."""

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.target import Target
from kiln.tir import expr as E
from kiln.tir import stmt as S
from kiln.tir.stmt_functor import pre_order_visit
from kiln.tir.transform import LowerAllocation, build_passes, lower_passes, tir_pipeline


def _allocates(func):
    found = []
    pre_order_visit(func.body, lambda n: found.append(n) if isinstance(n, S.Allocate) else None)
    return found


def _func(extent):
    n = tir.Var("n", "int32")
    buf = tir.Var("tmp", tir.PointerType(kiln.ir.PrimType("float32"), "global"))
    body = S.Allocate(buf, "float32", [extent if extent is not None else n], True, S.Evaluate(E.IntImm("int32", 0)))
    return tir.PrimFunc([n], body, attrs={"global_symbol": "f"})


@pytest.mark.parametrize("extent, on_heap", [(16, False), (16 * 1024, False), (16 * 1024 + 1, True), (None, True)])
def test_places_by_size(extent, on_heap):
    mod = LowerAllocation()(kiln.IRModule({"f": _func(extent)}))
    (alloc,) = _allocates(mod["f"])
    assert bool(alloc.annotations.get("kiln.on_heap", False)) == on_heap
    small = LowerAllocation(stack_limit=8)(kiln.IRModule({"f": _func(16)}))
    assert _allocates(small["f"])[0].annotations.get("kiln.on_heap")


@pytest.mark.parametrize("target", ["c", "llvm"])
@pytest.mark.parametrize("n", [64, 1 << 18])
def test_generators_follow_the_placement(target, n):
    """A 1 MiB intermediate buffer goes to the heap on both backends (the stack would overflow on a worker), a
    small one stays on the stack; the results are right either way."""
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((n,), lambda i: B[i] + 1.0, name="C")
    s = te.create_schedule(C.op)
    m = kiln.build(s, [A, C], target=target, name="f")
    source = m.get_source()
    heap_call = "*)kiln_alloc(" in source or "call ptr @kiln_alloc" in source or "@kiln_alloc(i64" in source
    assert heap_call == (n * 4 > 64 * 1024)
    a = np.arange(n, dtype="float32")
    c = kiln.nd.empty((n,))
    m["f"](a, c)
    np.testing.assert_array_equal(c.numpy(), a * 2 + 1)


def test_one_pipeline_for_lower_and_build():
    names = [p.info.name for p in tir_pipeline().passes]
    assert names == [p.info.name for p in lower_passes()]
    c_names = [p.info.name for p in build_passes(Target("c"))]
    assert c_names == ["tir.LowerIntrin", "tir.MakePackedAPI", "tir.LowerAllocation", "tir.FP16ComputeLegalize",
                       "tir.LegalizeVectorWidth"]
    assert [p.info.name for p in build_passes(Target("llvm -mcpu=x86-64"))] == c_names[:3]
    assert [p.info.name for p in tir_pipeline(Target("llvm -mcpu=x86-64")).passes] == names + c_names[:3]
    # a CPU with 8-bit dot products first computes the int8 loops that spell them with them
    assert [p.info.name for p in build_passes(Target("llvm -mcpu=cascadelake"))] == \
        ["tir.InjectInt8DotProduct", *c_names[:3]]
