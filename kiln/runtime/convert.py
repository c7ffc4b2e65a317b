"""``convert`` (TVM's ``tvm.runtime.convert``): a Python value as the IR holds it.

Numbers become TIR constants (``1`` an ``int32`` IntImm, ``1.5`` a ``float32`` FloatImm, ``True`` a ``bool``), through
the global function ``tir.const`` that :mod:`kiln.tir` registers (the runtime sits below the IR, so it looks the
constructor up rather than importing it); strings stay strings; lists and tuples become tuples of converted items
(kiln's arrays), dicts dicts; IR objects and NDArrays are returned as they are.
"""

from numbers import Number

import numpy as np

from ..error import KilnError
from .packed_func import get_global_func

__all__ = ["const", "convert"]


def convert(value):
    """``value`` converted as the module docstring says.

    Examples
    --------
    >>> import kiln
    >>> kiln.runtime.convert(1).dtype
    'int32'
    >>> kiln.runtime.convert([1, "a"])[1]
    'a'
    """
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, list | tuple):
        return tuple(convert(v) for v in value)
    if isinstance(value, dict):
        return {k: convert(v) for k, v in value.items()}
    if callable(getattr(value, "asobject", None)):  # TVM's ObjectGeneric: ``x == y`` (EqualOp), a BufferVar
        return value.asobject()
    if isinstance(value, Number | np.number | np.bool_):
        make = get_global_func("tir.const", allow_missing=True)
        if make is None:
            raise KilnError("runtime.convert: numbers need kiln.tir (import kiln)")
        return make(value)
    return value


def const(value, dtype=None, span=None):
    """A TIR constant of ``value`` (TVM's ``tvm.runtime.const``): ``const(42, "int64")``; the dtype defaults to
    what :func:`convert` gives the number.

    Examples
    --------
    >>> import kiln
    >>> kiln.runtime.const(42, "int64").dtype
    'int64'
    """
    make = get_global_func("tir.const", allow_missing=True)
    if make is None:
        raise KilnError("runtime.const: constants need kiln.tir (import kiln)")
    return make(value, dtype)
