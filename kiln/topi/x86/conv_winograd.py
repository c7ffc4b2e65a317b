"""The CPU schedule of the Winograd convolutions (:mod:`kiln.topi.nn.conv_winograd`).

The constant matrices ``A``, ``B`` and ``G`` stay small buffers, computed once per call: inlined, each read would be
a chain of selects in the innermost loop. Each transform stage runs image x channel in parallel with its transform
points and reduction innermost; the batched products run each transform point in parallel with the channel
reduction outside the tiles, so the innermost loop runs along contiguous tiles (which the compiler vectorizes).
"""

from ...te.tensor import ComputeOp
from ..utils import create_schedule_for, output_ops
from .injective import schedule_injective_from_existing

__all__ = ["schedule_winograd", "WINOGRAD_TAGS"]

WINOGRAD_TAGS = ("winograd_weight_transform", "winograd_data_pack", "winograd_bgemm", "winograd_inverse")


def _transform(s, op, outer, inner):
    """Run ``outer`` (axis positions) fused in parallel, ``inner`` and the reductions innermost."""
    stage = s[op]
    axes = list(op.axis)
    rest = [axes[i] for i in range(len(axes)) if i not in outer and i not in inner]
    stage.reorder(*[axes[i] for i in outer], *rest, *[axes[i] for i in inner], *op.reduce_axis)
    stage.parallel(stage.fuse(*[axes[i] for i in outer]) if len(outer) > 1 else axes[outer[0]])


def _inline_all_but_matrices(s):
    """Inline the injective intermediates except the constant matrices, which stay small buffers."""
    outputs = {id(op) for op in s.outputs}
    for stage in s.stages:
        op = stage.op
        if isinstance(op, ComputeOp) and not op.reduce_axis and id(op) not in outputs and \
                not (op.attrs or {}).get("const_matrix") and stage.attach_type == "root":
            stage.compute_inline()


def schedule_winograd(outs, target=None):
    """Schedule a group whose anchor is a Winograd convolution (see the module docstring).

    Returns
    -------
    s : Schedule
    """
    s = create_schedule_for(outs)
    _inline_all_but_matrices(s)
    outputs = {id(op) for op in output_ops(outs)}
    for stage in list(s.stages):
        op = stage.op
        if not isinstance(op, ComputeOp) or stage.attach_type != "root":
            continue
        attrs = op.attrs or {}
        nt, k = int(attrs.get("transformed_axes", 0)), int(attrs.get("stage", 0))
        if op.tag == "winograd_weight_transform":  # (alpha_t..., k_d..., co, ci)
            _transform(s, op, [len(op.axis) - 2], [])
        elif op.tag == "winograd_data_pack":  # stage k: (eps_0..eps_k, n, c, tile..., window..., x_d...)
            _transform(s, op, [k + 1, k + 2], list(range(k + 1)))
        elif op.tag == "winograd_inverse":  # stage k: (eps..., n, co, tile..., v..., o_d...)
            rest = nt - k - 1
            _transform(s, op, [rest, rest + 1], list(range(rest)))
        elif op.tag == "winograd_bgemm":  # (eps..., n, co, tile..., o_d...): each transform point in parallel
            axes = list(op.axis)
            # the channel reduction outside the tiles: the innermost loop runs along contiguous tiles of the data
            # pack and the output, which the compiler vectorizes
            stage.reorder(*axes[:nt + 2], *op.reduce_axis, *axes[nt + 2:])
            stage.parallel(stage.fuse(*axes[:nt]) if nt > 1 else axes[0])
        elif id(stage.origin_op) in outputs:
            schedule_injective_from_existing(s, op.output(0), target)
    return s

