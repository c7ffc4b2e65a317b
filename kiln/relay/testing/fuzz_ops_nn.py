"""Operator recipes of the mixed-dtype fuzzer for the operator families the others leave out: data movement between
space and channels, padding by reflection, stacking and masking; resampling; normalization; the other
convolutions and poolings; and the counter-based random numbers (see :mod:`.fuzz_ops` for the protocol)."""

import math

from .. import op as _op
from ..expr import TupleGetItem, const
from ..transform import InferTypeLocal
from .fuzz_graph import accepted
from .fuzz_ops_tensor import bounded_products, fit_sum
from .fuzz_values import clipped, dtype_range, kind, result, without_nan

_MOVES = ("nn.depth_to_space", "nn.space_to_depth", "nn.mirror_pad", "stack", "trilu", "nn.upsampling",
          "image.resize2d", "reverse_sequence", "sequence_mask")


def _as_result(expr, lo, hi, nan=False, exact=True, grid=0):
    """A Value of ``expr`` (of the type inference gives it) with the facts given."""
    ttype = InferTypeLocal(expr)
    return result(ttype.dtype, tuple(int(d) for d in ttype.shape), expr, lo, hi, nan, exact, grid)


def _moved(v, call, operands=None, lo=None, hi=None):
    """The result of ``call``, which only moves, copies or repeats the elements of ``operands`` (``v`` alone by
    default) and perhaps writes values in ``[lo, hi]``: their facts carry over."""
    operands = operands or [v]
    low = min(u.lo for u in operands) if lo is None else min(lo, *(u.lo for u in operands))
    high = max(u.hi for u in operands) if hi is None else max(hi, *(u.hi for u in operands))
    return _as_result(call, low, high, any(u.nan for u in operands), all(u.exact for u in operands),
                      max(u.grid for u in operands))


def movement(gen):
    """depth_to_space, space_to_depth, mirror_pad, stack, trilu, nearest upsampling and resize, reverse_sequence,
    sequence_mask: every element of the result is an element of an operand (or a given fill value), so the result
    is exact where its operands are."""
    name = gen.choice(_MOVES)
    v = gen.operand(accepted(name))
    if name in ("nn.depth_to_space", "nn.space_to_depth", "nn.upsampling", "image.resize2d"):
        v = gen.reshaped(v, 4)
        n, c, h, w = v.shape
        if name == "nn.depth_to_space":
            block = gen.choice([b for b in (1, 2, 3) if c % (b * b) == 0])
            return _moved(v, _op.nn.depth_to_space(v.expr, block, mode=gen.choice(["DCR", "CRD"])))
        if name == "nn.space_to_depth":
            blocks = [b for b in (1, 2, 3) if h % b == 0 and w % b == 0]
            return _moved(v, _op.nn.space_to_depth(v.expr, gen.choice(blocks)))
        if name == "nn.upsampling":
            return _moved(v, _op.nn.upsampling(v.expr, gen.integer(1, 3), gen.integer(1, 3)))
        size = (gen.integer(1, 2 * h + 1), gen.integer(1, 2 * w + 1))
        mode = gen.choice(["asymmetric", "half_pixel", "align_corners"])
        call = _op.image.resize2d(v.expr, size, method="nearest_neighbor", coordinate_transformation_mode=mode,
                                  rounding_method=gen.choice(["floor", "round", "ceil"]))
        return _moved(v, call)
    if not v.shape:
        return None
    rank = len(v.shape)
    if name == "nn.mirror_pad":
        mode = gen.choice(["REFLECT", "SYMMETRIC"])
        limit = (lambda d: d - 1) if mode == "REFLECT" else (lambda d: d)
        pads = [(gen.integer(0, min(2, limit(d))), gen.integer(0, min(2, limit(d)))) for d in v.shape]
        return _moved(v, _op.nn.mirror_pad(v.expr, pads, mode))
    if name == "stack":
        others = [gen.operand((v.dtype,), shape=v.shape) for _ in range(gen.integer(0, 2))]
        return _moved(v, _op.stack([u.expr for u in [v, *others]], gen.integer(-rank - 1, rank)), [v, *others])
    if name == "trilu":
        if rank < 2:
            return None
        k = const(gen.integer(-2, 2), "int32")
        return _moved(v, _op.trilu(v.expr, k, gen.chance(0.5)), lo=0, hi=0)
    if rank < 2:
        return None
    batch_axis, seq_axis = (0, 1) if gen.chance(0.5) else (1, 0)
    batch, steps = v.shape[batch_axis], v.shape[seq_axis]
    lengths = gen.rng.integers(0 if name == "sequence_mask" else 1, steps + 1, size=batch).astype("int32")
    if name == "reverse_sequence":
        return _moved(v, _op.reverse_sequence(v.expr, const(lengths), seq_axis, batch_axis))
    fill = float(gen.integer(max(-3, int(dtype_range(v.dtype)[0])), 3))  # the relation refuses one the dtype lacks
    return _moved(v, _op.sequence_mask(v.expr, const(lengths), fill, axis=seq_axis), lo=fill, hi=fill)


def resampling(gen):
    """Linear and cubic resize (1-D and 2-D) and bilinear upsampling of float tensors: weighted sums of neighbours
    whose weights sum to one (cubic ones overshoot by at most half the input's magnitude)."""
    name = gen.choice(["image.resize1d", "image.resize2d", "nn.upsampling"])
    floats = [d for d in accepted(name) if kind(d) == "f"]
    v = without_nan(gen.operand(floats, finite=True))
    if name == "image.resize1d":
        v = gen.reshaped(v, 3)
        size = (gen.integer(1, 2 * v.shape[2] + 1),)
    else:
        v = gen.reshaped(v, 4)
        size = (gen.integer(1, 2 * v.shape[2] + 1), gen.integer(1, 2 * v.shape[3] + 1))
    if name == "nn.upsampling":
        call = _op.nn.upsampling(v.expr, gen.integer(1, 3), gen.integer(1, 3), method="bilinear",
                                 align_corners=gen.chance(0.5))
        return _as_result(call, v.lo, v.hi, exact=False)
    method = gen.choice(["linear", "cubic"])
    mode = gen.choice(["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"])
    build = _op.image.resize1d if name == "image.resize1d" else _op.image.resize2d
    call = build(v.expr, size, method=method, coordinate_transformation_mode=mode)
    spread = 0.5 * v.magnitude if method == "cubic" else 0
    return _as_result(call, v.lo - spread, v.hi + spread, exact=False)


def normalization(gen):
    """batch_norm (inference), instance_norm, group_norm, l2_normalize, lrn, prelu of float32/float64 tensors
    (float16 statistics are not compared: numpy accumulates them wider)."""
    name = gen.choice(["nn.batch_norm", "nn.instance_norm", "nn.group_norm", "nn.l2_normalize", "nn.lrn",
                       "nn.prelu"])
    v = clipped(gen.operand(("float32", "float64"), finite=True), -64, 64)
    if len(v.shape) < 2:
        v = gen.reshaped(v, 2)
    channels = v.shape[1]
    if name == "nn.prelu":
        alpha = clipped(gen.fresh((channels,), v.dtype), -4, 4)
        top = v.magnitude * max(1.0, alpha.magnitude)
        return _as_result(_op.nn.prelu(v.expr, alpha.expr, 1), -top, top, exact=False)
    if name == "nn.l2_normalize":
        return _as_result(_op.nn.l2_normalize(v.expr, 1e-3, [gen.integer(1, len(v.shape) - 1)]), -1, 1, exact=False)
    if name == "nn.lrn":
        call = _op.nn.lrn(v.expr, gen.integer(1, 3), 1, bias=2.0, alpha=1e-4, beta=0.75)
        return _as_result(call, -v.magnitude, v.magnitude, exact=False)
    gamma = clipped(gen.fresh((channels,), v.dtype), -4, 4)
    beta = clipped(gen.fresh((channels,), v.dtype), -4, 4)
    count = math.prod(v.shape) // channels
    if name == "nn.batch_norm":
        mean = clipped(gen.fresh((channels,), v.dtype), -4, 4)
        variance = clipped(gen.fresh((channels,), v.dtype), 1, 4)
        call = _op.nn.batch_norm(v.expr, gamma.expr, beta.expr, mean.expr, variance.expr, 1, 1e-3)[0]
        top = (v.magnitude + 4) * 4 + 4
        return _as_result(call, -top, top, exact=False)
    if name == "nn.group_norm":
        groups = gen.choice([g for g in range(1, channels + 1) if channels % g == 0])
        call = _op.nn.group_norm(v.expr, gamma.expr, beta.expr, groups, 1, 1e-3)
        count *= channels // groups
    else:
        call = _op.nn.instance_norm(v.expr, gamma.expr, beta.expr, 1, 1e-3)
    top = math.sqrt(max(count, 1)) * 4 + 4
    return _as_result(call, -top, top, exact=False)


def convolution(gen):
    """conv1d, conv3d, conv1d_transpose and conv2d_transpose: sums of products, exact while they fit."""
    name = gen.choice(["nn.conv1d", "nn.conv3d", "nn.conv1d_transpose", "nn.conv2d_transpose"])
    spatial = {"nn.conv1d": 1, "nn.conv3d": 3, "nn.conv1d_transpose": 1, "nn.conv2d_transpose": 2}[name]
    data = gen.reshaped(gen.operand(accepted(name)), 2 + spatial)
    channels, out = data.shape[1], gen.integer(1, 3)
    kernel = tuple(gen.integer(1, 2) for _ in range(spatial))
    transpose = name.endswith("_transpose")
    pad, stride = gen.integer(0, 1), gen.integer(1, 2) if transpose else 1
    if any(d + 2 * pad < k for d, k in zip(data.shape[2:], kernel, strict=True)) or transpose and any(
            (d - 1) * stride + k - 2 * pad < 1 for d, k in zip(data.shape[2:], kernel, strict=True)):
        return None
    weight_shape = (channels, out, *kernel) if transpose else (out, channels, *kernel)
    weight = gen.fresh(weight_shape, data.dtype)
    data, weight, lo, hi = bounded_products(data, weight, channels * math.prod(kernel))
    build = getattr(_op.nn, name[3:])
    call = build(data.expr, weight.expr, strides=(stride,) * spatial, padding=(pad,) * spatial)
    return _as_result(call, lo, hi, data.nan or weight.nan, data.exact and weight.exact, data.grid + weight.grid)


_POOLS = tuple(f"nn.{kind}_pool{d}d" for kind in ("max", "avg") for d in (1, 3)) + tuple(
    f"nn.adaptive_{kind}_pool{d}d" for kind in ("max", "avg") for d in (1, 2, 3))


def pooling(gen):
    """1-D and 3-D max/avg pooling (strided, padded, dilated max windows, ceil mode) and adaptive max/avg pooling in
    1, 2 and 3 dimensions: a max is one of its window's elements, an average lies within them."""
    name = gen.choice(_POOLS)
    spatial = int(name[-2])
    v = gen.reshaped(without_nan(gen.operand(accepted(name))), 2 + spatial)
    dims, is_max = v.shape[2:], "max" in name
    build = getattr(_op.nn, name[3:])
    if "adaptive" in name:
        output_size = tuple(gen.integer(1, d + 1) for d in dims)
        if not is_max:
            v = fit_sum(v, math.prod(dims))
        return _as_result(build(v.expr, output_size), v.lo, v.hi, exact=is_max and v.exact, grid=v.grid)
    size = tuple(gen.integer(1, 3) for _ in dims)
    dilation = tuple(gen.integer(1, 2) if is_max else 1 for _ in dims)
    pad = gen.integer(0, 1)
    if any(d + 2 * pad < (k - 1) * r + 1 or pad >= k for d, k, r in zip(dims, size, dilation, strict=True)):
        return None
    attrs = {"strides": tuple(gen.integer(1, 2) for _ in dims), "padding": (pad,) * spatial,
             "ceil_mode": gen.chance(0.3)}
    if is_max:
        call = build(v.expr, size, dilation=dilation, **attrs)
        lo = dtype_range(v.dtype)[0] if pad else v.lo  # a window entirely in the padding gives the lowest value
        return _as_result(call, lo, v.hi, exact=v.exact, grid=v.grid)
    v = fit_sum(v, math.prod(size))
    call = build(v.expr, size, count_include_pad=gen.chance(0.5), **attrs)
    return _as_result(call, min(v.lo, 0), max(v.hi, 0), exact=False)


def random_numbers(gen):
    """threefry_generate (the raw 64-bit words) and uniform/normal (floats of them) from a key of a random seed,
    split or not: the same key gives the same numbers in the reference and compiled."""
    key = _op.random.threefry_key(gen.integer(0, 2**31 - 1))
    if gen.chance(0.3):
        key = TupleGetItem(_op.random.threefry_split(key), gen.integer(0, 1))
    shape = gen.shape(None)
    name = gen.choice(["threefry_generate", "uniform", "normal"])
    if name == "threefry_generate":
        call = TupleGetItem(_op.random.threefry_generate(key, shape), 1)
        return _as_result(call, 0, 2**64 - 1) if shape else None
    dtype = gen.choice(["float32", "float64"])
    if name == "uniform":
        low = float(gen.integer(-4, 0))
        call = TupleGetItem(_op.random.uniform(key, shape, dtype, low, low + 4), 1)
        return _as_result(call, low, low + 4, exact=False) if shape else None
    call = TupleGetItem(_op.random.normal(key, shape, dtype, 0.0, 1.0), 1)
    return _as_result(call, -12, 12, exact=False) if shape else None


RECIPES = {
    "movement": (3, movement), "resampling": (1, resampling), "normalization": (1.5, normalization),
    "convolution": (1.5, convolution), "pooling": (1.5, pooling), "random_numbers": (1, random_numbers),
}
