"""Padding arithmetic of the convolution and pooling computes (TVM's ``topi.nn.utils``).

Padding is given as TVM users write it: an int (the same on every side), one value per spatial axis (the same
before and after), one value per side, or ``"VALID"`` (none) / ``"SAME"`` (``kernel - 1`` per axis, the larger half
before). The functions here turn it into explicit per-side amounts, in TVM's order: all the "before" sides, then
all the "after" sides.
"""

from ...error import OpAttributeInvalid

__all__ = ["get_pad_tuple", "get_pad_tuple1d", "get_pad_tuple3d", "get_pad_tuple_generic"]


def get_pad_tuple_generic(padding, kernel):
    """Per-side padding for any number of spatial axes.

    Parameters
    ----------
    padding : int, str or sequence of int
        An int, ``"VALID"``, ``"SAME"``, one value per axis, or one value per side (befores, then afters).
    kernel : sequence of int
        The kernel's extent on each spatial axis (read only for ``"SAME"``).

    Returns
    -------
    pads : list of int
        The befores of every axis, then the afters.
    """
    nd = len(kernel)
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            totals = [0] * nd
        elif padding.upper() == "SAME":
            totals = [int(k) - 1 for k in kernel]
        else:
            raise OpAttributeInvalid(f"get_pad_tuple: unknown padding option {padding!r} (SAME, VALID or sizes)")
    elif isinstance(padding, int):
        totals = [2 * padding] * nd
    elif isinstance(padding, list | tuple) and len(padding) == 2 * nd:
        return [int(p) for p in padding]
    elif isinstance(padding, list | tuple) and len(padding) == nd:
        totals = [2 * int(p) for p in padding]
    else:
        raise OpAttributeInvalid(f"get_pad_tuple: padding {padding!r} must be an int, SAME, VALID, {nd} or "
                                 f"{2 * nd} values")
    befores = [(t + 1) // 2 for t in totals]
    return befores + [t - b for t, b in zip(totals, befores, strict=True)]


def _kernel(kernel, nd):
    if isinstance(kernel, int):
        return [kernel] * nd
    return list(kernel)


def get_pad_tuple(padding, kernel):
    """``(pad_top, pad_left, pad_down, pad_right)`` of a 2-D window of extent ``kernel`` ``(kh, kw)``.

    Examples
    --------
    >>> get_pad_tuple("SAME", (3, 4))
    (1, 2, 1, 1)
    """
    top, left, down, right = get_pad_tuple_generic(padding, _kernel(kernel, 2))
    return top, left, down, right


def get_pad_tuple1d(padding, kernel):
    """``(pad_left, pad_right)`` of a 1-D window of extent ``kernel``."""
    left, right = get_pad_tuple_generic(padding, _kernel(kernel, 1))
    return left, right


def get_pad_tuple3d(padding, kernel):
    """``(pad_front, pad_top, pad_left, pad_back, pad_down, pad_right)`` of a 3-D window ``(kd, kh, kw)``."""
    return tuple(get_pad_tuple_generic(padding, _kernel(kernel, 3)))
