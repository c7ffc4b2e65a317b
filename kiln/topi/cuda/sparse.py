"""``topi.cuda.sparse_dense`` and its schedule at TVM's names: the compute is the target-independent
:func:`kiln.topi.nn.sparse_dense` (as TVM's is for unpadded matrices), the schedule binds the output loops to GPU
threads (:mod:`kiln.topi.thread_schedule`); TVM's padded GPU kernel is not reproduced."""

from ..nn.sparse import sparse_dense
from ..thread_schedule import bind_gpu, schedule_threads

__all__ = ["schedule_sparse_dense", "sparse_dense"]


def schedule_sparse_dense(outs):
    """The GPU schedule of a sparse dense product: each kernel's outputs over blocks of threads."""
    return schedule_threads(outs, bind_gpu)
