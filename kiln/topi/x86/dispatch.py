"""Schedule a fused group by the tag of its anchor: the first non-injective operation reached walking back from the
group's outputs. This is the schedule of any group whose anchor has no schedule of its own (and what each
operator's ``FTVMSchedule`` uses): the tags of :mod:`kiln.topi` computes select the x86 schedule written for them,
and anything else (reductions, normalizations, pure injective groups) gets :func:`schedule_generic`.
"""

from ...te.tensor import ComputeOp
from .. import tag as _tag
from ..utils import output_ops
from .conv2d import schedule_conv2d_NCHWc
from .conv2d_direct import DIRECT_TAGS, schedule_conv2d_direct
from .conv_winograd import WINOGRAD_TAGS, schedule_winograd
from .dense import GEMM_TAGS, schedule_dense_nopack, schedule_gemm
from .injective import schedule_injective
from .lrn import schedule_lrn
from .pooling import POOL_TAGS, schedule_pool
from .reduction import schedule_generic
from .softmax import schedule_softmax

__all__ = ["schedule_auto", "anchor_tag", "SCHEDULE_BY_TAG"]

SCHEDULE_BY_TAG = {
    "conv2d_NCHWc": schedule_conv2d_NCHWc,
    **{t: schedule_conv2d_direct for t in DIRECT_TAGS},
    **{t: schedule_gemm for t in GEMM_TAGS},
    **{t: schedule_winograd for t in WINOGRAD_TAGS},
    "dense_nopack": schedule_dense_nopack,
    **{t: (lambda outs, target=None: schedule_pool(outs, target=target)) for t in POOL_TAGS},
    "softmax_output": schedule_softmax,
    "log_softmax_output": schedule_softmax,
    "lrn_output": schedule_lrn,
}
"""Anchor tag -> x86 schedule function ``(outs, target) -> Schedule``."""


def anchor_tag(outs) -> str:
    """The tag of the first non-injective compute reached from ``outs`` through injective computes ("" if none)."""
    stack, seen = list(output_ops(outs)), set()
    while stack:
        op = stack.pop(0)
        if id(op) in seen or not isinstance(op, ComputeOp):
            continue
        seen.add(id(op))
        if not _tag.is_injective(op.tag):
            return op.tag
        stack.extend(t.op for t in op.input_tensors)
    return ""


def schedule_auto(outs, target=None):
    """Schedule the group ``outs`` with the x86 schedule of its anchor's tag (see the module docstring).

    Returns
    -------
    s : Schedule
    """
    tag = anchor_tag(outs)
    if not tag:
        return schedule_injective(outs, target)
    return SCHEDULE_BY_TAG.get(tag, schedule_generic)(outs, target)
