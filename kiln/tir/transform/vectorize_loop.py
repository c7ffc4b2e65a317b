"""``tir.VectorizeLoop``: turn loops marked ``ForKind.VECTORIZED`` into vector code (TVM's
``tir.transform.VectorizeLoop``).

The loop variable ``v`` of ``for v in T.vectorized(n)`` (n a constant power of two, 2..64) is replaced by
``Ramp(min, 1, n)``; every expression depending on it becomes an ``n``-lane vector and scalar operands meeting a
vector are broadcast. The body then runs once. What code generators see afterwards:

* loads and stores index their buffer with scalars except in the last dimension, where a vector index is a
  ``Ramp`` with stride 1 (a contiguous vector access); a load whose index does not depend on ``v`` stays scalar and
  is broadcast;
* arithmetic, comparisons, ``Select``, ``Cast`` and pure math intrinsics (``exp``, ``fma`` ...) on vectors;
* ``if_then_else(c, t, f)`` whose condition ``c`` does not depend on ``v`` (a padding guard of the row), with vector
  branches: the code generators branch on ``c``, so the untaken branch is never evaluated.

A body guarded by a condition on ``v`` -- the tail check ``if likely(j_outer * 32 + v < 37)`` of a split that does
not divide its extent -- is *versioned*: when the condition is a conjunction of comparisons affine in ``v``, it holds
for every lane exactly when it holds for the first and the last, so the loop becomes
``if (cond(min) and cond(min + n - 1)) vector body else serial loop``: full tiles run the vector code and only the
tail tile the scalar loop.

When the body cannot be expressed that way (a non-contiguous vector index, a store whose location does not depend on
``v``, another condition or an allocation depending on ``v``, an impure call, an ``if_then_else`` whose condition is a
vector), or when the extent is not a constant power of two, the loop is kept as a serial loop: the scalar fallback.
"""

from dataclasses import dataclass

from ...arith import Analyzer
from ...ir.transform import PassInfo, register_pass
from .. import dtype as _dt
from .. import expr as E
from .. import stmt as S
from ..analysis import undefined_vars
from ..functor import StmtExprMutator
from ..intrin import BINARY_MATH, PREDICATES, TERNARY_MATH, UNARY_MATH
from ..stmt_functor import substitute
from .function_pass import PrimFuncPass

_VECTOR_CALLS = {f"tir.{n}" for n in (*UNARY_MATH, *BINARY_MATH, *TERNARY_MATH, *PREDICATES)} | {
    "tir.likely", "tir.bitwise_and", "tir.bitwise_or", "tir.bitwise_xor", "tir.bitwise_not", "tir.shift_left",
    "tir.shift_right",
}
MAX_LANES = 64


class CannotVectorize(Exception):
    """Raised inside the vectorizer when the loop body has no vector form; the loop then stays serial."""


def _lanes(e) -> int:
    return _dt.lanes(e.dtype)


def _widen(e, lanes):
    if _lanes(e) == lanes:
        return e
    if _lanes(e) != 1:
        raise CannotVectorize(f"cannot combine {e.dtype} with {lanes} lanes")
    return E.Broadcast(e, lanes)


class Vectorizer(StmtExprMutator):
    """Rewrites the body of one vectorized loop for ``lanes`` lanes."""

    def __init__(self, loop_var, base, lanes):
        self.lanes = lanes
        self.var_map = {loop_var: E.Ramp(base, E.IntImm(loop_var.dtype, 1), lanes)}
        self.analyzer = Analyzer()

    # ---- expressions
    def visit_var(self, op):
        return self.var_map.get(op, op)

    def _binary(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if a is op.a and b is op.b:
            return op
        n = max(_lanes(a), _lanes(b))
        return type(op)(_widen(a, n), _widen(b, n))

    visit_add = visit_sub = visit_mul = visit_div = visit_mod = visit_floor_div = visit_floor_mod = _binary
    visit_min = visit_max = visit_eq = visit_ne = visit_lt = visit_le = visit_gt = visit_ge = _binary
    visit_and = visit_or = _binary

    def visit_select(self, op):
        c, t, f = self.visit_expr(op.condition), self.visit_expr(op.true_value), self.visit_expr(op.false_value)
        if c is op.condition and t is op.true_value and f is op.false_value:
            return op
        n = max(_lanes(c), _lanes(t), _lanes(f))
        return E.Select(_widen(c, n), _widen(t, n), _widen(f, n))

    def visit_cast(self, op):
        value = self.visit_expr(op.value)
        if value is op.value:
            return op
        return E.Cast(_dt.with_lanes(op.dtype, _lanes(value)), value)

    def visit_ramp(self, op):
        raise CannotVectorize("a vectorized loop already holds vector code")

    visit_broadcast = visit_ramp

    def visit_let(self, op):
        value = self.visit_expr(op.value)
        var = op.var
        if _lanes(value) != _lanes(op.var):
            var = E.Var(op.var.name_hint, value.dtype)
            self.var_map[op.var] = var
        body = self.visit_expr(op.body)
        if value is op.value and body is op.body:
            return op
        return E.Let(var, value, body)

    def visit_call(self, op):
        args = [self.visit_expr(a) for a in op.args]
        if all(a is b for a, b in zip(args, op.args, strict=True)):
            return op
        if op.op.name == "tir.if_then_else":
            return self._if_then_else(op, *args)
        if op.op.name not in _VECTOR_CALLS:
            raise CannotVectorize(f"{op.op.name} has no vector form")
        n = max(_lanes(a) for a in args)
        return E.Call(_dt.with_lanes(op.dtype, n), op.op, [_widen(a, n) for a in args])

    def _if_then_else(self, op, cond, then_value, else_value):
        """``if_then_else`` with a scalar condition keeps it (the code generators branch, so the untaken side, such
        as a padding guard's out-of-bounds load, never runs) over vector branches; a vector condition has no safe
        vector form."""
        if _lanes(cond) != 1:
            raise CannotVectorize("an if_then_else whose condition depends on the vectorized loop")
        n = max(_lanes(then_value), _lanes(else_value))
        return E.Call(_dt.with_lanes(op.dtype, n), op.op, [cond, _widen(then_value, n), _widen(else_value, n)])

    def _vector_index(self, buffer, indices):
        indices = [self.visit_expr(i) for i in indices]
        for i in indices[:-1]:
            if _lanes(i) != 1:
                raise CannotVectorize(f"vector index in an inner dimension of {buffer.name}")
        if indices and _lanes(indices[-1]) != 1:
            last = self.analyzer.simplify(indices[-1])
            if isinstance(last, E.Broadcast):
                last = last.value
            elif not (isinstance(last, E.Ramp) and isinstance(last.stride, E.IntImm) and last.stride.value == 1):
                raise CannotVectorize(f"non-contiguous vector access to {buffer.name}: {last}")
            indices[-1] = last
        return tuple(indices)

    def visit_buffer_load(self, op):
        indices = self._vector_index(op.buffer, op.indices)
        if all(a is b for a, b in zip(indices, op.indices, strict=True)):
            return op
        return E.BufferLoad(op.buffer, indices)

    def visit_producer_load(self, op):
        raise CannotVectorize("ProducerLoad")

    def visit_reduce(self, op):
        raise CannotVectorize("Reduce")

    # ---- statements
    def visit_buffer_store(self, op):
        indices = self._vector_index(op.buffer, op.indices)
        value = self.visit_expr(op.value)
        if not indices or _lanes(indices[-1]) == 1:
            raise CannotVectorize(f"store to {op.buffer.name} does not depend on the vectorized variable")
        return S.BufferStore(op.buffer, _widen(value, self.lanes), indices)

    def visit_for(self, op):
        lo, extent = self.visit_expr(op.min), self.visit_expr(op.extent)
        if _lanes(lo) != 1 or _lanes(extent) != 1:
            raise CannotVectorize("inner loop bounds depend on the vectorized variable")
        kind = S.ForKind.SERIAL if op.kind == S.ForKind.VECTORIZED else op.kind
        return op.with_fields(min=lo, extent=extent, kind=kind, body=self.visit_stmt(op.body))

    def visit_if_then_else(self, op):
        cond = self.visit_expr(op.condition)
        if _lanes(cond) != 1:
            raise CannotVectorize("branch condition depends on the vectorized variable")
        return super().visit_if_then_else(op)

    def visit_let_stmt(self, op):
        value = self.visit_expr(op.value)
        var = op.var
        if _lanes(value) != _lanes(op.var):
            var = E.Var(op.var.name_hint, value.dtype)
            self.var_map[op.var] = var
        return S.LetStmt(var, value, self.visit_stmt(op.body))

    def visit_allocate(self, op):
        raise CannotVectorize("allocation inside a vectorized loop")

    def visit_evaluate(self, op):
        raise CannotVectorize("call for effect inside a vectorized loop")

    def visit_assert_stmt(self, op):
        raise CannotVectorize("assertion inside a vectorized loop")

    def visit_while(self, op):
        raise CannotVectorize("while loop inside a vectorized loop")


class LoopVectorizer(StmtExprMutator):
    """Finds vectorized loops (innermost first) and vectorizes each, or falls back to a serial loop."""

    def visit_expr(self, expr):
        return expr

    def visit_for(self, op):
        body = self.visit_stmt(op.body)
        op = op.with_fields(body=body)
        if op.kind != S.ForKind.VECTORIZED:
            return op
        n = op.extent.value if isinstance(op.extent, E.IntImm) else -1
        if n == 1:
            return substitute(op.body, {op.loop_var: op.min})
        if n < 2 or n > MAX_LANES or n & (n - 1):
            return op.with_fields(kind=S.ForKind.SERIAL)
        serial = op.with_fields(kind=S.ForKind.SERIAL)
        try:
            return Vectorizer(op.loop_var, op.min, n).visit_stmt(op.body)
        except CannotVectorize:
            pass
        guard = _affine_guard(op.body, op.loop_var)
        if guard is None:
            return serial
        try:
            vector = Vectorizer(op.loop_var, op.min, n).visit_stmt(op.body.then_case)
        except CannotVectorize:
            return serial
        cond, terms = guard
        last = op.min + E.IntImm(op.loop_var.dtype, n - 1)
        every_lane = E.And(substitute(cond, {op.loop_var: op.min}), substitute(cond, {op.loop_var: last}))
        return S.IfThenElse(Analyzer().simplify(every_lane), vector, _shortened(serial, terms))


def _shortened(loop, terms):
    """``loop`` (a serial loop guarded by the comparisons ``terms`` of :func:`_affine_guard`) ending where an upper
    bound on its variable does: a tail of 4 valid lanes out of 32 iterates 4 times, not 32. The guard stays in the
    body."""
    var = loop.loop_var
    one = E.IntImm(var.dtype, 1)
    extent = loop.extent
    for c, gap, step in terms:
        if isinstance(step, E.IntImm) and step.value == 1:  # gap grows with var: the lanes below a bound
            count = E.Sub(E.IntImm(var.dtype, 0), substitute(gap, {var: loop.min}))
            extent = E.Min(extent, count + one if isinstance(c, E.LE | E.GE) else count)
    if extent is loop.extent:
        return loop
    return loop.with_fields(extent=Analyzer().simplify(E.Max(extent, E.IntImm(var.dtype, 0))))


def _affine_guard(body, var):
    """``(cond, terms)`` when ``body`` is ``if cond: ...`` (no else; ``likely`` unwrapped) and ``cond`` is a
    conjunction of comparisons whose sides are affine in ``var``, else None. Each term is ``(comparison, gap,
    step)``: the comparison holds while ``gap < 0`` (``<= 0`` for ``<=``/``>=``), and ``gap`` changes by ``step``
    from one lane to the next."""
    if not isinstance(body, S.IfThenElse) or body.else_case is not None:
        return None
    cond = body.condition
    if isinstance(cond, E.Call) and cond.op.name == "tir.likely":
        cond = cond.args[0]
    analyzer, terms, pending = Analyzer(), [], [cond]
    while pending:
        c = pending.pop()
        if isinstance(c, E.And):
            pending += [c.a, c.b]
            continue
        if not isinstance(c, E.LT | E.LE | E.GT | E.GE):
            return None
        gap = c.a - c.b if isinstance(c, E.LT | E.LE) else c.b - c.a
        step = analyzer.simplify(substitute(gap, {var: var + E.IntImm(var.dtype, 1)}) - gap)
        if any(v is var for v in undefined_vars(step)):
            return None
        terms.append((c, gap, step))
    return cond, terms


def vectorize_loop(func, enable_vectorize=True):
    """Return ``func`` with its vectorized loops turned into vector code (or serial loops when
    ``enable_vectorize`` is False or a loop has no vector form)."""
    if not enable_vectorize:
        from ..stmt_functor import ir_transform

        def serial(node):
            if isinstance(node, S.For) and node.kind == S.ForKind.VECTORIZED:
                return node.with_fields(kind=S.ForKind.SERIAL)
            return None

        return func.with_body(ir_transform(func.body, None, serial, [S.For]))
    return func.with_body(LoopVectorizer().visit_stmt(func.body))


@register_pass("tir.VectorizeLoop")
@dataclass(frozen=True)
class VectorizeLoop(PrimFuncPass):
    """Vectorize loops marked vectorized (TVM's ``tir.transform.VectorizeLoop(enable_vectorize=True)``)."""

    enable_vectorize: bool = True
    info = PassInfo(0, "tir.VectorizeLoop")

    def transform_function(self, func, mod, ctx):
        return vectorize_loop(func, self.enable_vectorize)
