"""Broadcasting binary operators (TVM's ``topi/broadcast.py``): ``add subtract multiply divide power maximum
minimum``, comparisons and logical operators, ``where`` and ``broadcast_to``.

Shapes broadcast with numpy's rule, aligned at the last axis: an output index ``i`` reads input axis ``k`` at ``i``
or at 0 where the input has size 1. A Python number as an operand is a constant of the other operand's dtype. The
result has tag ``elemwise`` when no operand is broadcast, else ``broadcast``.

Integer ``divide`` truncates toward zero (C's and TVM's ``truncdiv``); integer ``power`` computes in float64 and
truncates back, which is exact as long as the result fits in 53 bits.
"""

import functools

import numpy as np

from ..error import OpAttributeInvalid
from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir import dtype as _dt
from ..tir import expr as E
from ..tir import intrin as _intrin
from ..tir import op as _op
from . import tag as _tag
from .utils import SHAPE_CHECKS, get_const_tuple

__all__ = [
    "broadcast_shape", "broadcast_to", "add", "subtract", "multiply", "divide", "floor_divide", "floor_mod", "mod",
    "trunc_divide", "trunc_mod",
    "power", "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
    "right_shift", "where", "BINARY",
]

BINARY: dict = {}
"""Operator name -> the broadcasting binary compute of that name (the strategies of Relay's binary operators use
it)."""


def broadcast_shape(*shapes, what="topi") -> tuple:
    """The numpy broadcast of constant ``shapes``; OpAttributeInvalid naming them (and ``what``) when they do not
    broadcast."""
    shapes = [get_const_tuple(s) for s in shapes]
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-ndim, 0):
        dims = list(dict.fromkeys(s[i] for s in shapes if len(s) >= -i and not (isinstance(s[i], int) and s[i] == 1)))
        static = [d for d in dims if isinstance(d, int)]
        if len(static) > 1:
            raise OpAttributeInvalid(f"{what}: shapes {' and '.join(str(s) for s in shapes)} cannot be broadcast")
        if static or len(dims) <= 1:
            out.append(static[0] if static else dims[0] if dims else 1)
        else:  # sizes known only at run time, each the result's or 1
            out.append(functools.reduce(_op.maximum, dims))
    return tuple(out)


def broadcast_index(dim, result, i):
    """The index into a dimension of size ``dim`` broadcast to ``result`` at output index ``i``: 0 for a size-1
    dimension, ``i`` for the result's own, and for a size known only at run time whichever it turns out to be."""
    if isinstance(dim, int):
        return 0 if dim == 1 and not (isinstance(result, int) and result == 1) else i
    return i if dim is result else E.Select(_op.equal(dim, 1), _op.const(0, i.dtype), i)


def _reader(x, out_shape):
    """A function from output indices to the broadcast element of ``x`` (a tensor or a scalar expression)."""
    if not isinstance(x, Tensor):
        return lambda idx: x
    shape = get_const_tuple(x.shape)
    offset = len(out_shape) - len(shape)

    def read(idx):
        return x(*[broadcast_index(d, out_shape[offset + k], idx[offset + k]) for k, d in enumerate(shape)])

    return read


def broadcast_checks(shapes, out_shape) -> list:
    """What the run-time sizes of a broadcast must meet: each symbolic dimension is the result's or 1."""
    checks = []
    for shape in shapes:
        offset = len(out_shape) - len(shape)
        for k, d in enumerate(shape):
            result = out_shape[offset + k]
            if not isinstance(d, int) and d is not result:
                checks.append((_op.logical_or(_op.equal(d, result), _op.equal(d, 1)),
                               f"Invalid broadcast shapes: dimension {k} of the operand of shape {tuple(shape)} "
                               f"does not broadcast to {tuple(out_shape)}"))
    return checks


def _is_broadcast(operands, out_shape):
    return any(isinstance(x, Tensor) and get_const_tuple(x.shape) != tuple(out_shape) for x in operands)


def _scalar_like(value, like):
    """A Python number as a constant of ``like``'s dtype (a tensor or expression); expressions pass through."""
    if isinstance(value, E.PrimExpr):
        return value
    dtype = like.dtype if like is not None else None
    return _op.const(value, dtype) if dtype is not None else E.convert(value)


def _broadcast_compute(fcombine, operands, name):
    tensors = [x for x in operands if isinstance(x, Tensor)]
    like = tensors[0] if tensors else None
    operands = [x if isinstance(x, Tensor) else _scalar_like(x, like) for x in operands]
    out_shape = broadcast_shape(*[x.shape for x in tensors]) if tensors else ()
    readers = [_reader(x, out_shape) for x in operands]
    tag = _tag.BROADCAST if _is_broadcast(operands, out_shape) else _tag.ELEMWISE
    checks = broadcast_checks([get_const_tuple(t.shape) for t in tensors], out_shape)
    return compute(out_shape, lambda *idx: fcombine(*[r(idx) for r in readers]), name=name, tag=tag,
                   attrs={SHAPE_CHECKS: tuple(checks)} if checks else None)


def _binary(name, fcombine, doc):
    def build(lhs, rhs):
        return _broadcast_compute(fcombine, [lhs, rhs], name=f"T_{name}")

    BINARY[name] = build
    build.__name__ = name
    build.__doc__ = f"""{doc}

    Parameters
    ----------
    lhs, rhs : te.Tensor or number
        The operands (numpy broadcasting; a number takes the other operand's dtype).

    Returns
    -------
    out : te.Tensor
    """
    return build


def _divide(a, b):
    if _dt.is_float(a.dtype):
        return _op.div(a, b)
    return _op.truncdiv(a, b)


def _power(a, b):
    if _dt.is_float(a.dtype):
        return _intrin.power(a, b)
    wide = _intrin.power(_op.cast(a, "float64"), _op.cast(b, "float64"))
    return _op.cast(_intrin.trunc(wide), a.dtype)


def _mod(a, b):
    if _dt.is_float(a.dtype):
        return _intrin.fmod(a, b)
    return _op.truncmod(a, b)


def _floor_divide(a, b):
    if _dt.is_float(a.dtype):
        return _intrin.floor(_op.div(a, b))
    return _op.floordiv(a, b)


def _floor_mod(a, b):
    if _dt.is_float(a.dtype):
        return _op.subtract(a, _op.multiply(_intrin.floor(_op.div(a, b)), b))
    return _op.floormod(a, b)


def _trunc_divide(a, b):
    if _dt.is_float(a.dtype):
        return _intrin.trunc(_op.div(a, b))
    return _op.truncdiv(a, b)


def _trunc_mod(a, b):
    if _dt.is_float(a.dtype):
        return _op.subtract(a, _op.multiply(_trunc_divide(a, b), b))
    return _op.truncmod(a, b)


def _truth(x):
    return x if _dt.is_bool(x.dtype) else _op.not_equal(x, _op.const(0, x.dtype))


add = _binary("add", _op.add, "Element-wise ``lhs + rhs``.")
subtract = _binary("subtract", _op.subtract, "Element-wise ``lhs - rhs``.")
multiply = _binary("multiply", _op.multiply, "Element-wise ``lhs * rhs``.")
divide = _binary("divide", _divide, "Element-wise ``lhs / rhs`` (integers truncate toward zero).")
floor_divide = _binary("floor_divide", _floor_divide, "Element-wise ``floor(lhs / rhs)``.")
floor_mod = _binary("floor_mod", _floor_mod, "Element-wise ``lhs - floor(lhs / rhs) * rhs``.")
mod = _binary("mod", _mod, "Element-wise remainder with the sign of ``lhs`` (C's ``%`` / ``fmod``).")
trunc_divide = _binary("trunc_divide", _trunc_divide, "Element-wise ``trunc(lhs / rhs)`` (C's ``/`` on integers).")
trunc_mod = _binary("trunc_mod", _trunc_mod, "Element-wise ``lhs - trunc(lhs / rhs) * rhs`` (C's ``%`` on integers).")
power = _binary("power", _power, "Element-wise ``lhs ** rhs``.")
maximum = _binary("maximum", _op.maximum, "Element-wise maximum.")
minimum = _binary("minimum", _op.minimum, "Element-wise minimum.")
equal = _binary("equal", _op.equal, "Element-wise ``lhs == rhs`` (bool).")
not_equal = _binary("not_equal", _op.not_equal, "Element-wise ``lhs != rhs`` (bool).")
less = _binary("less", _op.less, "Element-wise ``lhs < rhs`` (bool).")
less_equal = _binary("less_equal", _op.less_equal, "Element-wise ``lhs <= rhs`` (bool).")
greater = _binary("greater", _op.greater, "Element-wise ``lhs > rhs`` (bool).")
greater_equal = _binary("greater_equal", _op.greater_equal, "Element-wise ``lhs >= rhs`` (bool).")


def _logical(fn):
    """A logical operator whose result has the operands' dtype (1 or 0), as Relay's reference gives it."""
    def combine(a, b):
        out = fn(_truth(a), _truth(b))
        return out if _dt.is_bool(a.dtype) else _op.cast(out, a.dtype)

    return combine


logical_and = _binary("logical_and", _logical(_op.logical_and), "Element-wise ``and`` (1/0 in the operands' dtype).")
logical_or = _binary("logical_or", _logical(_op.logical_or), "Element-wise ``or`` (1/0 in the operands' dtype).")
logical_xor = _binary("logical_xor", _logical(_op.not_equal), "Element-wise ``xor`` (1/0 in the operands' dtype).")
bitwise_and = _binary("bitwise_and", _intrin.bitwise_and, "Element-wise bitwise ``and``.")
bitwise_or = _binary("bitwise_or", _intrin.bitwise_or, "Element-wise bitwise ``or``.")
bitwise_xor = _binary("bitwise_xor", _intrin.bitwise_xor, "Element-wise bitwise ``xor``.")


def _shift(intrin, left):
    """A shift defined for every amount, as numpy and ONNX give it: an amount that is negative or at least the
    width shifts every bit out (0, or -1 for a negative value shifted right), where C's and LLVM's shifts are
    undefined. The kernel shifts by the amount clamped into range and selects the fill where it was out of range."""
    def shift(a, b):
        width = int(np.dtype(_dt.element(a.dtype)).itemsize * 8)
        signed = _dt.element(b.dtype).startswith("int")
        low, high = _op.const(0, b.dtype), _op.const(width - 1, b.dtype)
        outside = _op.greater(b, high) if not signed else _op.logical_or(_op.less(b, low), _op.greater(b, high))
        shifted = intrin(a, _op.minimum(_op.maximum(b, low), high) if signed else _op.minimum(b, high))
        zero = _op.const(0, a.dtype)
        if left or not _dt.element(a.dtype).startswith("int"):
            fill = zero
        else:
            fill = _op.select(_op.less(a, zero), _op.const(-1, a.dtype), zero)
        return _op.select(outside, fill, shifted)

    return shift


left_shift = _binary("left_shift", _shift(_intrin.shift_left, True), "Element-wise ``lhs << rhs`` (0 for an "
                     "amount out of range).")
right_shift = _binary("right_shift", _shift(_intrin.shift_right, False), "Element-wise ``lhs >> rhs`` (arithmetic "
                      "for signed; an amount out of range leaves the sign fill).")


def where(condition, x, y):
    """Pick ``x`` where ``condition`` is nonzero, else ``y``, broadcasting all three (numpy's ``where``).

    Parameters
    ----------
    condition : te.Tensor
        Bool or integer condition.
    x, y : te.Tensor or number
        The values (of one dtype).

    Returns
    -------
    out : te.Tensor
    """
    def pick(c, a, b):
        return _op.select(_truth(c), a, b)

    like = x if isinstance(x, Tensor) else y
    x, y = (v if isinstance(v, Tensor) else _scalar_like(v, like) for v in (x, y))
    return _broadcast_compute(pick, [condition, x, y], name="T_where")


def broadcast_to(data, shape):
    """``data`` broadcast to ``shape`` (numpy's ``broadcast_to``).

    Parameters
    ----------
    data : te.Tensor
    shape : tuple of int or size variables
        The result's shape (a size variable: the size of a tensor known at run time, as ``broadcast_to_like``
        gives).

    Returns
    -------
    out : te.Tensor
    """
    shape = get_const_tuple(shape)
    merged = broadcast_shape(data.shape, shape, what="topi.broadcast_to")
    if any(isinstance(m, int) and isinstance(d, int) and m != d for m, d in zip(merged, shape, strict=True)):
        raise OpAttributeInvalid(f"topi.broadcast_to: cannot broadcast {get_const_tuple(data.shape)} to {shape}")
    read = _reader(data, shape)
    tag = _tag.BROADCAST if get_const_tuple(data.shape) != shape else _tag.ELEMWISE
    return compute(shape, lambda *idx: read(idx), name="T_broadcast_to", tag=tag)
