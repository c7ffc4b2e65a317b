"""kiln.topi.cuda: kiln compiles for CPUs only and has no CUDA computes or schedules.

TVM keeps a few target-independent helpers in its ``topi.cuda`` modules, and scripts import them from there
(``from tvm.topi.cuda.conv3d_winograd import _infer_tile_size``); the modules of this package expose only those
helpers, defined in the target-independent topi modules where they belong.
"""

from . import conv2d_winograd, conv3d_winograd

__all__ = ["conv2d_winograd", "conv3d_winograd"]
