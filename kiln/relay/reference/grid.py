"""``image.affine_grid``, ``image.grid_sample`` and ``vision.yolo_reorg`` in numpy: the functions of
:mod:`kiln.topi.testing` (TVM's ``affine_grid_python``, ``grid_sample_python``, ``reorg_python``)."""

from ...topi.testing.grid import affine_grid_python, grid_sample_python
from ...topi.testing.vision import reorg_python
from .common import register


@register("image.affine_grid")
def affine_grid(attrs, theta):
    """``theta`` applied to the ``[-1, 1]`` coordinates of the target grid."""
    return affine_grid_python(theta, attrs.target_shape)


@register("image.grid_sample")
def grid_sample(attrs, data, grid):
    """Nearest, bilinear or bicubic samples of ``data`` at the grid's positions."""
    return grid_sample_python(data, grid, attrs.method, attrs.layout, attrs.padding_mode, attrs.align_corners)


@register("vision.yolo_reorg")
def yolo_reorg(attrs, data):
    """Darknet's ``reorg``."""
    return reorg_python(data, attrs.stride)
