"""``tir.InjectInt8DotProduct``: x86 8-bit dot-product instructions for the int8 reduction loops that spell them
(what TVM reaches by tensorizing with ``dot_16x1x16_uint8_int8_int32``).

The int8 convolution and dense computes (:mod:`kiln.topi.x86.conv2d_int8`, :mod:`kiln.topi.x86.dense_int8`) keep
four consecutive input channels innermost in both operands and sum them in the reduction's body, with the packed
weight's output channels ``v`` four bytes apart. After lowering, the loop over one vector of outputs reads::

    for v in range(L):
        C[c + v] = C[c + v] + DOT          (or C[c + v] = DOT, a reduction of one step)

where ``DOT = a_0 b_0 + a_1 b_1 + a_2 b_2 + a_3 b_3`` (in any order and association), ``a_j = int32(A[a + j])``
(``A`` uint8, ``a`` free of ``v``) and ``b_j = int32(B[b + 4 v + j])`` (``B`` int8). The exact sum, on every CPU:

* with AVX512-VNNI it is ``vpdpbusd`` (four products per 32-bit lane, added to the accumulator);
* with SSSE3, AVX2 or AVX-512BW it is ``pmaddubsw`` (adjacent byte products summed into 16 bits) then ``pmaddwd``
  (the 16-bit pairs summed into 32 bits), applied to the two nibbles of the uint8 operand, ``a = 16 hi + lo``:
  ``pmaddubsw`` saturates a pair of products of full bytes (255 * 127 * 2 > 32767), never one of a nibble
  (15 * 128 * 2), so ``16 * dot(hi, b) + dot(lo, b)`` is exact, where the single ``pmaddubsw`` TVM uses on those
  CPUs saturates.

Such a loop becomes one vector statement: the four bytes ``A[a:a+4]`` are read as one int32 (split into nibbles)
and broadcast to the ``L`` lanes, ``B[b:b+4L]`` is read as one ``4L``-byte vector, and the instructions (through
``call_llvm_pure_intrin``) compute all ``L`` sums. The rewrite changes no value; loops of any other shape are left
alone. Only the LLVM backend runs the pass, for a CPU with the instructions (:func:`int8_dot_instruction`).
"""

from dataclasses import dataclass

from ...arith import Analyzer
from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from .. import expr as E
from .. import stmt as S
from ..analysis import stmt_contains
from ..intrin import call_intrin, call_llvm_pure_intrin
from ..stmt_functor import ir_transform, substitute
from .function_pass import PrimFuncPass

__all__ = ["InjectInt8DotProduct", "INT8_DOT_INSTRUCTIONS", "int8_dot_instruction"]


@dataclass(frozen=True)
class Int8DotInstruction:
    """One way to compute ``lanes`` int32 sums of four uint8 x int8 products exactly.

    Attributes
    ----------
    lanes : int
        int32 results per instruction (the vector width / 32).
    intrinsics : tuple of str
        The LLVM intrinsics: ``(vpdpbusd,)``, or ``(pmaddubsw, pmaddwd)`` applied to the nibbles of the uint8 operand
        (module docstring).
    """

    lanes: int
    intrinsics: tuple


INT8_DOT_INSTRUCTIONS = {
    "avx512vnni": Int8DotInstruction(16, ("llvm.x86.avx512.vpdpbusd.512",)),
    "avx512bw": Int8DotInstruction(16, ("llvm.x86.avx512.pmaddubs.w.512", "llvm.x86.avx512.pmaddw.d.512")),
    "avx2": Int8DotInstruction(8, ("llvm.x86.avx2.pmadd.ub.sw", "llvm.x86.avx2.pmadd.wd")),
    "ssse3": Int8DotInstruction(4, ("llvm.x86.ssse3.pmadd.ub.sw.128", "llvm.x86.sse2.pmadd.wd")),
}
"""The instructions by the CPU feature that provides them, best first."""


def int8_dot_instruction(features):
    """The name (a key of :data:`INT8_DOT_INSTRUCTIONS`) of the best int8 dot product a CPU with ``features``
    (LLVM feature names without ``+``) has, or None (x86-64 before SSSE3, other architectures)."""
    features = set(features)
    return next((name for name in INT8_DOT_INSTRUCTIONS if name in features), None)


def _terms(e, out):
    """Flatten a tree of ``Add`` into its terms."""
    if isinstance(e, E.Add):
        _terms(e.a, out)
        _terms(e.b, out)
    else:
        out.append(e)
    return out


def _product(e):
    """``(A load, B load)`` of ``int32(A[.]) * int32(B[.])`` with A uint8 and B int8 (either order), else None."""
    if not isinstance(e, E.Mul) or e.dtype != "int32":
        return None
    loads = []
    for side in (e.a, e.b):
        if not (isinstance(side, E.Cast) and isinstance(side.value, E.BufferLoad) and len(side.value.indices) == 1):
            return None
        loads.append(side.value)
    by_dtype = {ld.dtype: ld for ld in loads}
    if set(by_dtype) != {"uint8", "int8"}:
        return None
    return by_dtype["uint8"], by_dtype["int8"]


class _Matcher:
    """Checks one loop against the forms of the module docstring."""

    def __init__(self, instr: Int8DotInstruction):
        self.instr = instr
        self.analyzer = Analyzer()

    def _offset(self, index, var, value, base):
        """``index`` at ``var = value`` minus ``base``, as a constant, or None."""
        diff = self.analyzer.simplify(E.Sub(substitute(index, {var: E.IntImm(var.dtype, value)}), base))
        return diff.value if isinstance(diff, E.IntImm) else None

    @staticmethod
    def products(terms):
        """The four ``(A, B)`` load pairs of the dot product's ``terms``, or None."""
        prods = [_product(t) for t in terms]
        return prods if len(prods) == 4 and all(prods) else None

    def rewrite(self, loop):
        """The vector statement replacing ``loop``, or None when it does not match."""
        lanes = self.instr.lanes
        if not (isinstance(loop.min, E.IntImm) and loop.min.value == 0 and isinstance(loop.extent, E.IntImm)
                and loop.extent.value == lanes and isinstance(loop.body, S.BufferStore)):
            return None
        store, v = loop.body, loop.loop_var
        if store.buffer.dtype != "int32" or len(store.indices) != 1:
            return None
        terms = _terms(store.value, [])  # (acc + d1) + d2 ... in any association
        c_idx = store.indices[0]
        accs = [t for t in terms if isinstance(t, E.BufferLoad) and t.buffer is store.buffer
                and self.analyzer.can_prove_equal(t.indices[0], c_idx)]
        if len(accs) > 1:
            return None
        accumulate = bool(accs)  # a one-step reduction stores the dot product itself
        dot = [t for t in terms if not accs or t is not accs[0]]
        prods = self.products(dot)
        if prods is None:
            return None
        c0 = substitute(c_idx, {v: E.IntImm(v.dtype, 0)})
        if self._offset(c_idx, v, 1, c0) != 1:
            return None
        a_first, b_first = prods[0]
        a_buf, b_buf = a_first.buffer, b_first.buffer
        a0 = a_first.indices[0]
        b0 = substitute(b_first.indices[0], {v: E.IntImm(v.dtype, 0)})
        offsets = []  # the byte offsets of the products relative to the first one
        for a_ld, b_ld in prods:
            if a_ld.buffer is not a_buf or b_ld.buffer is not b_buf:
                return None
            j = self._offset(a_ld.indices[0], v, 0, a0)
            if j is None or self._offset(a_ld.indices[0], v, 1, a0) != j:  # A must not depend on v
                return None
            if self._offset(b_ld.indices[0], v, 0, b0) != j or self._offset(b_ld.indices[0], v, 1, b0) != j + 4:
                return None  # B: the same byte of the next output four bytes on
            offsets.append(j)
        first = min(offsets)
        if sorted(j - first for j in offsets) != [0, 1, 2, 3]:
            return None
        return self._emit(store.buffer, c0, a_buf, _plus(a0, first), b_buf, _plus(b0, first), accumulate)

    def _emit(self, c_buf, c0, a_buf, a0, b_buf, b0, accumulate):
        lanes = self.instr.lanes
        word = _bitcast("int32", E.BufferLoad(a_buf, (E.Ramp(a0, E.IntImm(a0.dtype, 1), 4),)))  # A's four bytes
        b_vec = E.BufferLoad(b_buf, (E.Ramp(b0, E.IntImm(b0.dtype, 1), 4 * lanes),))
        c_index = E.Ramp(c0, E.IntImm(c0.dtype, 1), lanes)
        vec32 = f"int32x{lanes}"
        acc = E.BufferLoad(c_buf, (c_index,)) if accumulate else None
        if len(self.instr.intrinsics) == 1:  # vpdpbusd
            start = acc if acc is not None else E.Broadcast(E.IntImm("int32", 0), lanes)
            value = call_llvm_pure_intrin(vec32, self.instr.intrinsics[0], start, E.Broadcast(word, lanes),
                                          _bitcast(vec32, b_vec))
            return S.BufferStore(c_buf, value, (c_index,))
        pmaddubsw, pmaddwd = self.instr.intrinsics
        nibbles = E.IntImm("int32", 0x0F0F0F0F)
        low = call_intrin("int32", "tir.bitwise_and", word, nibbles)
        high = call_intrin("int32", "tir.bitwise_and",
                           call_intrin("int32", "tir.shift_right", word, E.IntImm("int32", 4)), nibbles)
        value = acc
        for part, weight in ((high, 16), (low, 1)):
            pairs = call_llvm_pure_intrin(f"int16x{2 * lanes}", pmaddubsw,
                                          _bitcast(f"uint8x{4 * lanes}", E.Broadcast(part, lanes)), b_vec)
            quads = call_llvm_pure_intrin(vec32, pmaddwd, pairs, E.Broadcast(E.IntImm("int16", weight), 2 * lanes))
            value = quads if value is None else E.Add(value, quads)
        return S.BufferStore(c_buf, value, (c_index,))


def _plus(index, k):
    return Analyzer().simplify(E.Add(index, E.IntImm(index.dtype, k))) if k else index


def _bitcast(dtype, value):
    return E.Call(dtype, Op.get("tir.reinterpret"), (value,))


def _reads_bytes(node):
    return isinstance(node, E.BufferLoad) and node.buffer.dtype in ("uint8", "int8")


def inject_int8_dot(func, instruction):
    """Return ``func`` with its int8 dot-product loops computed by ``instruction`` (a key of
    :data:`INT8_DOT_INSTRUCTIONS`; see the module docstring)."""
    if not stmt_contains(func.body, _reads_bytes):  # no uint8/int8 operands: nothing to match (most functions)
        return func
    matcher = _Matcher(INT8_DOT_INSTRUCTIONS[instruction])

    def postorder(node):
        if node.kind in (S.ForKind.SERIAL, S.ForKind.VECTORIZED, S.ForKind.UNROLLED):
            return matcher.rewrite(node)
        return None

    return func.with_body(ir_transform(func.body, None, postorder, [S.For]))


@register_pass("tir.InjectInt8DotProduct")
@dataclass(frozen=True)
class InjectInt8DotProduct(PrimFuncPass):
    """Compute int8 dot-product loops with the x86 instruction ``instruction`` (see the module docstring)."""

    instruction: str = "avx512vnni"
    info = PassInfo(0, "tir.InjectInt8DotProduct")

    def transform_function(self, func, mod, ctx):
        return inject_int8_dot(func, self.instruction)
