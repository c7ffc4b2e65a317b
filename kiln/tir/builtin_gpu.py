"""Builders of TVM's GPU built-in calls: tensor-core fragments (``tvm_load_matrix_sync``, ``tvm_mma_sync``...), the
PTX instructions TVM's CUDA backend emits (``ptx_mma``, ``ptx_ldmatrix``, ``ptx_cp_async``, barriers), warp
shuffles and ``tvm_storage_sync``.

kiln has no GPU code generator, so these calls only exist as IR: TVMScript and schedules written for GPUs can be
built, printed, compared and transformed, and a CPU backend refuses them where it generates code. Each returns the
``Call`` of ``tir.<name>`` with the dtype TVM gives it; ``""`` (the PTX barrier and group calls) is ``void``. All are
registered opaque: none may be moved, merged or dropped by a pass.
"""

from ..ir.op import Op, register_op, register_op_attr
from .expr import Call, CallEffectKind

_OPAQUE = (
    "tvm_load_matrix_sync", "tvm_store_matrix_sync", "tvm_mma_sync", "tvm_bmma_sync", "tvm_fill_fragment",
    "ptx_mma", "ptx_mma_sp", "mma_store", "mma_fill", "ptx_ldmatrix", "ptx_cp_async", "ptx_cp_async_bulk",
    "ptx_commit_group", "ptx_wait_group", "ptx_cp_async_barrier", "ptx_init_barrier_thread_count",
    "ptx_arrive_barrier", "ptx_arrive_barrier_expect_tx", "ptx_wait_barrier", "create_barriers",
    "tvm_storage_sync", "tvm_warp_shuffle", "tvm_warp_shuffle_up", "tvm_warp_shuffle_down", "tvm_warp_activemask",
)


def _register():
    for name in _OPAQUE:
        register_op(f"tir.{name}")
        if Op.get(f"tir.{name}").get_attr("TCallEffectKind") is None:
            register_op_attr(f"tir.{name}", "TCallEffectKind", CallEffectKind.OPAQUE)


_register()


def _call(dtype, name, *args):
    return Call(dtype or "void", Op.get(f"tir.{name}"), args)


def tvm_load_matrix_sync(fragment, m, n, k, index, buffer_ptr, stride, layout):
    """Load the ``index``-th ``m x n x k`` wmma fragment of ``fragment`` from ``buffer_ptr`` (row stride ``stride``,
    ``layout`` "row_major" or "col_major")."""
    return _call("handle", "tvm_load_matrix_sync", fragment, m, n, k, index, buffer_ptr, stride, layout)


def tvm_store_matrix_sync(fragment, m, n, k, index, buffer_ptr, stride, layout):
    """Store the ``index``-th wmma fragment of ``fragment`` to ``buffer_ptr``."""
    return _call("handle", "tvm_store_matrix_sync", fragment, m, n, k, index, buffer_ptr, stride, layout)


def tvm_mma_sync(fragment_d, index_d, fragment_a, index_a, fragment_b, index_b, fragment_c, index_c):
    """Tensor-core multiply-accumulate ``D = A * B + C`` of wmma fragments."""
    return _call("handle", "tvm_mma_sync", fragment_d, index_d, fragment_a, index_a, fragment_b, index_b,
                 fragment_c, index_c)


def tvm_bmma_sync(fragment_d, index_d, fragment_a, index_a, fragment_b, index_b, fragment_c, index_c):
    """The 1-bit (binary) form of :func:`tvm_mma_sync`."""
    return _call("handle", "tvm_bmma_sync", fragment_d, index_d, fragment_a, index_a, fragment_b, index_b,
                 fragment_c, index_c)


def tvm_fill_fragment(fragment, m, n, k, index, value):
    """Fill the ``index``-th wmma fragment of ``fragment`` with ``value``."""
    return _call("handle", "tvm_fill_fragment", fragment, m, n, k, index, value)


def ptx_mma(dtype, shape, A_layout, B_layout, A_dtype, B_dtype, C_dtype, multiplicand_a, a_index,  # noqa: N803
            multiplicand_b, b_index, accumulator, c_index, saturate, operator=None):
    """PTX ``mma.sync`` of shape ``shape`` ("m16n8k16"); ``operator`` ("xor"/"and") for 1-bit operands."""
    args = (shape, A_layout, B_layout, A_dtype, B_dtype, C_dtype, multiplicand_a, a_index, multiplicand_b, b_index,
            accumulator, c_index, saturate)
    return _call(dtype, "ptx_mma", *args, *(() if operator is None else (operator,)))


def ptx_mma_sp(dtype, shape, A_layout, B_layout, A_dtype, B_dtype, C_dtype, multiplicand_a, a_index,  # noqa: N803
               multiplicand_b, b_index, accumulator, c_index, metadata, meta_index, sparse_selector, saturate):
    """PTX ``mma.sp.sync``: :func:`ptx_mma` with a 2:4 sparse ``A`` described by ``metadata``."""
    return _call(dtype, "ptx_mma_sp", shape, A_layout, B_layout, A_dtype, B_dtype, C_dtype, multiplicand_a,
                 a_index, multiplicand_b, b_index, accumulator, c_index, metadata, meta_index, sparse_selector,
                 saturate)


def mma_store(dtype, m, n, dst_ptr, src_ptr, src_offset, dst_stride):
    """Store an ``m x n`` MMA accumulator held in warp registers (``src_ptr``) to memory."""
    return _call(dtype, "mma_store", m, n, dst_ptr, src_ptr, src_offset, dst_stride)


def mma_fill(dtype, local_size, local_ptr, offset):
    """Zero ``local_size`` accumulator registers at ``local_ptr + offset``."""
    return _call(dtype, "mma_fill", local_size, local_ptr, offset)


def ptx_ldmatrix(dtype, trans, num, type, local_ptr, local_offset, smem_ptr, smem_offset):  # noqa: A002
    """PTX ``ldmatrix``: load ``num`` 8x8 matrices from shared memory into registers (``trans`` transposes)."""
    return _call(dtype, "ptx_ldmatrix", trans, num, type, local_ptr, local_offset, smem_ptr, smem_offset)


def ptx_cp_async(dtype, shared_ptr, shared_offset, global_ptr, global_offset, bytes):  # noqa: A002
    """PTX ``cp.async``: copy ``bytes`` from global to shared memory without waiting."""
    return _call(dtype, "ptx_cp_async", shared_ptr, shared_offset, global_ptr, global_offset, bytes)


def ptx_cp_async_bulk(dtype, shared_ptr, shared_offset, global_ptr, global_offset, bytes, barrier_id):  # noqa: A002
    """PTX ``cp.async.bulk``: an asynchronous bulk copy that signals barrier ``barrier_id``."""
    return _call(dtype, "ptx_cp_async_bulk", shared_ptr, shared_offset, global_ptr, global_offset, bytes,
                 barrier_id)


def ptx_commit_group():
    """PTX ``cp.async.commit_group``: close the group of asynchronous copies issued so far."""
    return _call("", "ptx_commit_group")


def ptx_wait_group(num):
    """PTX ``cp.async.wait_group``: wait until at most ``num`` copy groups are pending."""
    return _call("", "ptx_wait_group", num)


def ptx_cp_async_barrier(barrier_id):
    """PTX ``cp.async.mbarrier.arrive`` on barrier ``barrier_id``."""
    return _call("", "ptx_cp_async_barrier", barrier_id)


def ptx_init_barrier_thread_count(barrier_id, thread_count):
    """PTX ``mbarrier.init``: barrier ``barrier_id`` expects ``thread_count`` threads."""
    return _call("", "ptx_init_barrier_thread_count", barrier_id, thread_count)


def ptx_arrive_barrier(barrier_id):
    """PTX ``mbarrier.arrive`` on barrier ``barrier_id``."""
    return _call("", "ptx_arrive_barrier", barrier_id)


def ptx_arrive_barrier_expect_tx(barrier_id, byte_count):
    """PTX ``mbarrier.arrive.expect_tx``: arrive and expect ``byte_count`` more bytes of transfers."""
    return _call("", "ptx_arrive_barrier_expect_tx", barrier_id, byte_count)


def ptx_wait_barrier(barrier_id):
    """PTX ``mbarrier.try_wait`` on barrier ``barrier_id``."""
    return _call("", "ptx_wait_barrier", barrier_id)


def create_barriers(barrier_count):
    """Declare ``barrier_count`` shared-memory barriers."""
    return _call("", "create_barriers", barrier_count)


def tvm_storage_sync(storage_scope):
    """Synchronize the threads sharing memory of ``storage_scope`` ("shared", "global")."""
    return _call("int32", "tvm_storage_sync", storage_scope)


def tvm_warp_shuffle(mask, value, warp_id, width, warp_size):
    """``value`` as held by lane ``warp_id`` of the warp."""
    return _call(value.dtype, "tvm_warp_shuffle", mask, value, warp_id, width, warp_size)


def tvm_warp_shuffle_up(mask, value, offset, width, warp_size):
    """``value`` as held by the lane ``offset`` below this one."""
    return _call(value.dtype, "tvm_warp_shuffle_up", mask, value, offset, width, warp_size)


def tvm_warp_shuffle_down(mask, value, offset, width, warp_size):
    """``value`` as held by the lane ``offset`` above this one."""
    return _call(value.dtype, "tvm_warp_shuffle_down", mask, value, offset, width, warp_size)


def tvm_warp_activemask():
    """The mask of the warp's active lanes (``uint32``)."""
    return _call("uint32", "tvm_warp_activemask")
