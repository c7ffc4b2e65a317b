"""kiln/topi/nn/winograd.py: the Winograd tile-size choice, also reached at TVM's topi.cuda paths."""

import numpy as np

from kiln import te
from kiln.topi.nn.winograd import infer_tile_size


def test_tile_size_follows_the_height():
    assert infer_tile_size(np.zeros((1, 3, 16, 7)), None) == 4
    assert infer_tile_size(np.zeros((1, 3, 12, 8)), None) == 2
    assert infer_tile_size(te.placeholder((1, 16, 9, 3)), None, "NHWC") == 4
    assert infer_tile_size(np.zeros((1, 2, 5, 24, 8)), None) == 4  # NCDHW: the height is the fourth axis
    assert infer_tile_size(np.zeros((1, 5, 12, 8, 2)), None, "NDHWC") == 2


def test_tvm_cuda_paths_expose_only_the_helpers():
    import kiln.topi.cuda
    from kiln.topi.cuda.conv2d_winograd import _infer_tile_size as tile2d
    from kiln.topi.cuda.conv3d_winograd import _infer_tile_size as tile3d

    assert tile2d is infer_tile_size and tile3d is infer_tile_size
    # no CUDA computes; the only schedules are the thread-binding ones of topi.cuda.schedules
    from kiln.topi.cuda import schedules

    names = [name for name in dir(kiln.topi.cuda) if not name.startswith("_")]
    assert all(getattr(kiln.topi.cuda, n) is getattr(schedules, n) for n in names if n.startswith("schedule_"))
    assert not [n for n in names if not n.startswith("schedule") and n not in ("conv2d_winograd", "conv3d_winograd")]
