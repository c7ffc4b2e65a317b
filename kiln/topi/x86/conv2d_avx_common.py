"""The default configuration of the x86 blocked convolution for a workload (TVM's ``topi/x86/conv2d_avx_common``).

TVM's tests (and tuning scripts) ask what the untuned schedule would choose for a convolution before any kernel
exists: :func:`_fallback_schedule` answers it from the convolution's :class:`~kiln.topi.nn.conv2d.Workload`, with the
same choices :func:`~kiln.topi.x86.conv2d.schedule_conv2d_NCHWc` makes when it meets the convolution untuned.
"""

from ..nn.conv2d import conv_out_size
from .conv2d import conv_blocking, set_fallback_knobs

__all__ = ["_fallback_schedule"]


def _fallback_schedule(cfg, wkl):
    """Set the knobs of the ``conv2d_NCHWc.x86`` template on ``cfg`` to their untuned values for ``wkl`` (a
    :class:`~kiln.topi.nn.conv2d.Workload`), for the target in scope: ``tile_ow`` splits the output width into
    register tiles, ``tile_oc``/``tile_oh`` take one channel block and one row per tile, ``tile_ic_block`` one chunk
    of the input block, ``reduce_inner``, ``unroll_outer`` and ``kh_outside`` as the schedule's defaults."""
    out_h = conv_out_size(wkl.height, wkl.kernel_h, wkl.stride_h, wkl.dilation_h, wkl.padt, wkl.padb)
    out_w = conv_out_size(wkl.width, wkl.kernel_w, wkl.stride_w, wkl.dilation_w, wkl.padl, wkl.padr)
    dtype = wkl.out_dtype or wkl.in_dtype
    ic_bn, oc_bn, reg_n = conv_blocking(wkl.in_filter, wkl.out_filter, out_w, dtype=dtype, kernel_width=wkl.kernel_w)
    set_fallback_knobs(cfg, (wkl.out_filter // oc_bn, out_h, out_w), reg_n, wkl.kernel_w, ic_bn)
