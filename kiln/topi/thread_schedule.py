"""Schedules that bind loops to hardware threads, shared by the GPU (``topi.cuda``) and HLS (``topi.hls``)
entry points: kiln compiles for CPUs only, but these schedules are target-independent TE, so they build the loop
nests TVM's tests and users expect (and kiln's TIR evaluator runs them, a thread at a time).

Every stage left at the top level after inlining the injective intermediates runs as one kernel over its whole
output: its data-parallel axes fused into one loop that :func:`bind_gpu` splits over ``blockIdx.x`` x
``threadIdx.x`` (``max_num_threads`` of the current target per block), or :func:`bind_pipeline` runs as one
``pipeline`` stage (TVM's HLS schedules). A reduction runs inside each thread.
"""

from ..target.target import Target
from ..te.operation import thread_axis
from ..te.tensor import ComputeOp
from .utils import auto_inline_injective, create_schedule_for

__all__ = ["schedule_threads", "bind_gpu", "bind_pipeline", "DEFAULT_GPU_THREADS"]

DEFAULT_GPU_THREADS = 256  # threads per block when no GPU target is current


def bind_gpu(stage, fused):
    """Split ``fused`` into blocks of the current target's ``max_num_threads`` threads and bind both loops."""
    target = Target.current(allow_none=True)
    threads = (target.max_num_threads if target is not None else 0) or DEFAULT_GPU_THREADS
    bx, tx = stage.split(fused, factor=threads)
    stage.bind(bx, thread_axis("blockIdx.x"))
    stage.bind(tx, thread_axis("threadIdx.x"))


def bind_pipeline(stage, fused):
    """Run the loop over ``fused`` as one stage of an HLS pipeline (TVM's ``thread_axis("pipeline")``)."""
    px, _ = stage.split(fused, nparts=1)
    stage.bind(px, thread_axis("pipeline"))


def schedule_threads(outs, bind):
    """A schedule of ``outs`` in which every remaining top-level stage is one kernel (see the module docstring).

    Parameters
    ----------
    outs : Tensor or list of Tensor
    bind : callable
        ``(stage, fused_loop)`` -> None: how the kernel's loop runs (:func:`bind_gpu`, :func:`bind_pipeline`).

    Returns
    -------
    s : Schedule
    """
    s = create_schedule_for(outs)
    auto_inline_injective(s)
    for stage in s.stages:
        if isinstance(stage.op, ComputeOp) and stage.attach_type == "root":
            bind(stage, stage.fuse(*stage.op.axis) if stage.op.axis else stage.fuse())
    return s
