"""kiln.topi.cuda: kiln compiles for CPUs only and has no CUDA computes or tuned CUDA schedules.

TVM keeps a few target-independent helpers in its ``topi.cuda`` modules, and scripts import them from there
(``from tvm.topi.cuda.conv3d_winograd import _infer_tile_size``); those modules expose only such helpers, defined
in the target-independent topi modules where they belong. The element-wise, reduction, softmax and pooling
schedules (:mod:`.schedules`) bind each kernel's loops to GPU threads, for TVM's tests that look them up.
"""

from . import conv2d_winograd, conv3d_winograd, schedules, sparse
from .schedules import (
    schedule_adaptive_pool,
    schedule_injective,
    schedule_pool,
    schedule_pool_grad,
    schedule_reduce,
    schedule_softmax,
)
from .sparse import schedule_sparse_dense, sparse_dense

__all__ = ["conv2d_winograd", "conv3d_winograd", "schedules", "schedule_adaptive_pool", "schedule_injective",
           "schedule_pool", "schedule_pool_grad", "schedule_reduce", "schedule_softmax", "schedule_sparse_dense",
           "sparse", "sparse_dense"]
