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


@pytest.mark.parametrize("instruction, lanes, saturating, intrinsic", [
    ("avx512vnni", 16, False, "llvm.x86.avx512.vpdpbusd.512"),
    ("avx512bw", 16, True, "llvm.x86.avx512.pmaddubs.w.512"),
    ("avx2", 8, True, "llvm.x86.avx2.pmadd.ub.sw"),
    ("ssse3", 4, True, "llvm.x86.ssse3.pmadd.ub.sw.128"),
])
def test_the_instruction_s_arithmetic_is_rewritten(instruction, lanes, saturating, intrinsic):
    func = inject_int8_dot(_lowered(lanes, lambda a, b: dot4(a, b, saturating)), instruction)
    assert intrinsic in _calls(func)


def test_other_arithmetic_is_left_alone():
    # vpdpbusd does not saturate and pmaddubsw does: neither form stands for the other
    assert not _calls(inject_int8_dot(_lowered(16, lambda a, b: dot4(a, b, True)), "avx512vnni"))
    assert not _calls(inject_int8_dot(_lowered(16, lambda a, b: dot4(a, b, False)), "avx512bw"))
    # three products, or a loop as long as another instruction's vector
    three = lambda a, b: sum(a[j].astype("int32") * b[j].astype("int32") for j in range(1, 4))  # noqa: E731
    assert not _calls(inject_int8_dot(_lowered(16, three), "avx512vnni"))
    assert not _calls(inject_int8_dot(_lowered(8, lambda a, b: dot4(a, b, False)), "avx512vnni"))


def test_instruction_by_features():
    assert int8_dot_instruction({"avx512f", "avx512bw", "avx512vnni", "avx2", "ssse3"}) == "avx512vnni"
    assert int8_dot_instruction({"avx512f", "avx512bw", "avx2", "ssse3"}) == "avx512bw"
    assert int8_dot_instruction({"avx2", "ssse3"}) == "avx2"
    assert int8_dot_instruction({"sse2"}) is None
