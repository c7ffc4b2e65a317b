"""renew_defs gives a copy new definitions (variables, buffers, block axes) and keeps it structurally equal."""

from kiln import tir
from kiln.ir import assert_structural_equal
from kiln.script import tir as T  # noqa: N812


def _defined_vars(func):
    out = list(func.params) + [b.data for b in func.buffer_map.values()]

    def note(n):
        if isinstance(n, tir.For):
            out.append(n.loop_var)
        elif isinstance(n, tir.Block):
            out.extend(iv.var for iv in n.iter_vars)
            out.extend(b.data for b in n.alloc_buffers)
            out.extend(m.buffer.data for m in n.match_buffers)

    tir.stmt_functor.post_order_visit(func.body, note)
    return out


def test_renew_defs_of_a_scripted_function_with_blocks():
    @T.prim_func
    def func(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8, 8), "float32")
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                V = T.match_buffer(B[vi, 0:8], (8,), "float32")
                C[vi] = V[0] + V[7]

    new = tir.stmt_functor.renew_defs(func)
    assert_structural_equal(new, func)
    old_ids = {id(v) for v in _defined_vars(func)}
    renewed = _defined_vars(new)
    assert len(renewed) == len(_defined_vars(func)) and not any(id(v) in old_ids for v in renewed)
    # every use refers to the new definitions: nothing of the old function is left undefined in the new one
    assert not [v for v in tir.analysis.undefined_vars(new.body, new.params)
                if v.dtype != "handle" or all(id(v) != id(b.data) for b in new.buffer_map.values())]


def test_renew_defs_of_a_statement_keeps_free_variables():
    n = tir.Var("n", "int32")
    buf = tir.decl_buffer((16,), "int32", "buf")
    i = tir.Var("i", "int32")
    loop = tir.For(i, 0, n, tir.ForKind.SERIAL, tir.BufferStore(buf, i + n, [i]))
    new = tir.stmt_functor.renew_defs(loop)
    assert new.loop_var is not i and new.extent is n
    assert new.body.buffer is buf
    assert_structural_equal(new, loop, map_free_vars=True)


def test_allocations_are_renewed_unless_kept():
    @T.prim_func
    def func():
        data = T.allocate([4], "int32", "global")
        buf = T.Buffer((4,), "int32", data=data)
        for i in range(4):
            buf[i] = i

    renewed = tir.stmt_functor.renew_defs(func.body)
    assert renewed.buffer_var is not func.body.buffer_var
    assert renewed.body.body.buffer.data is renewed.buffer_var  # the view follows its allocation
    kept = tir.stmt_functor.renew_defs(func.body, keep_allocations=True)
    assert kept.buffer_var is func.body.buffer_var
    assert_structural_equal(renewed, func.body, map_free_vars=True)
