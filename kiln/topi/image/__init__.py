"""kiln.topi.image: image operator computes (TVM's ``topi.image``)."""

from .resize import resize2d

__all__ = ["resize2d"]
