"""tir.InjectInt8DotProduct: the loops spelling an instruction's exact arithmetic become one call of it; loops that
differ in any way the instruction would not reproduce are left alone."""

import pytest

import kiln
from kiln import te, tir
from kiln.te.operation import compute, reduce_axis
from kiln.te.operation import sum as te_sum
from kiln.tir import stmt as S
from kiln.tir.stmt_functor import ir_transform
from kiln.tir.transform import inject_int8_dot
from kiln.tir.transform.inject_int8_dot import int8_dot_instruction
from kiln.topi.x86.conv2d_int8 import dot4


def _lowered(lanes, body):
    """``C[i, v] = sum_k body(A[i, 4k:4k+4], B[k, v, 0:4])`` with the ``v`` loop innermost, lowered."""
    a = te.placeholder((2, 8), "uint8", name="A")
    b = te.placeholder((2, lanes, 4), "int8", name="B")
    k = reduce_axis((0, 2), name="k")
    c = compute((2, lanes), lambda i, v: te_sum(body([a[i, k * 4 + j] for j in range(4)],
                                                     [b[k, v, j] for j in range(4)]), axis=k), name="C")
    s = te.create_schedule(c.op)
    i, v = s[c].op.axis
    s[c].reorder(i, k, v)
    return kiln.lower(s, [a, b, c], name="main")["main"]


def _calls(func):
    found = []

    def visit(e):
        if isinstance(e, tir.Call) and e.op.name == "tir.call_llvm_pure_intrin":
            found.append(e.args[0].value)

    def stmt(node):
        if isinstance(node, S.BufferStore):
            kiln.tir.stmt_functor.post_order_visit(node.value, visit)
        return None

    ir_transform(func.body, None, stmt, [S.BufferStore])
    return found


def _saturated(a, b):
    """The sum as a single pmaddubsw would compute it: adjacent pairs saturated to 16 bits."""
    p = [x.astype("int32") * y.astype("int32") for x, y in zip(a, b, strict=True)]
    sat = lambda v: tir.Max(tir.Min(v, tir.const(32767, "int32")), tir.const(-32768, "int32"))  # noqa: E731
    return sat(p[0] + p[1]) + sat(p[2] + p[3])


@pytest.mark.parametrize("instruction, lanes, intrinsics", [
    ("avx512vnni", 16, ["llvm.x86.avx512.vpdpbusd.512"]),
    ("avx512bw", 16, ["llvm.x86.avx512.pmaddubs.w.512", "llvm.x86.avx512.pmaddw.d.512"] * 2),
    ("avx2", 8, ["llvm.x86.avx2.pmadd.ub.sw", "llvm.x86.avx2.pmadd.wd"] * 2),
    ("ssse3", 4, ["llvm.x86.ssse3.pmadd.ub.sw.128", "llvm.x86.sse2.pmadd.wd"] * 2),
])
def test_the_exact_dot_product_is_rewritten(instruction, lanes, intrinsics):
    """vpdpbusd once; pmaddubsw and pmaddwd once per nibble of the uint8 operand."""
    func = inject_int8_dot(_lowered(lanes, dot4), instruction)
    assert sorted(_calls(func)) == sorted(intrinsics)


def test_other_arithmetic_is_left_alone():
    # a saturated sum is not the dot product, for any instruction
    for instruction, lanes in (("avx512vnni", 16), ("avx2", 8)):
        assert not _calls(inject_int8_dot(_lowered(lanes, _saturated), instruction))
    # three products, or a loop as long as another instruction's vector
    three = lambda a, b: sum(a[j].astype("int32") * b[j].astype("int32") for j in range(1, 4))  # noqa: E731
    assert not _calls(inject_int8_dot(_lowered(16, three), "avx512vnni"))
    assert not _calls(inject_int8_dot(_lowered(8, dot4), "avx512vnni"))


def test_instruction_by_features():
    assert int8_dot_instruction({"avx512f", "avx512bw", "avx512vnni", "avx2", "ssse3"}) == "avx512vnni"
    assert int8_dot_instruction({"avx512f", "avx512bw", "avx2", "ssse3"}) == "avx512bw"
    assert int8_dot_instruction({"avx2", "ssse3"}) == "avx2"
    assert int8_dot_instruction({"sse2"}) is None
