"""The dynamic forms of shape-deciding operators (TVM's ``relay.op.dyn``): the shape arrives as a tensor computed at
run time rather than as an attribute, so the result's dimensions are ``relay.Any`` and each operator registers a
data-dependent shape function. ``relay.transform.DynamicToStatic`` turns a call whose shape tensor is a constant
back into the static operator. The static builders (``relay.broadcast_to``, ``relay.full``, ``relay.topk``...) make
the dynamic call themselves when given a non-constant Relay expression, as TVM's do."""

from . import algorithm, array, image, nn, tensor, transform
from .algorithm import topk
from .array import arange, sparse_to_dense
from .tensor import full, ones, zeros
from .transform import broadcast_to, expand_dims, one_hot, reshape, squeeze, strided_slice, tile

__all__ = ["arange", "broadcast_to", "expand_dims", "full", "one_hot", "ones", "reshape", "sparse_to_dense", "squeeze",
           "strided_slice", "tile", "topk", "zeros", "algorithm", "image", "nn", "tensor", "transform"]
