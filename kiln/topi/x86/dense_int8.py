"""x86 int8 dense through 8-bit dot products (TVM's ``dense_vnni``/``dense_int8`` in ``topi/x86/dense.py``).

For uint8 data ``(M, K)``, an int8 weight ``(N, K)`` and an int32 result on a CPU with an 8-bit dot product
(:func:`kiln.topi.x86.int8_dot_lanes`), the weight is packed at run time into panels of ``L`` output columns (the
instruction's int32 lanes) with four reduction steps adjacent, and ``K`` is padded to a multiple of 4 with zeros::

    weight_vec[N'/L, K'/4, L, 4] = weight[n, k]                       (0 past N and K)
    C[m, N'/L, L] = sum_kk DOT(data[m, 4 kk : 4 kk + 4], weight_vec[n // L, kk, n % L, 0:4])
    out[m, n] = C[m, n // L, n % L]                                   (n < N)

with ``DOT`` the sum of the four products (:func:`kiln.topi.x86.conv2d_int8.dot4`), so the loop over a
panel's ``L`` columns becomes one instruction (``tir.InjectInt8DotProduct``). The schedule computes tiles of up to 8
rows x one panel in a local accumulator, the reduction outside the unrolled rows, tiles in parallel.
"""

from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import intrin as _intrin
from ...tir import op as _op
from .. import tag as _tag
from ..utils import ceil_div, get_const_tuple, largest_divisor, output_ops, schedule_anchored
from .conv2d_int8 import dot4, int8_dot_lanes
from .injective import schedule_injective_from_existing, worth_parallel

__all__ = ["dense_int8", "schedule_dense_int8", "int8_dense_supported"]


def int8_dense_supported(data_dtype, weight_dtype, out_dtype, target=None) -> bool:
    """Whether a dense of these dtypes runs on ``target``'s 8-bit dot product (uint8 data, int8 weight, int32)."""
    return (data_dtype, weight_dtype, out_dtype) == ("uint8", "int8", "int32") and int8_dot_lanes(target) is not None


def dense_int8(data, weight, out_dtype="int32", target=None):
    """uint8 ``(M, K)`` data times the int8 ``(N, K)`` weight, transposed, to int32 ``(M, N)`` (module docstring).

    Returns
    -------
    out : te.Tensor
        ``(M, N)``; its producer is the ``dense_int8`` stage.
    """
    lanes = int8_dot_lanes(target)
    m, k = get_const_tuple(data.shape)
    n = get_const_tuple(weight.shape)[0]
    k4, n_pad = ceil_div(k, 4) * 4, ceil_div(n, lanes) * lanes
    if k4 != k:
        src = data
        data = compute((m, k4), lambda i, kk: _intrin.if_then_else(kk < k, src[i, _op.minimum(kk, k - 1)],
                                                                   _op.const(0, src.dtype)),
                       name="data_pad", tag="data_pad")

    def pack(no, kk, ni, j):
        col, red = no * lanes + ni, kk * 4 + j
        value = weight[_op.minimum(col, n - 1), _op.minimum(red, k - 1)]
        return _intrin.if_then_else(_op.all(col < n, red < k), value, _op.const(0, weight.dtype))

    weight_vec = compute((n_pad // lanes, k4 // 4, lanes, 4), pack, name="weight_vec", tag="weight_vec")
    kk = reduce_axis((0, k4 // 4), name="kk")

    def product(i, no, ni):
        a = [data[i, kk * 4 + j] for j in range(4)]
        b = [weight_vec[no, kk, ni, j] for j in range(4)]
        return _te_sum(dot4(a, b), axis=[kk])

    panels = compute((m, n_pad // lanes, lanes), product, name="dense_int8", tag="dense_int8")
    return compute((m, n), lambda i, j: panels[i, j // lanes, j % lanes], name="dense_int8_unpack",
                   tag=f"{_tag.INJECTIVE},unpack")


def _schedule(s, op, outs, target):
    panels = op.output(0)
    data, weight_vec = op.input_tensors[:2]
    for stage_tensor, fused_axes in ((weight_vec, 2), (data, 1)):
        if getattr(stage_tensor.op, "tag", None) in ("weight_vec", "data_pad"):
            stage = s[stage_tensor.op]
            fused = stage.fuse(*list(stage.op.axis)[:fused_axes])
            if worth_parallel(stage_tensor.shape):
                stage.parallel(fused)
    m = get_const_tuple(panels.shape)[0]
    acc = s.cache_write(panels, "local")
    rows, cols, lane = s[panels].op.axis
    row_outer, row_inner = s[panels].split(rows, factor=largest_divisor(m, 8))
    s[panels].reorder(cols, row_outer, row_inner, lane)
    tile = s[panels].fuse(cols, row_outer)
    s[panels].vectorize(lane)
    if worth_parallel(panels.shape):
        s[panels].parallel(tile)
    s[acc].compute_at(s[panels], tile)
    a_rows, a_cols, a_lane = s[acc].op.axis
    (kk,) = s[acc].op.reduce_axis
    s[acc].reorder(a_cols, kk, a_rows, a_lane)
    s[acc].unroll(a_rows)  # each row's panel of lanes: one dot-product instruction (tir.InjectInt8DotProduct)
    for out in output_ops(outs):
        if out is not op:
            schedule_injective_from_existing(s, out.output(0), target)


def schedule_dense_int8(outs, target=None):
    """Schedule a group anchored by a ``dense_int8`` stage (see the module docstring).

    Returns
    -------
    s : Schedule
    """
    return schedule_anchored(outs, ("dense_int8",), lambda s, op: _schedule(s, op, outs, target))
