"""kiln.topi.hls: TVM's ``topi.hls`` schedules (high-level synthesis): each kernel's loop runs as one stage of a
hardware pipeline (``thread_axis("pipeline")``). kiln has no HLS back end; the schedules build the loop nests
(:mod:`kiln.topi.thread_schedule`)."""

from ..thread_schedule import bind_pipeline, schedule_threads

__all__ = ["schedule_injective", "schedule_reduce", "schedule_softmax", "schedule_pool", "schedule_adaptive_pool",
           "schedule_conv2d_nchw", "schedule_conv2d_nhwc", "schedule_dense"]


def _pipelined(what):
    def schedule(outs, layout=None):
        return schedule_threads(outs, bind_pipeline)

    schedule.__doc__ = f"The HLS schedule of {what}: each kernel one pipeline stage (``layout`` is not needed)."
    return schedule


schedule_injective = _pipelined("an injective group")
schedule_reduce = _pipelined("a reduction")
schedule_softmax = _pipelined("softmax")
schedule_pool = _pipelined("pooling")
schedule_adaptive_pool = _pipelined("adaptive pooling")
schedule_conv2d_nchw = _pipelined("an NCHW convolution")
schedule_conv2d_nhwc = _pipelined("an NHWC convolution")
schedule_dense = _pipelined("a dense layer")
