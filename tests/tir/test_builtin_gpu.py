"""The GPU built-in calls (tensor cores, PTX, warp shuffles): each builds a ``Call`` of its ``tir.<name>`` operator
with TVM's dtype, registered opaque so that no pass moves or drops it."""

from kiln import tir
from kiln.tir.expr import CallEffectKind


def test_builders_make_opaque_calls_with_tvm_dtypes():
    a = tir.decl_buffer((16, 16), "float16", scope="shared")
    c = tir.decl_buffer((4,), "int32", scope="local")
    x = tir.Var("x", "int32")
    v = tir.Var("v", "float32")
    cases = [
        (tir.tvm_load_matrix_sync(a.data, 16, 16, 16, 0, x, 16, "row_major"), "handle", 8),
        (tir.tvm_store_matrix_sync(a.data, 16, 16, 16, 0, x, 16, "row_major"), "handle", 8),
        (tir.tvm_mma_sync(a.data, 0, a.data, 0, a.data, 0, a.data, 0), "handle", 8),
        (tir.tvm_bmma_sync(a.data, 0, a.data, 0, a.data, 0, a.data, 0), "handle", 8),
        (tir.tvm_fill_fragment(a.data, 16, 16, 16, 0, 0.0), "handle", 6),
        (tir.ptx_mma("int32", "m8n8k32", "row", "col", "int4", "uint4", "int32", a.data, 0, a.data, 0, c.data, 0,
                     False), "int32", 13),
        (tir.ptx_mma("int32", "m8n8k128", "row", "col", "int1", "int1", "int32", a.data, 0, a.data, 0, c.data, 0,
                     False, "xor"), "int32", 14),
        (tir.mma_fill("int32", 8, c.data, 0), "int32", 3),
        (tir.ptx_ldmatrix("float16", False, 4, ".b16", c.data, 0, a.data, 0), "float16", 7),
        (tir.ptx_cp_async("float16", a.data, 0, c.data, 0, 16), "float16", 5),
        (tir.ptx_commit_group(), "void", 0),
        (tir.ptx_wait_group(8), "void", 1),
        (tir.ptx_init_barrier_thread_count(0, 32), "void", 2),
        (tir.create_barriers(4), "void", 1),
        (tir.tvm_storage_sync("shared"), "int32", 1),
        (tir.tvm_warp_shuffle(tir.tvm_warp_activemask(), v, 0, 32, 32), "float32", 5),
        (tir.tvm_warp_activemask(), "uint32", 0),
    ]
    for call, dtype, nargs in cases:
        assert isinstance(call, tir.Call)
        assert (call.dtype, len(call.args)) == (dtype, nargs), call.op.name
        assert call.op.get_attr("TCallEffectKind") == CallEffectKind.OPAQUE
    assert tir.ptx_wait_group(8).op.name == "tir.ptx_wait_group"
    assert tir.tvm_load_matrix_sync(a.data, 16, 16, 16, 0, x, 16, "row_major").args[-1].value == "row_major"


def test_four_bit_integers_are_dtypes():
    buf = tir.decl_buffer((32,), "int4", scope="local")
    assert buf.dtype == "int4" and tir.decl_buffer((8,), "uint4").dtype == "uint4"
    assert tir.IntImm("int4", -8).value == -8 and tir.DataType.parse("uint4x8").lanes == 8
