"""Numpy reference implementations of every Relay operator: the ``FEvaluate`` attribute the interpreter calls.

One module per operator family (``elemwise``, ``transform``, ``reduce``, ``nn``, ``conv``, ``image``); importing
this package registers them all. ``fn(attrs, *args)`` takes numpy arrays (a tuple of arrays for a tuple argument)
and returns an array or a tuple of arrays of exactly the dtype the type relation gives.
"""

from . import algorithm, conv, elemwise, image, memory, nn, reduce, transform
from .transform import convert_layout

__all__ = ["algorithm", "conv", "convert_layout", "elemwise", "image", "memory", "nn", "reduce", "transform"]
