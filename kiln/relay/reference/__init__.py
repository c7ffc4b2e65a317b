"""Numpy reference implementations of every Relay operator: the ``FEvaluate`` attribute the interpreter calls.

One module per operator family (``elemwise``, ``transform``, ``reduce``, ``nn``, ``conv``, ``image``); importing
this package registers them all. ``fn(attrs, *args)`` takes numpy arrays (a tuple of arrays for a tuple argument)
and returns an array or a tuple of arrays of exactly the dtype the type relation gives.

The values are those :mod:`kiln.tir.dtype_semantics` defines, which the compiled code follows too: numpy's own
arithmetic already wraps integers, saturates bools (``sum`` over bool is ``any``) and rounds float16 after every
operation; where numpy differs (integer ``divide`` truncates here, clip bounds saturate, float16 sums accumulate in
float32) the implementation says so. Results kiln leaves undefined (int32 overflow, NaN into ``max``, a float
outside an integer type converted to it) are whatever numpy gives.
"""

from . import (
    algorithm,
    annotation,
    array,
    array_more,
    bitserial,
    conv,
    convnd,
    dyn,
    elemwise,
    grid,
    image,
    memory,
    nn,
    nn_extra,
    random,
    reduce,
    resize_onnx,
    sparse,
    transform,
    vision,
    winograd,
)
from .transform import convert_layout

__all__ = ["algorithm", "annotation", "array", "array_more", "bitserial", "conv", "convnd", "convert_layout",
           "elemwise", "grid", "image", "memory", "nn", "nn_extra", "random", "reduce", "resize_onnx", "sparse",
           "transform", "vision", "winograd"]
