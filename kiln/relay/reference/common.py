"""Helpers shared by the numpy operator implementations: registration, dtypes and TVM's integer/rounding rules.

Every implementation is registered as the ``FEvaluate`` attribute of its operator: a function
``fn(attrs, *args) -> numpy.ndarray | tuple`` taking numpy arrays (a Python tuple of arrays for a tuple argument).
Implementations never write into their arguments, so the interpreter can pass constants and user inputs without
copying them; results may alias arguments (``reshape`` returns a view).
"""

import numpy as np

from ...error import KilnError, OpNotImplemented
from ...ir.op import has_op, register_op_attr
from ...topi.testing.common import round_half_away

__all__ = ["register", "np_dtype", "is_float", "is_int", "lowest", "highest", "accumulator", "as_dtype",
           "trunc_divide", "round_half_away"]


def register(*op_names):
    """Decorator registering ``fn(attrs, *args)`` as the ``FEvaluate`` of each operator in ``op_names``."""

    def decorate(fn):
        for name in op_names:
            if not has_op(name):  # register_op_attr would create it: a misspelt name fails here instead
                raise KilnError(f"a reference implementation registered for {name!r}, which is no operator")
            register_op_attr(name, "FEvaluate", fn)
        return fn

    return decorate


def np_dtype(dtype) -> np.dtype:
    """The numpy dtype of a Relay dtype name; OpNotImplemented for dtypes numpy lacks (``bfloat16``)."""
    try:
        return np.dtype(str(dtype))
    except TypeError as exc:
        raise OpNotImplemented(f"the reference interpreter has no numpy type for dtype {dtype!r}") from exc


def is_float(dtype) -> bool:
    """Whether ``dtype`` is a floating-point type."""
    return np.dtype(dtype).kind == "f"


def is_int(dtype) -> bool:
    """Whether ``dtype`` is a signed or unsigned integer type."""
    return np.dtype(dtype).kind in "iu"


def lowest(dtype):
    """TVM's ``min_value(dtype)``: the lowest finite value (not -inf), the initial value of max reductions."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.finfo(dtype).min
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def highest(dtype):
    """TVM's ``max_value(dtype)``: the highest finite value."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.finfo(dtype).max
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).max


def accumulator(dtype) -> np.dtype:
    """The dtype sums and means accumulate in: float32 for float16 (a more precise oracle), else ``dtype``."""
    dtype = np.dtype(dtype)
    return np.dtype("float32") if dtype == np.float16 else dtype


def as_dtype(value, dtype) -> np.ndarray:
    """``value`` as an ndarray of exactly ``dtype`` (numpy ufuncs on 0-d arrays return scalars, and Python floats
    promote to float64: both are undone here)."""
    arr = np.asarray(value)
    return arr if arr.dtype == dtype else arr.astype(dtype)


def trunc_divide(a, b):
    """Integer division rounding toward zero, as C and TVM's ``truncdiv`` do (numpy's ``//`` floors)."""
    quotient = np.floor_divide(a, b)
    if np.dtype(quotient.dtype).kind == "i":
        # floor and trunc differ by one where the remainder is nonzero and the signs differ
        fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        quotient = quotient + fix.astype(quotient.dtype)
    return quotient
