"""Tests of kiln/tir/functor.py and stmt_functor.py: visitors, mutators, helpers; deep trees without recursion."""

from kiln import tir
from kiln.ir import assert_structural_equal, structural_equal
from kiln.tir.analysis import undefined_vars, verify_well_formed


def _loop():
    A = tir.decl_buffer((8,), "float32", "A")
    i = tir.Var("i", "int32")
    return A, i, tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.BufferStore(A, A[i] * 2.0, [i]))


def test_visitor_counts_and_dispatch():
    class Count(tir.StmtExprVisitor):
        def __init__(self):
            self.loads, self.muls = 0, 0

        def visit_buffer_load(self, op):
            self.loads += 1
            super().visit_buffer_load(op)

        def visit_mul(self, op):
            self.muls += 1
            super().visit_mul(op)

    _, _, loop = _loop()
    c = Count()
    c.visit_stmt(loop)
    assert (c.loads, c.muls) == (1, 1)


def test_mutator_keeps_identity_when_unchanged():
    _, _, loop = _loop()
    assert tir.StmtExprMutator().visit_stmt(loop) is loop

    class Double(tir.StmtExprMutator):
        def visit_float_imm(self, op):
            return tir.FloatImm(op.dtype, op.value * 2)

    out = Double().visit_stmt(loop)
    assert out is not loop and out.body.value.b.value == 4.0


def test_substitute_and_ir_transform():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    assert str(tir.substitute(x + 1, {x: y * 2})) == "y * 2 + 1"
    _A, i, loop = _loop()
    j = tir.Var("j", "int32")
    renamed = tir.substitute(loop.body, {i: j})
    assert renamed.indices[0] is j

    def post(node):
        if isinstance(node, tir.FloatImm):
            return tir.FloatImm(node.dtype, 3.0)
        return None

    out = tir.ir_transform(loop, None, post, ["tir.FloatImm"])
    assert out.body.value.b.value == 3.0


def test_post_order_visit_children_first():
    _, _, loop = _loop()
    order = []
    tir.post_order_visit(loop, lambda n: order.append(type(n).__name__))
    assert order[-1] == "For" and order.index("BufferLoad") < order.index("Mul") < order.index("BufferStore")


def test_deep_expression_and_let_chain():
    x = tir.Var("x", "int32")
    e = x
    for k in range(3000):
        e = tir.Add(e, tir.const(k % 7))
    count = []

    class CountAdds(tir.StmtExprVisitor):
        def visit_add(self, op):
            count.append(1)
            super().visit_add(op)

    CountAdds().visit_expr(e)
    assert len(count) == 3000
    assert tir.StmtExprMutator().visit_expr(e) is e
    body = tir.Evaluate(x)
    for k in range(2000):
        body = tir.LetStmt(tir.Var(f"v{k}", "int32"), tir.const(k), body)
    assert tir.StmtExprMutator().visit_stmt(body) is body
    assert len(undefined_vars(body)) == 1


def test_undefined_vars_and_well_formed():
    A, i, loop = _loop()
    n = tir.Var("n", "int32")
    assert undefined_vars(loop) == [A.data]
    a = tir.Var("a", "handle")
    func = tir.PrimFunc([a], loop, buffer_map={a: A})
    assert verify_well_formed(func)
    bad = tir.PrimFunc([a], tir.For(i, 0, n, tir.ForKind.SERIAL, loop.body), buffer_map={a: A})
    assert not verify_well_formed(bad, assert_mode=False)
    twice = tir.PrimFunc([a], tir.stmt_seq(loop, loop), buffer_map={a: A})
    assert not verify_well_formed(twice, assert_mode=False)
    # the checks leave the function as it was: it still equals one built anew from fresh variables and buffers,
    # and differs from the ill-formed variants
    A2, _, loop2 = _loop()
    a2 = tir.Var("a", "handle")
    assert_structural_equal(func, tir.PrimFunc([a2], loop2, buffer_map={a2: A2}))
    assert not structural_equal(func, bad) and not structural_equal(func, twice)


def test_long_chains_of_asserts_lets_and_attrs_need_no_recursion():
    x = tir.Var("x", "int32")
    body = tir.Evaluate(x)
    for i in range(3000):
        kind = i % 3
        if kind == 0:
            body = tir.AssertStmt(x > i - 5000, tir.StringImm(f"check {i}"), body)
        elif kind == 1:
            body = tir.LetStmt(tir.Var(f"v{i}", "int32"), x + 1, body)
        else:
            body = tir.AttrStmt(x, "pragma", tir.IntImm("int32", i), body)

    class CountAdds(tir.StmtExprVisitor):
        def __init__(self):
            self.adds = 0

        def visit_add(self, op):
            self.adds += 1
            super().visit_add(op)

    counter = CountAdds()
    counter.visit_stmt(body)
    assert counter.adds == 1000

    class Rename(tir.StmtExprMutator):
        def visit_string_imm(self, op):
            return tir.StringImm(op.value.upper())

    out = Rename().visit_stmt(body)
    assert isinstance(out.body.body, tir.AssertStmt) and out.body.body.message.value == "CHECK 2997"
    assert tir.StmtExprMutator().visit_stmt(body) is body


def test_substitute_rewrites_buffer_shapes():
    """substitute replaces variables in the buffers accessed too (a buffer of shape (n,) becomes (16,))."""
    from kiln.tir.stmt_functor import substitute

    n = tir.Var("n", "int32")
    buf = tir.decl_buffer((n,), "float32", "A")
    i = tir.Var("i", "int32")
    loop = tir.For(i, 0, n, tir.ForKind.SERIAL, tir.BufferStore(buf, buf[i] + tir.const(1, "float32"), [i]))
    new = substitute(loop, {n: 16})
    store = new.body
    assert int(new.extent) == 16 and int(store.buffer.shape[0]) == 16
    assert store.value.a.buffer is store.buffer  # one new buffer for every access of the old one


def test_rebind_buffers_swaps_whole_buffers_and_variables():
    n = tir.Var("n", "int32")
    placeholder = tir.decl_buffer((n,), "float32", name="P")
    out = tir.decl_buffer((n,), "float32", name="O")
    i = tir.Var("i", "int32")
    body = tir.For(i, 0, n, tir.ForKind.SERIAL,
                   tir.BufferStore(out, tir.BufferLoad(placeholder, [i]) * 2.0, [i]))
    real = tir.decl_buffer((8,), "float32", name="A")
    result = tir.stmt_functor.rebind_buffers(body, {n: tir.IntImm("int32", 8)}, {placeholder: real})
    expected = tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.BufferStore(out, tir.BufferLoad(real, [i]) * 2.0, [i]))
    assert_structural_equal(result, expected, map_free_vars=True)
    assert tir.stmt_functor.rebind_buffers(body, {}, {}) is body
