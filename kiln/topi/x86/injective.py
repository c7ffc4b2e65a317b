"""x86 schedules of injective operations (TVM's ``topi/x86/injective.py``).

:func:`schedule_injective_from_existing` arranges one output stage for a multi-core vector CPU:

* the innermost axis is split by the vector width (the largest power of two up to the target's lanes for the dtype
  that divides it, so no tail guard blocks vectorization) and the inner part is vectorized;
* when every other axis has extent 1 the (outer part of the) innermost axis is the outer loop; otherwise the axes
  before the innermost are fused into one loop;
* that outer loop runs in parallel when the tensor is large enough to pay for waking the threads.

:func:`schedule_injective` first inlines every non-output stage (a fused chain of element-wise and shape operators
becomes one loop nest), then schedules each output this way.
"""

from ...te.tensor import ComputeOp
from .. import tag as _tag
from ..utils import auto_inline_injective, create_schedule_for, get_const_tuple, output_ops, vector_lanes

__all__ = ["schedule_injective", "schedule_injective_from_existing", "schedule_concatenate", "PARALLEL_MIN_ELEMENTS",
           "worth_parallel", "vector_factor", "inline_outer_padding"]

PARALLEL_MIN_ELEMENTS = 16384
"""Outputs smaller than this run on one thread (a parallel launch costs a few microseconds)."""


def worth_parallel(shape, min_elements=PARALLEL_MIN_ELEMENTS) -> bool:
    """Whether a loop nest over ``shape`` has enough elements for a parallel loop; a size known only at run time
    counts as enough (it is a batch or a sequence, large when it matters)."""
    total = 1
    for d in get_const_tuple(shape):
        if not isinstance(d, int):
            return True
        total *= d
    return total >= min_elements


def vector_factor(extent, lanes) -> int:
    """The largest power of two ``<= lanes`` dividing ``extent`` (1 when none of at least 2 does)."""
    if not isinstance(extent, int):
        return 1
    v = 1
    while v * 2 <= lanes and extent % (v * 2) == 0:
        v *= 2
    return v


def inline_outer_padding(s, tensor) -> bool:
    """Inline ``tensor`` into its consumers when it is a constant padding (``topi.nn.pad``, tag ``injective,pad``)
    of a materialized tensor that leaves the innermost axis alone (a blocked layout's channel block). A consumer
    vectorized along that axis then tests one scalar guard per vector, a branch that costs less than a padded copy
    of its whole input (a pooling or depthwise kernel reads each input a few times; the copy doubles its memory
    traffic). Returns whether it was inlined."""
    if not (isinstance(tensor.op, ComputeOp) and tensor.op.tag.endswith(",pad")):
        return False
    source = tensor.op.input_tensors[0]
    if isinstance(source.op, ComputeOp) and _tag.is_injective(source.op.tag):
        return False  # inlined, the source's own computation would run once per guarded read
    last = get_const_tuple(tensor.shape)[-1]
    if not isinstance(last, int) or last != get_const_tuple(source.shape)[-1]:
        return False
    s[tensor.op].compute_inline()
    return True


def schedule_injective_from_existing(s, out, target=None):
    """Schedule the stage of ``out`` (an injective output) in ``s`` in place (see the module docstring).

    Returns
    -------
    s : Schedule
    """
    stage = s[out]
    if not isinstance(stage.op, ComputeOp) or not stage.op.axis:
        return s
    axes = list(stage.op.axis)
    shape = get_const_tuple(out.shape)
    v = vector_factor(shape[-1], vector_lanes(target, out.dtype))
    inner = axes[-1]
    if v > 1:
        outer_last, inner = stage.split(axes[-1], factor=v)
        stage.vectorize(inner)
    else:
        outer_last = None
    lead = axes[:-1]
    parallel = worth_parallel(shape)
    if lead and any(d != 1 for d in shape[:-1]):
        fused = stage.fuse(*lead) if len(lead) > 1 else lead[0]
    else:
        fused = outer_last if outer_last is not None else (axes[-1] if v == 1 else None)
    if parallel and fused is not None:
        stage.parallel(fused)
    return s


def schedule_injective(outs, target=None):
    """Schedule a group of injective operations: inline the intermediates, vectorize and parallelize each output.

    Parameters
    ----------
    outs : list of te.Tensor
        The group's outputs.
    target : Target or str, optional

    Returns
    -------
    s : Schedule
    """
    s = create_schedule_for(outs)
    auto_inline_injective(s)
    for op in output_ops(outs):
        schedule_injective_from_existing(s, op.output(0), target)
    return s


schedule_concatenate = schedule_injective
