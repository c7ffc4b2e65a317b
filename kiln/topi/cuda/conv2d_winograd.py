"""TVM's ``topi.cuda.conv2d_winograd`` path for its tile-size helper (:func:`kiln.topi.nn.winograd.infer_tile_size`);
kiln has no CUDA schedules."""

from ..nn.winograd import infer_tile_size as _infer_tile_size

__all__ = ["_infer_tile_size"]
