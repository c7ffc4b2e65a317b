"""TVM's ``topi.nn.winograd_util`` path: the Winograd matrices of :mod:`.winograd`."""

from .winograd import winograd_matrices, winograd_transform_matrices

__all__ = ["winograd_matrices", "winograd_transform_matrices"]
