"""x86 schedule of local response normalization (TVM's generic ``schedule_lrn``, arranged for a vector CPU).

The output's axes before the innermost are fused into one loop, parallel when the tensor is large enough, and the
innermost axis is split by the vector width and vectorized (an odd width keeps a scalar tail). Inside each
iteration the sum of squares is computed for that row only (``compute_at``) with the window's taps outside the
vector loop, so each step adds whole vectors and the row stays in L1 until the output reads it; the zero padding
along the normalized axis is inlined as a guard. Inception v1's 55x55x192 LRN took 3.5-4 ms on an AVX2 Zen 3 with
the generic schedule (one scalar loop over all 580,800 elements with a division per index).
"""

from ...te.tensor import ComputeOp
from ..utils import create_schedule_for, get_const_tuple, output_ops, vector_lanes
from .injective import worth_parallel

__all__ = ["schedule_lrn"]


def schedule_lrn(outs, target=None):
    """Schedule the group of an ``nn.lrn`` (tag ``lrn_output``; the operator is opaque, so alone in its group).

    Returns
    -------
    s : Schedule
    """
    s = create_schedule_for(outs)
    out = output_ops(outs)[0].output(0)
    lanes = vector_lanes(target, out.dtype)
    sqsum = next(t for t in out.op.input_tensors if t.op.name == "T_lrn_sqsum")
    padded = sqsum.op.input_tensors[0]
    if isinstance(padded.op, ComputeOp) and padded.op.tag.endswith(",pad"):
        s[padded].compute_inline()
    axes = list(s[out].op.axis)
    _, inner = s[out].split(axes[-1], factor=lanes)
    s[out].vectorize(inner)
    if len(axes) > 1:
        row = s[out].fuse(*axes[:-1])
        if worth_parallel(get_const_tuple(out.shape)):
            s[out].parallel(row)
        s[sqsum].compute_at(s[out], row)
    outer, inner = s[sqsum].split(s[sqsum].op.axis[-1], factor=lanes)
    s[sqsum].reorder(outer, s[sqsum].op.reduce_axis[0], inner)
    s[sqsum].vectorize(inner)
    return s
