"""Relay operators. Element-wise, shape and reduction builders live here (``relay.add``, ``relay.reshape``...);
``relay.nn`` and ``relay.image`` hold the rest. ``OpPattern`` is the fusion pattern enum."""

from . import attrs, image, nn
from .op import OpPattern, make_call, register_relay_op
from .reduce import argmax, argmin, max, mean, min, prod, sum  # noqa: A004
from .tensor import (  # noqa: A004
    abs,
    add,
    cast,
    ceil,
    clip,
    concatenate,
    divide,
    erf,
    exp,
    expand_dims,
    floor,
    full,
    layout_transform,
    log,
    maximum,
    minimum,
    multiply,
    negative,
    ones,
    power,
    reshape,
    round,
    shape_of,
    rsqrt,
    sigmoid,
    sign,
    split,
    sqrt,
    squeeze,
    strided_slice,
    subtract,
    take,
    tanh,
    transpose,
    where,
    zeros,
)

__all__ = [
    "abs", "add", "argmax", "argmin", "cast", "ceil", "clip", "concatenate", "divide", "erf", "exp", "expand_dims",
    "floor", "full", "layout_transform", "log", "max", "maximum", "mean", "min", "minimum", "multiply", "negative",
    "ones", "power", "prod", "reshape", "round", "rsqrt", "shape_of", "sigmoid", "sign", "split", "sqrt", "squeeze",
    "strided_slice", "subtract", "sum", "take", "tanh", "transpose", "where", "zeros",
]
