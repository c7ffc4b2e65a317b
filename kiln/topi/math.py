"""``topi.math`` as TVM names it: the element-wise operators, which kiln keeps in :mod:`kiln.topi.elemwise`."""

# ruff: noqa: F401, A004  (re-exports with TVM's names)

from .elemwise import (
    abs, acos, acosh, asin, asinh, atan, atanh, bitwise_not, cast, ceil, clip, cos, cosh, erf, exp, exp2, fast_exp,
    floor, full, full_like, identity, isfinite, isinf, isnan, log, log2, log10, logical_not, negative, ones,
    reciprocal, round, rsqrt, sigmoid, sign, sin, sinh, softplus, softsign, sqrt, tan, tanh, trunc, zeros,
)
