"""kiln.topi: the operator library (TVM's ``topi``): tensor-expression computes and schedules for x86 CPUs.

* computes: ``topi.add``, ``topi.reshape``, ``topi.sum``, ``topi.nn.conv2d``, ``topi.image.resize2d`` ... build
  ``te`` tensors from ``te`` tensors, tagged (:mod:`kiln.topi.tag`) so schedules recognize them;
* schedules: ``topi.x86.schedule_injective(outs, target)``, ``schedule_reduce``, ``schedule_conv2d_NCHWc``,
  ``schedule_gemm``, ``schedule_softmax`` ..., and ``topi.x86.schedule_auto`` which picks one by the anchor's tag.

topi knows nothing of Relay: which compute and schedule a Relay operator gets is its strategy, in
:mod:`kiln.relay.op.strategy`.
"""

# ruff: noqa: F401, I001, A004  (re-exports with TVM's names)

from . import tag, utils
from .broadcast import (
    add, bitwise_and, bitwise_or, bitwise_xor, broadcast_shape, broadcast_to, divide, equal, floor_divide, floor_mod,
    greater, greater_equal, left_shift, less, less_equal, logical_and, logical_or, logical_xor, maximum, minimum, mod,
    multiply, not_equal, power, right_shift, subtract, trunc_divide, trunc_mod, where,
)
from .elemwise import (
    abs, acos, acosh, asin, asinh, atan, atanh, bitwise_not, cast, ceil, clip, cos, cosh, erf, exp, exp2, fast_exp,
    floor, full, full_like, identity, isfinite, isinf, isnan, log, log2, log10, logical_not, negative, ones,
    reciprocal, round, rsqrt, sigmoid, sign, sin, sinh, softplus, softsign, sqrt, tan, tanh, trunc, zeros,
)
from .reduction import all, any, argmax, argmin, max, mean, min, sum
from .reduction import prod_reduce as prod
from .transform import (
    concatenate, expand_dims, flatten, flip, layout_transform, repeat, reshape, reverse, shape_of, split, squeeze,
    strided_slice, take, tile, transpose,
)
from .indexing import gather, gather_nd, one_hot
from .scan import cumprod, cumsum
from .scatter import scatter_elements, scatter_nd
from .sort import argsort, topk
from . import nn, image, generic, x86, arm_cpu, cuda, mali, hls, tensor_ops, random
from .utils import traverse_inline
