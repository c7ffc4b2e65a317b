"""kiln.topi.cuda: kiln compiles for CPUs only and has no CUDA-specific computes or tuned CUDA schedules.

What TVM's tests and scripts look up here is answered with target-independent TE: helpers TVM keeps in its
``topi.cuda`` modules (``from tvm.topi.cuda.conv3d_winograd import _infer_tile_size``), computes at TVM's CUDA names
that are the target-independent topi computes (``sparse_dense``, the Winograd convolutions), and schedules that bind
each kernel's loops to GPU threads (:mod:`.schedules`, :mod:`kiln.topi.thread_schedule`), which kiln's TIR
evaluator runs a thread at a time.
"""

from . import conv2d_nhwc_winograd, conv2d_winograd, conv3d_winograd, schedules, sparse
from .conv2d_nhwc_winograd import (
    conv2d_nhwc_winograd_direct,
    conv2d_nhwc_winograd_tensorcore,
    schedule_conv2d_nhwc_winograd_direct,
    schedule_conv2d_nhwc_winograd_tensorcore,
)
from .conv2d_winograd import (
    conv2d_nchw_winograd,
    conv2d_nchw_winograd_without_weight_transform,
    schedule_conv2d_nchw_winograd,
    schedule_conv2d_nchw_winograd_without_weight_transform,
)
from .conv3d_winograd import conv3d_ncdhw_winograd, schedule_conv3d_ncdhw_winograd
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
           "sparse", "sparse_dense", "conv2d_nhwc_winograd", "conv2d_nhwc_winograd_direct",
           "conv2d_nhwc_winograd_tensorcore", "schedule_conv2d_nhwc_winograd_direct",
           "schedule_conv2d_nhwc_winograd_tensorcore", "conv2d_nchw_winograd",
           "conv2d_nchw_winograd_without_weight_transform", "schedule_conv2d_nchw_winograd",
           "schedule_conv2d_nchw_winograd_without_weight_transform", "conv3d_ncdhw_winograd",
           "schedule_conv3d_ncdhw_winograd"]
