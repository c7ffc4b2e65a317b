"""``resize`` of 1, 2 or 3 spatial axes and ``resize2d`` (TVM's ``topi/image/resize.py``): nearest-neighbour, linear
and cubic resizing of the W axis, the H x W plane or the D x H x W volume of any layout whose spatial axes are not
split. One injective compute; schedules treat it as element-wise.

Per output position ``y`` along an axis the source coordinate comes from the ``coordinate_transformation_mode``, in
float32 (float64 for float64 data) with the same operations as the numpy reference so both round alike:
``half_pixel`` ``(y + 0.5) * scale - 0.5``, ``align_corners`` ``y * (in - 1) / (out - 1)``, ``asymmetric``
``y * scale``, ``pytorch_half_pixel`` like ``half_pixel`` but 0 for a single output row, ``tf_half_pixel_for_nn``
``(y + 0.5) * scale``, with ``scale = in / out``; ``tf_crop_and_resize`` ``start * (in - 1) + y * (end - start) *
(in - 1) / (out - 1)`` from the ``roi``, and ``extrapolation_value`` where a coordinate falls outside the input.
Source indices are clamped into the image.

* ``nearest_neighbor`` rounds the coordinate with ``rounding_method`` (``round`` for ``align_corners`` by default,
  else ``floor``; ``floor``/``ceil`` nudge by 1e-5, ``round`` ties away from zero); ``asymmetric`` with an integer
  upscale factor divides integers instead (``y // factor``), as TVM does;
* ``linear`` blends the 2 neighbours per axis of ``floor`` of the coordinates;
* ``cubic`` blends 4 neighbours per axis with Keys' weights for ``cubic_alpha``; ``cubic_exclude`` zeroes the weights
  of taps outside the image and renormalizes the rest.

An integer result of ``linear`` or ``cubic`` is the blend truncated toward zero, as TVM's cast does, but a blend within
``INTEGER_SNAP`` of a whole number is that number first, with coordinates and blend in float64: the exact blend is
often whole (equal neighbours, halves of even steps), and a float computation lands an ulp to either side of it by
rounding and by the target's choice to contract a multiply-add, which truncation would turn into results differing by
one between targets and the reference.
"""

import numpy as np

from ...error import OpAttributeInvalid
from ...te.operation import compute
from ...tir import dtype as _dt
from ...tir import expr as E
from ...tir import intrin as _intrin
from ...tir import op as _op
from ...tir.layout import layout as parse_layout
from .. import tag as _tag
from ..elemwise import cast_expr, round_half_away
from ..utils import get_const_tuple

__all__ = ["resize", "resize2d"]

_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn",
          "tf_crop_and_resize")


def _let(value, name, fbody):
    """``let name = value in fbody(name)``: the shared subexpressions of the interpolation (coordinates, weights)
    are computed once, and the expression stays small for the simplifier."""
    if isinstance(value, E.IntImm | E.FloatImm | E.Var):
        return fbody(value)
    var = E.Var(name, value.dtype)
    return E.Let(var, value, fbody(var))


def _lets(values, name, fbody):
    """:func:`_let` over a list: ``fbody`` receives the bound variables."""
    if not values:
        return fbody([])
    return _let(values[0], f"{name}{len(values)}", lambda v: _lets(values[1:], name, lambda rest: fbody([v, *rest])))


def _const(value, work):
    return _op.const(float(np.asarray(value, dtype=work)), work)


def _ratio(a, b, work):
    """``a / b`` in ``work`` precision: folded when both are ints, else computed at run time (a size variable)."""
    if isinstance(a, int) and isinstance(b, int):
        return _const(np.asarray(a, work) / np.asarray(b, work), work)
    return _op.cast(a, work) / _op.cast(b, work)


def _source_coord(i, out_size, in_size, mode, work):
    """The source coordinate of output index ``i`` (a float expression of dtype ``work``); the sizes are ints or,
    for ``dyn.image.resize2d``, size variables."""
    pos = _op.cast(i, work)
    scale = _ratio(in_size, out_size, work)
    half = _const(0.5, work)
    static = isinstance(out_size, int)
    if mode == "half_pixel" or (mode == "pytorch_half_pixel" and static and out_size > 1):
        return (pos + half) * scale - half
    if mode == "pytorch_half_pixel" and not static:
        return E.Select(out_size > 1, (pos + half) * scale - half, _const(0.0, work))
    if mode == "align_corners":
        if static and out_size == 1:
            return _const(0.0, work)
        coord = _ratio(in_size - 1, out_size - 1, work) * pos
        return coord if static else E.Select(out_size == 1, _const(0.0, work), coord)
    if mode == "asymmetric":
        return scale * pos
    if mode == "pytorch_half_pixel":
        return _const(0.0, work)
    return (pos + half) * scale


def _int_factor(in_size, out_size):
    """TVM's ``can_convert_multiply_to_intdiv``: the integer upscale factor, or None."""
    if out_size % in_size:
        return None
    factor = out_size // in_size
    return factor if factor <= 1 / (1e-5 * in_size + 1e-5) else None


def _clamp(idx, size):
    last = _op.const(size - 1, "int32") if isinstance(size, int) else _op.cast(size, "int32") - 1
    return _op.minimum(_op.maximum(idx, _op.const(0, "int32")), last)


def _int_division(i, in_size, out_size):
    """For a run-time ``out_size`` and a static ``in_size``: the index by integer division where TVM's rule would
    take it (``out_size`` a multiple of ``in_size`` by a factor within the bound), else None (no such case)."""
    bound = int(1 / (1e-5 * in_size + 1e-5))
    if bound < 1:
        return None
    out = _op.cast(out_size, "int32")
    factor = _op.maximum(out // in_size, _op.const(1, "int32"))
    holds = _op.logical_and(_op.equal(_op.floormod(out, in_size), 0), out // in_size <= bound)
    return holds, _clamp(i // factor, in_size)


def _nearest(i, coord, method, in_size, out_size, int_div):
    if int_div and isinstance(out_size, int):
        return _clamp(i // _int_factor(in_size, out_size), in_size)
    index = _rounded(coord, method, in_size)
    if int_div and isinstance(in_size, int):  # dyn: the integer rule decided at run time
        holds, by_division = _int_division(i, in_size, out_size)
        return E.Select(holds, by_division, index)
    return index


def _can_divide(in_size, out_size):
    """Whether the integer rule may apply: decided now for static sizes, at run time for a size variable."""
    if isinstance(out_size, int) and isinstance(in_size, int):
        return _int_factor(in_size, out_size) is not None
    return isinstance(in_size, int)


def _rounded(coord, method, in_size):
    work = coord.dtype
    if method == "round":
        rounded = round_half_away(coord)
    elif method == "round_prefer_floor":
        rounded = _intrin.ceil(coord - _const(0.5, work))
    elif method == "round_prefer_ceil":
        rounded = _intrin.floor(coord + _const(0.5, work))
    elif method == "floor":
        rounded = _intrin.floor(coord + _const(1e-5, work))
    elif method == "ceil":
        rounded = _intrin.ceil(coord - _const(1e-5, work))
    else:
        raise OpAttributeInvalid(f"topi.resize2d: unknown rounding_method {method!r}")
    return _clamp(_op.cast(rounded, "int32"), in_size)


def _cubic_weights(t, alpha):
    a = _const(alpha, t.dtype)
    two, three = _const(2.0, t.dtype), _const(3.0, t.dtype)
    t2 = t * t
    t3 = t * t * t
    return [
        a * (t3 - two * t2 + t),
        (a + two) * t3 - (three + a) * t2 + _const(1.0, t.dtype),
        (_const(0.0, t.dtype) - (a + two)) * t3 + (three + two * a) * t2 - a * t,
        (_const(0.0, t.dtype) - a) * t3 + a * t2,
    ]


def _cubic_taps(coord, size, alpha, exclude):
    base_f = _intrin.floor(coord)
    weights = _cubic_weights(coord - base_f, alpha)
    base = _op.cast(base_f, "int32")
    if exclude:
        zero = _const(0.0, coord.dtype)
        weights = [_op.select(_op.logical_or(base - 1 + k < 0, base + k > size), zero, w)
                   for k, w in enumerate(weights)]
        total = weights[0] + weights[1] + weights[2] + weights[3]
        weights = [w / total for w in weights]
    return [_clamp(base - 1 + k, size) for k in range(4)], weights


def _source_coord_roi(i, out_size, in_size, mode, work, start, end):
    """:func:`_source_coord`, with ``tf_crop_and_resize`` mapping output ``i`` into ``[start, end]`` of the input
    (its centre for a single output)."""
    if mode != "tf_crop_and_resize":
        return _source_coord(i, out_size, in_size, mode, work)
    span = _const(in_size - 1, work) if isinstance(in_size, int) else _op.cast(in_size - 1, work)
    if isinstance(out_size, int) and out_size == 1:
        return _const(0.5, work) * (_const(start, work) + _const(end, work)) * span
    last = _const(out_size - 1, work) if isinstance(out_size, int) else _op.cast(out_size - 1, work)
    return _const(start, work) * span + _op.cast(i, work) * (_const(end, work) - _const(start, work)) * span / last


def _weighted_sum(values, weights):
    """``values[0] * weights[0] + values[1] * weights[1] + ...``, added left to right (as the numpy reference)."""
    out = values[0] * weights[0]
    for value, weight in zip(values[1:], weights[1:], strict=True):
        out = out + value * weight
    return out


INTEGER_SNAP = 1e-6


def _to_integer(value, out_dtype):
    """A float64 blend as the integer ``out_dtype``: snapped to a whole number within ``INTEGER_SNAP``, then
    truncated (see the module docstring)."""
    def snap(v):
        whole = _intrin.floor(v + _const(0.5, "float64"))
        return cast_expr(_op.select(_op.abs(v - whole) < _const(INTEGER_SNAP, "float64"), whole, v), out_dtype)
    return _let(value, "blend", snap)


def resize(data, size, layout, spatial, method="linear", coordinate_transformation_mode="half_pixel",
           rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, roi=None, out_dtype=None,
           name="T_resize"):
    """Resize the ``spatial`` axes (``"W"``, ``"HW"`` or ``"DHW"`` of ``layout``, unsplit) of ``data`` to ``size``
    in one injective compute: each output element blends ``1``, ``2**k`` or ``4**k`` input elements (nearest,
    linear, cubic; ``k`` axes), the last axis innermost, as the numpy reference (:mod:`kiln.topi.testing.resize`)
    blends axis after axis, so both round alike. See the module docstring for the modes."""
    lay = parse_layout(layout)
    axes = [lay.index_of(a) for a in spatial]
    if min(axes) < 0 or any(lay.factor_of(a) != 1 for a in spatial):
        raise OpAttributeInvalid(f"topi.resize: layout {layout} needs unsplit {'/'.join(spatial)} axes")
    if method not in ("nearest_neighbor", "linear", "cubic"):
        raise OpAttributeInvalid(f"topi.resize: method must be nearest_neighbor, linear or cubic, got {method!r}")
    mode = coordinate_transformation_mode
    if mode not in _MODES:
        raise OpAttributeInvalid(f"topi.resize: unknown coordinate_transformation_mode {mode!r}")
    k = len(spatial)
    roi = tuple(roi) if roi is not None and len(roi) == 2 * k else (0.0,) * k + (1.0,) * k
    shape = get_const_tuple(data.shape)
    in_sizes = [shape[a] for a in axes]
    out_sizes = [v if isinstance(v, E.PrimExpr) else int(v) for v in size]  # size variables for dyn
    out_shape = list(shape)
    for a, n in zip(axes, out_sizes, strict=True):
        out_shape[a] = n
    out_dtype = out_dtype or data.dtype
    integer_blend = method != "nearest_neighbor" and not _dt.is_float(out_dtype)
    work = "float64" if data.dtype == "float64" or integer_blend else "float32"

    def output(value):
        return _to_integer(value, out_dtype) if integer_blend else cast_expr(value, out_dtype)

    def read(i, index):
        idx = list(i)
        for a, v in zip(axes, index, strict=True):
            idx[a] = v
        return data(*idx)

    def fcompute(*i):
        coords = [_source_coord_roi(i[a], o, n, mode, work, roi[j], roi[k + j])
                  for j, (a, n, o) in enumerate(zip(axes, in_sizes, out_sizes, strict=True))]
        return _lets(coords, "coord", lambda c: extrapolate(c, interpolate(i, c)))

    def extrapolate(coords, value):
        if mode != "tf_crop_and_resize":
            return value
        outside = _op.any(*(_op.logical_or(c < _const(0.0, work), c > _const(n - 1, work))
                            for c, n in zip(coords, in_sizes, strict=True)))
        return _op.select(outside, cast_expr(_const(extrapolation_value, work), out_dtype), value)

    def interpolate(i, coords):
        if method == "nearest_neighbor":
            rounding = rounding_method or ("round" if mode == "align_corners" else "floor")
            int_div = mode == "asymmetric"
            index = [_nearest(i[a], c, rounding, n, o, int_div and _can_divide(n, o))
                     for a, c, n, o in zip(axes, coords, in_sizes, out_sizes, strict=True)]
            return cast_expr(read(i, index), out_dtype)
        if method == "linear":
            return _lets([_intrin.floor(c) for c in coords], "base", lambda b: linear(i, coords, b))
        taps = [_cubic_taps(c, n, cubic_alpha, cubic_exclude) for c, n in zip(coords, in_sizes, strict=True)]
        flat = [w for _, weights in taps for w in weights]

        def cubic(w):
            per_axis = [w[4 * j:4 * j + 4] for j in range(k)]
            return output(blend(i, [t for t, _ in taps], lambda depth, values: _weighted_sum(values, per_axis[depth]),
                                []))

        return _lets(flat, "weight", cubic)

    def linear(i, coords, bases):
        fracs = [c - b for c, b in zip(coords, bases, strict=True)]
        starts = [_op.cast(b, "int32") for b in bases]
        taps = [[_clamp(s0 + j, n) for j in range(2)] for s0, n in zip(starts, in_sizes, strict=True)]

        def lerp(depth, ends):
            """``a + (b - a) * t``: ``a`` itself where the taps are equal, which ``a * (1 - t) + b * t`` is not."""
            return _lets(ends, "end", lambda e: e[0] + (e[1] - e[0]) * fracs[depth])

        return output(blend(i, taps, lerp, []))

    def blend(i, taps, combine, chosen):
        """``combine(depth, values)`` of the values at the taps of axis ``depth = len(chosen)``, each the blend of
        the axes after it (the last axis innermost, reading the data)."""
        depth = len(chosen)
        values = [_op.cast(read(i, chosen + [tap]), work) if depth == k - 1 else blend(i, taps, combine,
                                                                                        chosen + [tap])
                  for tap in taps[depth]]
        return combine(depth, values)

    return compute(out_shape, fcompute, name=name, tag=f"{_tag.INJECTIVE},resize")


def resize2d(data, roi, size, layout="NCHW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", bicubic_alpha=-0.5, bicubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """Resize the H x W plane of ``data`` to ``size`` (see :func:`resize` and the module docstring).

    Parameters
    ----------
    data : te.Tensor
    roi : tuple of float
        For ``tf_crop_and_resize``: ``(y1, x1, y2, x2)`` normalized.
    size : pair of int
        The output height and width (size variables for ``dyn.image.resize2d``).
    layout, method, coordinate_transformation_mode, rounding_method, bicubic_alpha, bicubic_exclude,
    extrapolation_value :
        As Relay's ``image.resize2d``.
    out_dtype : str, optional
        The result dtype (``data``'s when None).

    Returns
    -------
    out : te.Tensor
    """
    return resize(data, size, layout, "HW", method, coordinate_transformation_mode, rounding_method, bicubic_alpha,
                  bicubic_exclude, extrapolation_value, roi, out_dtype, name="T_resize2d")
