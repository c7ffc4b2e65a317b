"""``tir.LegalizeVectorWidth``: splitting vectors wider than the CPU's vector registers, for the C backend.

``VectorizeLoop`` turns ``for j in T.vectorized(32)`` over float32 into 32-lane vectors. LLVM legalizes such a type
into two native 16-lane registers itself; GCC does not: a 128-byte generic vector has no machine mode, so GCC keeps
it in memory and every operation goes through the stack (a tiled matmul runs at a fifth of its speed). Before
printing C, :func:`legalize_vector_width` therefore rewrites each store of a ``k * n``-lane value, where ``n`` lanes
fill one register of ``target.vector_width`` bits, into ``k`` stores of ``n``-lane slices:

* a slice of ``Ramp(b, s, k * n)`` starting at lane ``o`` is ``Ramp(b + o * s, s, n)``; of ``Broadcast(x, _)`` it is
  ``Broadcast(x, n)``;
* element-wise nodes (arithmetic, comparisons, logic, ``Select``, ``Cast``, pure intrinsics) slice their operands;
* a load slices its last index; a vector ``LetStmt`` becomes one let per slice, and its variable's slices are those.

Anything else (a gather through a computed index vector, a ``Let`` expression, ``reinterpret`` between lane counts)
keeps that store whole: the split is an optimization, never required for correctness.
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from .. import dtype as _dt
from .. import expr as E
from .. import stmt as S
from ..functor import StmtExprMutator
from .function_pass import PrimFuncPass

_ELEMENTWISE_CALLS_EXCLUDED = {"tir.reinterpret", "tir.tvm_struct_get", "tir.call_extern", "tir.call_pure_extern"}


class _CannotSplit(Exception):
    pass


def _lanes(e) -> int:
    return _dt.lanes(e.dtype)


class VectorSplitter(StmtExprMutator):
    """Splits stores (and lets) of vectors wider than ``max_bits`` into register-wide pieces."""

    def __init__(self, max_bits):
        self.max_bits = max_bits
        self.slices: dict = {}  # id(vector var) -> (var, [slice vars])

    def piece_lanes(self, dtype) -> int:
        """Lanes of one register-wide piece of ``dtype`` (or the full lanes when it already fits)."""
        t = _dt.DataType.parse(dtype)
        bits = 8 if t.is_bool() else t.bits
        fit = max(1, self.max_bits // bits)
        return fit if t.lanes > fit and t.lanes % fit == 0 else t.lanes

    def visit_expr(self, expr):
        return expr  # only statements change: stores and lets are sliced explicitly

    def visit_buffer_store(self, op):
        lanes = _lanes(op.value)
        piece = self.piece_lanes(op.value.dtype)
        if piece == lanes or not op.indices or _lanes(op.indices[-1]) != lanes:
            return op
        try:
            stores = [
                S.BufferStore(op.buffer, self.slice(op.value, start, piece),
                              (*op.indices[:-1], self.slice(op.indices[-1], start, piece)))
                for start in range(0, lanes, piece)
            ]
        except _CannotSplit:
            return op
        return S.SeqStmt(tuple(stores))

    def visit_let_stmt(self, op):
        # chains of scalar lets and asserts (a packed function's prologue) are walked with a loop, not recursion
        chain = []
        while isinstance(op, S.AssertStmt) or isinstance(op, S.LetStmt) and _lanes(op.value) == 1:
            chain.append(op)
            op = op.body
        body = self.visit_stmt(op) if chain else self._split_let(op)
        for item in reversed(chain):
            body = item.with_fields(body=body)
        return body

    visit_assert_stmt = visit_let_stmt

    def _split_let(self, op):
        lanes = _lanes(op.value)
        piece = self.piece_lanes(op.value.dtype)
        value = op.value
        try:
            if piece == lanes:
                raise _CannotSplit()
            parts = [self.slice(value, start, piece) for start in range(0, lanes, piece)]
        except _CannotSplit:
            return op.with_fields(body=self.visit_stmt(op.body))
        names = [E.Var(f"{op.var.name_hint}_{k}", p.dtype) for k, p in enumerate(parts)]
        self.slices[id(op.var)] = (op.var, names)
        body = self.visit_stmt(op.body)
        # the whole vector stays available to whatever could not be split
        body = S.LetStmt(op.var, value, body)
        for var, part in reversed(list(zip(names, parts, strict=True))):
            body = S.LetStmt(var, part, body)
        return body

    # ---- slicing
    def slice(self, e, start, lanes):
        """Lanes ``[start, start + lanes)`` of vector expression ``e``."""
        if _lanes(e) == 1:
            return e
        kind = type(e)
        if kind is E.Ramp:
            if start == 0:
                base = e.base
            elif isinstance(e.stride, E.IntImm):
                base = E.Add(e.base, E.IntImm(e.base.dtype, start * e.stride.value))
            else:
                base = E.Add(e.base, E.Mul(E.IntImm(e.base.dtype, start), e.stride))
            return E.Ramp(base, e.stride, lanes) if lanes > 1 else base
        if kind is E.Broadcast:
            return E.Broadcast(e.value, lanes) if lanes > 1 else e.value
        if isinstance(e, E.BinaryOpExpr | E.CmpExpr) or kind in (E.And, E.Or):
            return kind(self.slice(e.a, start, lanes), self.slice(e.b, start, lanes))
        if kind is E.Not:
            return E.Not(self.slice(e.a, start, lanes))
        if kind is E.Cast:
            return E.Cast(_dt.with_lanes(_dt.element(e.dtype), lanes), self.slice(e.value, start, lanes))
        if kind is E.Select:
            return E.Select(self.slice(e.condition, start, lanes), self.slice(e.true_value, start, lanes),
                            self.slice(e.false_value, start, lanes))
        if kind is E.BufferLoad:
            if not e.indices or _lanes(e.indices[-1]) != _lanes(e):
                raise _CannotSplit()
            return E.BufferLoad(e.buffer, (*e.indices[:-1], self.slice(e.indices[-1], start, lanes)))
        if kind is E.Call and e.op.name not in _ELEMENTWISE_CALLS_EXCLUDED:
            args = tuple(self.slice(a, start, lanes) for a in e.args)
            return E.Call(_dt.with_lanes(_dt.element(e.dtype), lanes), e.op, args)
        if isinstance(e, E.Var) and id(e) in self.slices:
            piece_vars = self.slices[id(e)][1]
            piece = _lanes(piece_vars[0])
            if lanes == piece and start % piece == 0:
                return piece_vars[start // piece]
        raise _CannotSplit()


def legalize_vector_width(func, max_bits):
    """``func`` with stores of vectors wider than ``max_bits`` split into register-wide stores (see the module
    docstring)."""
    if max_bits <= 0:
        return func
    body = VectorSplitter(max_bits).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


@register_pass("tir.LegalizeVectorWidth")
@dataclass(frozen=True)
class LegalizeVectorWidth(PrimFuncPass):
    """Split stores of vectors wider than ``max_bits`` into register-wide ones (see the module docstring).

    Parameters
    ----------
    max_bits : int
        The width of a vector register (``target.vector_width``); 0 leaves functions alone.
    """

    max_bits: int = 0
    info = PassInfo(0, "tir.LegalizeVectorWidth")

    def transform_function(self, func, mod, ctx):
        return legalize_vector_width(func, self.max_bits)
