"""kiln.topi.generic: target-independent schedules (TVM's ``topi.generic``): the default schedule (one loop per
axis), used where no tuned schedule applies and by tests of computes.

As in TVM, the schedules of element-wise and reduction groups inline the injective intermediates
(``schedule_injective``, ``schedule_reduce``), and those of the other anchors (convolutions, pooling, softmax)
leave every stage at the top level, so each is computed whole before its consumers.
"""

from ..utils import auto_inline_injective, create_schedule_for

__all__ = ["default_schedule", "schedule_injective", "schedule_reduce", "schedule_extern", "schedule_softmax",
           "schedule_pool", "schedule_adaptive_pool", "schedule_pool_grad", "schedule_conv2d_nchw",
           "schedule_conv2d_nhwc", "schedule_conv2d_NCHWc", "schedule_depthwise_conv2d_nchw",
           "schedule_depthwise_conv2d_nhwc", "schedule_dense", "schedule_batch_matmul", "schedule_sparse_dense",
           "schedule_sparse_conv2d", "schedule_sparse_transpose", "schedule_conv2d_winograd_weight_transform",
           "schedule_conv3d_winograd_weight_transform", "schedule_conv2d_gemm_weight_transform",
           "schedule_conv2d_winograd_without_weight_transform"]


def default_schedule(outs, auto_inline=True):
    """A schedule of ``outs`` with every stage at the top level (injective intermediates inlined by default).

    Returns
    -------
    s : Schedule
    """
    s = create_schedule_for(outs)
    if auto_inline:
        auto_inline_injective(s)
    return s


def schedule_injective(outs, target=None):
    """The default schedule of an injective group."""
    return default_schedule(outs)


def schedule_reduce(outs, target=None):
    """The default schedule of a reduction group."""
    return default_schedule(outs)


def schedule_extern(outs, target=None):
    """The default schedule of operations computed outside TE (no loops to arrange)."""
    return default_schedule(outs, auto_inline=False)


def _no_inline(doc):
    def schedule(outs, target=None):
        return default_schedule(outs, auto_inline=False)

    schedule.__doc__ = f"The default schedule of {doc}: every stage at the top level, nothing inlined."
    return schedule


schedule_softmax = _no_inline("softmax and log_softmax")
schedule_pool = _no_inline("pooling")
schedule_adaptive_pool = _no_inline("adaptive and global pooling")
schedule_pool_grad = _no_inline("the gradient of pooling")
schedule_conv2d_nchw = _no_inline("an NCHW convolution")
schedule_conv2d_nhwc = _no_inline("an NHWC convolution")
schedule_conv2d_NCHWc = _no_inline("an NCHW[x]c convolution")  # noqa: N816  (TVM's name)
schedule_depthwise_conv2d_nchw = _no_inline("an NCHW depthwise convolution")
schedule_depthwise_conv2d_nhwc = _no_inline("an NHWC depthwise convolution")
schedule_dense = _no_inline("a dense layer")
schedule_batch_matmul = _no_inline("a batched matrix product")
schedule_sparse_dense = _no_inline("a sparse dense product")
schedule_sparse_conv2d = _no_inline("a sparse convolution")
schedule_sparse_transpose = schedule_extern
schedule_conv2d_winograd_weight_transform = _no_inline("a 2-D Winograd weight transform")
schedule_conv3d_winograd_weight_transform = _no_inline("a 3-D Winograd weight transform")
schedule_conv2d_gemm_weight_transform = schedule_injective
schedule_conv2d_winograd_without_weight_transform = _no_inline("a Winograd convolution")
