"""``image.resize2d`` in numpy, following TVM's ``topi.image.resize`` step by step.

For each output row ``y`` (and likewise column ``x``) the source coordinate ``in_y`` comes from the
``coordinate_transformation_mode``: ``half_pixel`` ``(y + 0.5) * scale - 0.5``, ``align_corners``
``y * (in - 1) / (out - 1)``, ``asymmetric`` ``y * scale``, ``pytorch_half_pixel`` like ``half_pixel`` but 0 when the
output has one row, ``tf_half_pixel_for_nn`` ``(y + 0.5) * scale``, with ``scale = in / out``. As in TVM these are
float32 computations, and source indices are clamped into the image.

* ``nearest_neighbor`` rounds ``in_y`` with ``rounding_method`` (default ``round`` for ``align_corners``, else
  ``floor``; ``floor``/``ceil`` nudge by 1e-5, ``round`` ties away from zero). For ``asymmetric`` with an integer
  upscale factor TVM divides integers (``y // factor``), which is done here too.
* ``linear`` blends the 2 x 2 neighbours of ``floor(in_y), floor(in_x)``: ``a * (1 - t) + b * t`` per axis.
* ``cubic`` blends the 4 x 4 neighbours with Keys' cubic weights for ``cubic_alpha``; with ``cubic_exclude`` the
  weights of taps outside the image are zeroed and the rest renormalized.

Values are read as float32 (float64 data stays float64 here, a deliberate precision gain) and the result is cast
to ``out_dtype`` (truncating for integers, as TVM's cast does).
"""

import numpy as np

from ...error import OpAttributeInvalid
from ...tir.layout import layout as parse_layout
from .common import as_dtype, np_dtype, register, round_half_away


def _source_coords(out_size, in_size, mode, dtype):
    pos = np.arange(out_size, dtype=dtype)
    scale = dtype.type(in_size) / dtype.type(out_size)
    half = dtype.type(0.5)
    if mode == "half_pixel":
        return (pos + half) * scale - half
    if mode == "align_corners":
        if out_size == 1:  # TVM divides by zero here; every output row reads row 0
            return np.zeros(out_size, dtype)
        return dtype.type(in_size - 1) / dtype.type(out_size - 1) * pos
    if mode == "asymmetric":
        return scale * pos
    if mode == "pytorch_half_pixel":
        return (pos + half) * scale - half if out_size > 1 else np.zeros(out_size, dtype)
    return (pos + half) * scale  # tf_half_pixel_for_nn


def _int_factor(in_size, out_size):
    """TVM's ``can_convert_multiply_to_intdiv``: the integer upscale factor, or None."""
    if out_size % in_size:
        return None
    factor = out_size // in_size
    return factor if factor <= 1 / (1e-5 * in_size + 1e-5) else None


def _nearest_index(coords, method, out_size, in_size, use_int_div):
    if use_int_div:
        return np.arange(out_size) // _int_factor(in_size, out_size)
    eps = coords.dtype.type(1e-5)
    if method == "round":
        rounded = round_half_away(coords)
    elif method == "round_prefer_floor":
        rounded = np.ceil(coords - coords.dtype.type(0.5))
    elif method == "round_prefer_ceil":
        rounded = np.floor(coords + coords.dtype.type(0.5))
    elif method == "floor":
        rounded = np.floor(coords + eps)
    elif method == "ceil":
        rounded = np.ceil(coords - eps)
    else:
        raise OpAttributeInvalid(f"image.resize2d: unknown rounding_method {method!r}")
    return rounded.astype("int64")


def _clamped(index, size):
    return np.clip(index, 0, size - 1)


def _cubic_weights(t, alpha):
    t2, t3 = t * t, t * t * t
    return [
        alpha * (t3 - 2 * t2 + t),
        (alpha + 2) * t3 - (3 + alpha) * t2 + 1,
        -(alpha + 2) * t3 + (3 + 2 * alpha) * t2 - alpha * t,
        -alpha * t3 + alpha * t2,
    ]


def _cubic_taps(coords, size, alpha, exclude):
    """Per output position: 4 clamped source indices and their weights."""
    base = np.floor(coords)
    frac = coords - base
    base = base.astype("int64")
    weights = _cubic_weights(frac, coords.dtype.type(alpha))
    if exclude:
        weights = [np.where((base - 1 + i < 0) | (base + i > size), 0, w).astype(coords.dtype)
                   for i, w in enumerate(weights)]
        total = sum(weights)
        weights = [w / total for w in weights]
    return [_clamped(base - 1 + i, size) for i in range(4)], weights


@register("image.resize2d")
def resize2d(attrs, data):
    """Resize the H x W plane (any layout whose H and W are not split)."""
    lay = parse_layout(attrs.layout)
    h_axis, w_axis = lay.index_of("H"), lay.index_of("W")
    x = np.moveaxis(data, (h_axis, w_axis), (-2, -1))
    in_h, in_w = x.shape[-2:]
    out_h, out_w = attrs.size
    work = np.dtype("float64") if data.dtype == np.float64 else np.dtype("float32")
    mode = attrs.coordinate_transformation_mode
    cy = _source_coords(out_h, in_h, mode, work)
    cx = _source_coords(out_w, in_w, mode, work)
    if attrs.method == "nearest_neighbor":
        rounding = attrs.rounding_method or ("round" if mode == "align_corners" else "floor")
        int_div = mode == "asymmetric"
        iy = _nearest_index(cy, rounding, out_h, in_h, int_div and _int_factor(in_h, out_h) is not None)
        ix = _nearest_index(cx, rounding, out_w, in_w, int_div and _int_factor(in_w, out_w) is not None)
        out = x[..., _clamped(iy, in_h)[:, None], _clamped(ix, in_w)[None, :]]
    elif attrs.method == "linear":
        xf = x.astype(work, copy=False)
        y0, x0 = np.floor(cy).astype("int64"), np.floor(cx).astype("int64")
        ty, tx = (cy - y0.astype(work))[:, None], (cx - x0.astype(work))[None, :]
        rows = [_clamped(y0 + j, in_h)[:, None] for j in range(2)]
        cols = [_clamped(x0 + i, in_w)[None, :] for i in range(2)]
        one = work.type(1)
        top = xf[..., rows[0], cols[0]] * (one - tx) + xf[..., rows[0], cols[1]] * tx
        bottom = xf[..., rows[1], cols[0]] * (one - tx) + xf[..., rows[1], cols[1]] * tx
        out = top * (one - ty) + bottom * ty
    else:
        xf = x.astype(work, copy=False)
        rows, wy = _cubic_taps(cy, in_h, attrs.cubic_alpha, attrs.cubic_exclude)
        cols, wx = _cubic_taps(cx, in_w, attrs.cubic_alpha, attrs.cubic_exclude)
        out = 0
        for j in range(4):
            line = sum(xf[..., rows[j][:, None], cols[i][None, :]] * wx[i][None, :] for i in range(4))
            out = out + line * wy[j][:, None]
    out = as_dtype(out, np_dtype(attrs.out_dtype or data.dtype))
    return np.moveaxis(out, (-2, -1), (h_axis, w_axis))
