"""GPU schedules at TVM's ``topi.cuda`` names: each kernel's output loop over ``blockIdx.x`` x ``threadIdx.x``
(:mod:`kiln.topi.thread_schedule`). kiln compiles for CPUs only; these build the thread-bound loop nests (which
kiln's TIR evaluator runs), not tuned GPU code: TVM's warp-level reductions are not reproduced."""

from ..thread_schedule import bind_gpu, schedule_threads

__all__ = ["schedule_injective", "schedule_reduce", "schedule_softmax", "schedule_pool", "schedule_adaptive_pool",
           "schedule_pool_grad"]


def _threaded(what):
    def schedule(outs, layout=None):
        return schedule_threads(outs, bind_gpu)

    schedule.__doc__ = (f"The GPU schedule of {what}: each kernel's outputs over blocks of threads (``layout``, "
                        "which TVM's pooling schedules take, is not needed).")
    return schedule


schedule_injective = _threaded("an injective group")
schedule_reduce = _threaded("a reduction")
schedule_softmax = _threaded("softmax")
schedule_pool = _threaded("pooling")
schedule_adaptive_pool = _threaded("adaptive pooling")
schedule_pool_grad = _threaded("the gradient of pooling")
