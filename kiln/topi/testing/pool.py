"""numpy references of pooling (TVM's ``poolnd_python`` and ``adaptive_pool``), under TVM's names and signatures.

``poolnd_python`` visits every output position and reduces its window of the padded input: a window starts at
``position * stride`` and takes ``kernel`` taps ``dilation`` apart, clipped to the padded input (``ceil_mode`` may
leave a last window hanging past it). A maximum pads with the lowest value of the result type (TVM's
``min_value``, so a window of padding only gives that value); an average divides by the window's cells inside the
padded input (``count_include_pad``) or by its cells inside the input itself.

``adaptive_pool`` gives output cell ``i`` of ``out`` along an axis of ``size`` the input range
``[floor(i * size / out), ceil((i + 1) * size / out))``.
"""

import itertools

import numpy as np

from ...error import OpAttributeInvalid

__all__ = ["poolnd_python", "adaptive_pool"]


def _channels_first(layout, ndim):
    """The permutation bringing ``layout`` (``NWC``, ``NDHWC``; blocked layouts are not supported) to
    ``N, C, spatial``."""
    if layout is None:
        return list(range(ndim))
    if len(layout) != ndim or "N" not in layout or "C" not in layout:
        raise OpAttributeInvalid(f"topi.testing: layout {layout!r} does not fit a tensor of rank {ndim}")
    spatial = [a for a in layout if a not in "NC"]
    return [layout.index(a) for a in ["N", "C", *spatial]]


def poolnd_python(np_data, kernel, strides, dilation, padding_before, padding_after, pool_type,
                  count_include_pad=True, ceil_mode=False, dtype="float32", layout=None):
    """Max or average pooling over the spatial axes of ``np_data``.

    Parameters
    ----------
    np_data : numpy.ndarray
        ``(N, C, *S)``, or in ``layout`` (``"NWC"``, ``"NHWC"``, ``"NDHWC"``...).
    kernel, strides, dilation, padding_before, padding_after : sequence of int
        One per spatial axis.
    pool_type : str
        ``"max"`` or ``"avg"``.
    count_include_pad : bool
        Whether an average divides by padded cells too.
    ceil_mode : bool
        Round the output size up (a last, partial window).
    dtype : str
        The result's type.
    layout : str, optional
        The layout of ``np_data`` and of the result (channels-first by default).

    Returns
    -------
    out : numpy.ndarray
    """
    if pool_type not in ("max", "avg"):
        raise OpAttributeInvalid(f"topi.testing: pool_type {pool_type!r} is neither 'max' nor 'avg'")
    perm = _channels_first(layout, np_data.ndim)
    data = np_data.transpose(perm)
    nd = data.ndim - 2
    space = data.shape[2:]
    span = [(kernel[a] - 1) * dilation[a] + 1 for a in range(nd)]
    rounding = np.ceil if ceil_mode else np.floor
    out_space = [int(rounding((space[a] + padding_before[a] + padding_after[a] - span[a]) / strides[a])) + 1
                 for a in range(nd)]
    pads = [(0, 0), (0, 0)] + [(padding_before[a], padding_after[a]) for a in range(nd)]
    work = data.astype("float64")
    # a max pads with the result type's lowest value, as the kernels do (a window all padding gives that value);
    # with count_include_pad (the default) TVM's reference pads a max with zeros too, and TVM's tests compare
    # against that (on data whose padded windows end in a relu), so this reference does the same
    lowest = np.finfo(dtype).min if np.issubdtype(np.dtype(dtype), np.floating) else np.iinfo(dtype).min
    padded = np.pad(work, pads, constant_values=lowest if pool_type == "max" and not count_include_pad else 0)
    inside = np.pad(np.ones(space, bool), pads[2:], constant_values=False)
    out = np.zeros(data.shape[:2] + tuple(out_space), "float64")
    for pos in itertools.product(*(range(s) for s in out_space)):
        window = tuple(slice(pos[a] * strides[a], pos[a] * strides[a] + span[a], dilation[a]) for a in range(nd))
        cells = padded[(slice(None), slice(None)) + window]
        if pool_type == "max":
            out[(slice(None), slice(None)) + pos] = cells.max(axis=tuple(range(2, 2 + nd)))
            continue
        count = inside[window].size if count_include_pad else int(inside[window].sum())
        out[(slice(None), slice(None)) + pos] = cells.sum(axis=tuple(range(2, 2 + nd))) / count if count else 0
    if np.issubdtype(np.dtype(dtype), np.integer):
        out = np.trunc(out)  # an integer average truncates toward zero, as the kernels' integer division does
    return out.astype(dtype).transpose(np.argsort(perm))


def _adaptive_range(i, size, out):
    return (i * size) // out, -((-(i + 1) * size) // out)


def adaptive_pool(np_data, out_size, pool_type, layout):
    """Adaptive max or average pooling of ``np_data`` (in ``layout``: ``NCW``, ``NWC``, ``NCHW``, ``NHWC``,
    ``NCDHW`` or ``NDHWC``) to ``out_size``, one size per spatial axis."""
    if pool_type not in ("max", "avg"):
        raise OpAttributeInvalid(f"topi.testing: pool_type {pool_type!r} is neither 'max' nor 'avg'")
    perm = _channels_first(layout, np_data.ndim)
    data = np_data.transpose(perm)
    space = data.shape[2:]
    out_size = tuple(out_size) if not isinstance(out_size, int) else (out_size,) * len(space)
    out = np.zeros(data.shape[:2] + out_size, data.dtype)
    reduce = np.max if pool_type == "max" else np.mean
    for pos in itertools.product(*(range(s) for s in out_size)):
        window = tuple(slice(*_adaptive_range(p, space[a], out_size[a])) for a, p in enumerate(pos))
        out[(slice(None), slice(None)) + pos] = reduce(data[(slice(None), slice(None)) + window],
                                                       axis=tuple(range(2, data.ndim)))
    return out.transpose(np.argsort(perm))
