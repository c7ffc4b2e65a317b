"""x86 schedule of softmax and log-softmax (TVM's ``topi/x86/softmax.py``).

The output loops over the axes before the softmax axis are fused into one parallel loop; inside each iteration the
maximum, the exponentials (softmax) and their sum are computed for that slice only (``compute_at``), so the slice
stays in cache between the four stages. When the softmax axis is the innermost, the exponentials and the output are
vectorized along it; otherwise the reductions run with the softmax axis outside and the innermost axis vectorized,
so every step of a reduction adds whole vectors.
"""

from ..utils import create_schedule_for, fused_output, get_const_tuple, output_ops, traverse_inline, vector_lanes
from .injective import PARALLEL_MIN_ELEMENTS, schedule_injective_from_existing, vector_factor, worth_parallel

__all__ = ["schedule_softmax"]


def _vectorize_last(stage, axis, extent, lanes):
    v = vector_factor(extent, lanes)
    if v > 1:
        _, inner = stage.split(axis, factor=v)
        stage.vectorize(inner)


def schedule_softmax(outs, target=None):
    """Schedule a group anchored by ``nn.softmax`` / ``nn.log_softmax``.

    Returns
    -------
    s : Schedule
    """
    s = create_schedule_for(outs)
    ops = output_ops(outs)
    lanes = vector_lanes(target, ops[0].output(0).dtype)

    def callback(op):
        if op.tag not in ("softmax_output", "log_softmax_output"):
            return
        axis = op.attrs["axis"]
        shape = get_const_tuple(op.output(0).shape)
        n_inner = len(shape) - axis - 1
        expsum = next(t for t in op.input_tensors if t.op.name.endswith("expsum"))
        exp = next((t for t in op.input_tensors if t.op.name.endswith("_exp")), None)
        producers = op.input_tensors + (exp.op.input_tensors if exp is not None else [])
        max_elem = next(t for t in producers if t.op.name.endswith("maxelem"))
        out = fused_output(s, op, outs, lambda t: get_const_tuple(t.shape) == shape) or op.output(0)
        if out.op is not op:
            s[op].compute_inline()  # the normalization is computed in the output's loop nest
        stage = s[out]
        axes = list(stage.op.axis)
        outer = stage.fuse(*axes[:axis]) if axis > 1 else (axes[0] if axis == 1 else None)
        if outer is not None and axis > 0 and worth_parallel(shape, PARALLEL_MIN_ELEMENTS // 4):
            stage.parallel(outer)
        _vectorize_last(stage, axes[-1], shape[-1], lanes)
        for red in (max_elem, expsum):
            _reduce_at(s, red.op, stage if outer is not None else None, outer, n_inner, lanes)
        if exp is not None:
            if outer is not None:
                s[exp.op].compute_at(stage, outer)
            e_axes = list(s[exp.op].op.axis)
            _vectorize_last(s[exp.op], e_axes[-1], shape[-1], lanes)
        for o in ops:
            if o is not out.op and o is not op:
                schedule_injective_from_existing(s, o.output(0), target)

    traverse_inline(s, ops, callback)
    return s



def _reduce_at(s, op, parent, scope, n_inner, lanes):
    stage = s[op]
    if parent is not None:
        stage.compute_at(parent, scope)
    dp, (k,) = list(stage.op.axis), stage.op.reduce_axis
    if n_inner:
        inner = dp[len(dp) - n_inner:]
        stage.reorder(*dp[:len(dp) - n_inner], k, *inner)
        _vectorize_last(stage, inner[-1], get_const_tuple(op.output(0).shape)[-1], lanes)

