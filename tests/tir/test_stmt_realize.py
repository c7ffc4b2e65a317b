"""BufferRealize and Prefetch: built with TVM's constructors, walked by the visitors and mutators, printed, and
run by the evaluator (a realize runs its body, a prefetch does nothing)."""

import numpy as np

from kiln import tir
from kiln.tir.evaluator import evaluate


class _Shift(tir.StmtExprMutator):
    def visit_var(self, op):
        return op + 1 if op.name == "i" else op


def test_realize_and_prefetch_are_walked_and_printed():
    buf = tir.decl_buffer((10,), "float32", "B")
    i = tir.Var("i", "int32")
    pre = tir.Prefetch(buf, [tir.Range.from_min_extent(i, 2)])
    realize = tir.BufferRealize(buf, [tir.Range(0, 10)], True, tir.SeqStmt([pre, tir.Evaluate(0)]))
    seen = []
    tir.stmt_functor.post_order_visit(realize, lambda n: seen.append(n) if isinstance(n, tir.Var) else None)
    assert i in seen
    shifted = _Shift().visit_stmt(realize)
    assert isinstance(shifted.body[0].bounds[0].min, tir.Add)
    assert _Shift().visit_stmt(tir.Prefetch(buf, [tir.Range(0, 2)])).bounds[0].min.value == 0
    text = str(realize)
    assert "T.realize(B[0:10]" in text and "T.prefetch(B, [T.Range(i, i + 2)])" in text


def test_evaluator_runs_a_realized_body():
    buf = tir.decl_buffer((4,), "float32", "B")
    k = tir.Var("k", "int32")
    store = tir.For(k, 0, 4, tir.ForKind.SERIAL, tir.BufferStore(buf, tir.Cast("float32", k) * 2.0, [k]))
    body = tir.SeqStmt([tir.Prefetch(buf, [tir.Range(0, 4)]), tir.BufferRealize(buf, [tir.Range(0, 4)], True, store)])
    p = tir.Var("b", "handle")
    out = np.zeros(4, "float32")
    evaluate(tir.PrimFunc([p], body, buffer_map={p: buf}), out)
    np.testing.assert_array_equal(out, [0, 2, 4, 6])
