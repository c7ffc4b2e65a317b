"""The shared half of the semantic oracle: random arguments drawn from types, and one comparison of two results.

Whatever evaluates a function (the Relay reference interpreter, a built module) and whoever asks (the pass tests'
``assert_same_results``, the ``VerifySemantics`` instrument, ``kiln opt --verify-semantics``), the inputs come from
:func:`random_arguments` and the outputs are judged by :func:`compare_results`: the same number of outputs, then for
each the same shape, the same dtype and values within ``rtol``/``atol`` (exact for integers and booleans). It lives
in the IR layer, the lowest one all of those may import; the evaluation itself stays with the IR that is evaluated.
"""

import numpy as np

from ..error import KilnError
from ..runtime.ndarray import NDArray
from .type import TensorType, TupleType


def random_value(ttype, rng, where="a value"):
    """A random value of type ``ttype``: floats uniform in [-1, 1), integers in [0, 4), booleans; a tuple of them
    for a ``TupleType``.

    Parameters
    ----------
    ttype : TensorType or TupleType
        Of tensors whose dtype numpy knows (bool, int*, uint*, float*).
    rng : numpy.random.Generator
        The source of randomness.
    where : str
        What the value is for, as an error names it (``"parameter %x of @main"``).

    Returns
    -------
    numpy.ndarray or tuple

    Raises
    ------
    KilnError
        ``ttype`` is not a tensor (or tuple) type, or its dtype has no numpy equivalent.
    """
    if isinstance(ttype, TupleType):
        return tuple(random_value(t, rng, f"{where}[{i}]") for i, t in enumerate(ttype.fields))
    if not isinstance(ttype, TensorType):
        raise KilnError(f"cannot make a random value for {where}: its type {ttype} is not a tensor type")
    try:
        dtype = np.dtype(ttype.dtype)
    except TypeError:  # vector and handle types (and bfloat16 unless ml_dtypes is loaded) have no numpy equivalent
        raise KilnError(f"cannot make a random value for {where} of dtype {ttype.dtype}") from None
    if dtype.kind == "b":
        return rng.random(ttype.shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 4, ttype.shape).astype(dtype)
    return rng.uniform(-1, 1, ttype.shape).astype(dtype)


def random_arguments(typed_params, seed=0) -> list:
    """One random value per ``(where, type)`` pair (see :func:`random_value`), reproducible with ``seed``.

    Examples
    --------
    >>> [a.shape for a in random_arguments([("%x", TensorType((2, 3)))])]
    [(2, 3)]
    """
    rng = np.random.default_rng(seed)
    return [random_value(ttype, rng, where) for where, ttype in typed_params]


def flatten_results(value) -> list:
    """The arrays of a result (an array, an NDArray, or nested tuples/lists of them), in order, as numpy arrays."""
    out: list = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple | list):
            stack.extend(reversed(item))
        elif isinstance(item, NDArray):
            out.append(item.numpy())
        else:
            out.append(np.asarray(item))
    return out


def compare_results(expected, actual, rtol=1e-5, atol=1e-5):
    """The first difference between two results, or None when they agree.

    Parameters
    ----------
    expected, actual : array, NDArray, or (nested) tuple/list of them
        Flattened by :func:`flatten_results` before comparing.
    rtol, atol : float
        Tolerances of floating-point values (``|actual - expected| <= atol + rtol * |expected|``, NaN equal to NaN);
        integer and boolean values must be equal.

    Returns
    -------
    str or None
        What differs: the number of outputs, an output's shape or dtype, or its first differing element.

    Examples
    --------
    >>> compare_results((np.zeros(2), np.ones(2)), (np.zeros(2),))
    '1 output(s) instead of 2'
    """
    expected, actual = flatten_results(expected), flatten_results(actual)
    if len(expected) != len(actual):
        return f"{len(actual)} output(s) instead of {len(expected)}"
    for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
        if e.shape != a.shape or e.dtype != a.dtype:
            return f"output {i} is {a.dtype}{list(a.shape)} instead of {e.dtype}{list(e.shape)}"
        if e.dtype.kind in "fc":
            close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
        else:
            close = a == e
        if not np.all(close):
            index = tuple(int(k) for k in np.unravel_index(int(np.argmin(close)), e.shape))
            wrong = int(np.size(close) - np.count_nonzero(close))
            return (f"output {i} differs at index {list(index)}: {a[index].item()!r} instead of {e[index].item()!r} "
                    f"({wrong} of {np.size(close)} elements differ; rtol={rtol}, atol={atol})")
    return None
