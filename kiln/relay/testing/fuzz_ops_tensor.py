"""Operator recipes of the mixed-dtype fuzzer beyond element-wise ones: reductions, scans and sorts, data movement
with integer indices of every width, and neural-network operators (see :mod:`.fuzz_ops` for the protocol)."""

import math

from .. import op as _op
from ..expr import TupleGetItem
from .fuzz_graph import accepted
from .fuzz_ops import typed
from .fuzz_values import clipped, dtype_range, kind, overflow_undefined, result, without_nan


def _as_result(call, operands, lo, hi, nan=False, exact=True, grid=0, dtype=None):
    ttype = typed(call, operands)
    return result(dtype or ttype.dtype, ttype.shape, call, lo, hi, nan, exact, grid)


def fit_sum(v, count):
    """``v`` clamped so a sum of ``count`` of its elements cannot overflow an int32/int64 (nor a float16 by
    rounding near its largest value)."""
    top = dtype_range(v.dtype)[1]
    if overflow_undefined(v.dtype) or kind(v.dtype) == "f":
        limit = top // max(count, 1) if kind(v.dtype) != "f" else top / (4 * max(count, 1))
        if v.magnitude > limit:
            v = clipped(v, -limit, limit)
    return v


def _axes(gen, ndim):
    if ndim == 0 or gen.chance(0.25):
        return None
    axes = sorted({int(a) for a in gen.rng.integers(-ndim, ndim, int(gen.rng.integers(1, min(ndim, 2) + 1)))})
    return tuple(a % ndim for a in axes) if len({a % ndim for a in axes}) == len(axes) else (axes[0],)


def reduction(gen):
    """sum, prod, mean, max, min, all, any, argmax, argmin over random axes."""
    name = gen.choice(["sum", "prod", "mean", "max", "min", "all", "any", "argmax", "argmin"])
    v = gen.operand(accepted(name), exact=name in ("argmax", "argmin"))
    axis, keepdims, exclude = _axes(gen, len(v.shape)), gen.chance(0.3), gen.chance(0.15)
    reduced = [d for k, d in enumerate(v.shape) if axis is None or (k in axis) != exclude]
    count = math.prod(reduced)
    if name in ("argmax", "argmin"):
        if kind(v.dtype) == "f" and not v.exact:
            return None
        v = without_nan(v)
        call = getattr(_op, name)(v.expr, axis, keepdims, exclude, gen.chance(0.3))
        return _as_result(call, [v], 0, max(count - 1, 0))
    if name in ("max", "min") or v.dtype == "bool":
        v = without_nan(v)
        return _as_result(getattr(_op, name)(v.expr, axis, keepdims, exclude), [v], v.lo, v.hi, False, v.exact,
                          v.grid)
    if name == "prod":
        v = clipped(v, -2, 2) if count > 1 else v
        top = v.magnitude ** max(count, 1)
        lo, hi = (0, top) if v.lo >= 0 else (-top, top)
        return _as_result(_op.prod(v.expr, axis, keepdims, exclude), [v], lo, hi, v.nan, v.exact, v.grid * count)
    v = fit_sum(v, count)
    if name == "mean":
        return _as_result(_op.mean(v.expr, axis, keepdims, exclude), [v], v.lo, v.hi, v.nan, False)
    lo, hi = min(v.lo * count, v.lo), max(v.hi * count, v.hi)
    return _as_result(_op.sum(v.expr, axis, keepdims, exclude), [v], lo, hi, v.nan, v.exact, v.grid)


def scan_or_sort(gen):
    """cumsum, cumprod (guarded like sums and products), topk and argsort (exact values, ties by index)."""
    name = gen.choice(["cumsum", "cumprod", "topk", "argsort"])
    v = gen.operand(accepted(name), exact=name in ("topk", "argsort"))
    if not v.shape:
        v = v.with_expr(_op.reshape(v.expr, (1,)), shape=(1,))
    axis = int(gen.rng.integers(-len(v.shape), len(v.shape)))
    length = v.shape[axis]
    if name in ("topk", "argsort"):
        if kind(v.dtype) == "f" and not v.exact:
            return None
        v = without_nan(v)
        index_dtype = gen.dtype(["int32", "int64", "int16", "uint8"])
        if name == "argsort":
            call = _op.argsort(v.expr, axis, gen.chance(0.5), index_dtype)
            return _as_result(call, [v], 0, length - 1)
        ret = gen.choice(["values", "indices", "both"])
        call = _op.topk(v.expr, int(gen.rng.integers(0, length + 1)), axis, ret, gen.chance(0.5), index_dtype)
        if ret == "both":
            call = TupleGetItem(call.astuple(), int(gen.chance(0.5)))
            ttype = typed(call.tuple_value, [v]).fields[call.index]
            return result(ttype.dtype, ttype.shape, call, *((v.lo, v.hi) if call.index == 0 else (0, length - 1)),
                          exact=v.exact, grid=v.grid)
        return _as_result(call, [v], *((v.lo, v.hi) if ret == "values" else (0, length - 1)), exact=v.exact,
                          grid=v.grid)
    exclusive = gen.chance(0.3)
    if name == "cumprod":
        v = clipped(v, -2, 2) if length > 1 else v
        top = v.magnitude ** length
        return _as_result(_op.cumprod(v.expr, axis, exclusive=exclusive), [v], -top, top, v.nan, v.exact,
                          v.grid * length)
    v = fit_sum(v, length)
    lo, hi = min(v.lo * length, 0), max(v.hi * length, 0)
    return _as_result(_op.cumsum(v.expr, axis, exclusive=exclusive), [v], lo, hi, v.nan, v.exact, v.grid)


def _keep(v, call, operands=None):
    """A data-movement result: the same facts as ``v``."""
    ttype = typed(call, operands or [v])
    return result(ttype.dtype, ttype.shape, call, v.lo, v.hi, v.nan, v.exact, v.grid)


def reshape_like(gen):
    """reshape, transpose, expand_dims, squeeze, reverse, tile, repeat, broadcast_to, batch_flatten."""
    name = gen.choice(["reshape", "transpose", "expand_dims", "squeeze", "reverse", "tile", "repeat", "broadcast_to",
                       "nn.batch_flatten"])
    v = gen.operand(accepted(name))
    ndim = len(v.shape)
    if name == "reshape":
        shape = list(gen.rng.permutation([d for d in v.shape for _ in [0]])) + [1] * int(gen.rng.integers(0, 2))
        if shape and gen.chance(0.5):
            shape[int(gen.rng.integers(len(shape)))] = -1
        return _keep(v, _op.reshape(v.expr, [int(d) for d in shape]))
    if name == "transpose":
        axes = None if gen.chance(0.3) else [int(a) for a in gen.rng.permutation(ndim)]
        return _keep(v, _op.transpose(v.expr, axes))
    if name == "expand_dims":
        axis = int(gen.rng.integers(-ndim - 1, ndim + 1))
        return _keep(v, _op.expand_dims(v.expr, axis, int(gen.rng.integers(1, 3))))
    if name == "squeeze":
        return _keep(v, _op.squeeze(v.expr)) if 1 in v.shape else None
    if name == "nn.batch_flatten":
        return _keep(v, _op.nn.batch_flatten(v.expr)) if ndim >= 2 else None
    if ndim == 0:
        return None
    axis = int(gen.rng.integers(-ndim, ndim))
    if name == "reverse":
        return _keep(v, _op.reverse(v.expr, axis))
    if name == "tile":
        return _keep(v, _op.tile(v.expr, [int(r) for r in gen.rng.integers(1, 3, int(gen.rng.integers(1, ndim + 2)))]))
    if name == "repeat":
        return _keep(v, _op.repeat(v.expr, int(gen.rng.integers(1, 3)), axis))
    shape = [2] * int(gen.rng.integers(0, 2)) + [d if d != 1 or gen.chance(0.5) else 3 for d in v.shape]
    return _keep(v, _op.broadcast_to(v.expr, shape))


def join_or_slice(gen):
    """concatenate, split, strided_slice, pad."""
    name = gen.choice(["concatenate", "split", "strided_slice", "nn.pad"])
    v = gen.operand(accepted(name))
    ndim = len(v.shape)
    if ndim == 0:
        return None
    axis = int(gen.rng.integers(ndim))
    if name == "concatenate":
        shape = list(v.shape)
        shape[axis] = int(gen.rng.integers(1, 4))
        other = gen.operand((v.dtype,), shape=shape)
        parts = [v, other] if gen.chance(0.5) else [other, v, v]
        call = _op.concatenate([p.expr for p in parts], axis - ndim if gen.chance(0.5) else axis)
        return result(v.dtype, tuple(shape[:axis] + [sum(p.shape[axis] for p in parts)] + shape[axis + 1:]), call,
                      min(p.lo for p in parts), max(p.hi for p in parts), any(p.nan for p in parts),
                      all(p.exact for p in parts), max(p.grid for p in parts))
    if name == "split":
        n = v.shape[axis]
        cuts = sorted({int(c) for c in gen.rng.integers(0, n + 1, int(gen.rng.integers(1, 3)))})
        parts = _op.split(v.expr, cuts, axis)
        index = int(gen.rng.integers(len(cuts) + 1))
        shape = list(v.shape)
        points = [0, *cuts, n]
        shape[axis] = max(0, points[index + 1] - points[index])
        if shape[axis] == 0:
            return None
        return result(v.dtype, tuple(shape), parts[index], v.lo, v.hi, v.nan, v.exact, v.grid)
    if name == "nn.pad":
        width = [(int(gen.rng.integers(0, 2)), int(gen.rng.integers(0, 2))) for _ in v.shape]
        fill = gen.fresh((), v.dtype)
        shape = tuple(d + b + a for d, (b, a) in zip(v.shape, width, strict=True))
        return result(v.dtype, shape, _op.nn.pad(v.expr, width, fill.expr), min(v.lo, fill.lo), max(v.hi, fill.hi),
                      v.nan, v.exact and fill.exact, max(v.grid, fill.grid))
    begin = [int(gen.rng.integers(-d, d)) for d in v.shape]
    end = [int(gen.rng.integers(-d - 1, d + 1)) for d in v.shape]
    strides = [int(gen.choice([1, 1, 2, -1, -2])) for _ in v.shape]
    call = _op.strided_slice(v.expr, begin, end, strides)
    return _keep(v, call) if 0 not in typed(call, [v]).shape else None


def indexing(gen):
    """take (clip/wrap modes, any integer indices), gather, gather_nd, one_hot: index tensors of every width."""
    name = gen.choice(["take", "gather", "gather_nd", "one_hot"])
    index_dtypes = accepted("take", 1)
    if name == "one_hot":
        indices = gen.operand(index_dtypes)
        depth = int(gen.rng.integers(1, 5))
        dtype = gen.dtype(accepted("one_hot", 1))
        on, off = gen.fresh((), dtype), gen.fresh((), dtype)
        indices = clipped(indices, -1, depth)  # -1 and depth are out of range: all off
        call = _op.one_hot(indices.expr, on.expr, off.expr, depth, int(gen.rng.integers(-1, len(indices.shape) + 1)),
                           dtype)
        return _as_result(call, [indices, on, off], min(on.lo, off.lo), max(on.hi, off.hi), on.nan or off.nan,
                          on.exact and off.exact, max(on.grid, off.grid))
    data = gen.operand(accepted(name))
    ndim = len(data.shape)
    if ndim == 0:
        return None
    axis = int(gen.rng.integers(ndim))
    if name == "take":
        indices = gen.operand(index_dtypes)
        mode = gen.choice(["clip", "wrap"])
        call = _op.take(data.expr, indices.expr, None if gen.chance(0.2) else axis, mode=mode)
        return _keep(data, call, [data, indices])
    if name == "gather":
        shape = [int(gen.rng.integers(1, d + 1)) if k != axis else int(gen.rng.integers(1, 4))
                 for k, d in enumerate(data.shape)]
        indices = clipped(gen.operand(index_dtypes, shape=shape), 0, data.shape[axis] - 1)
        return _keep(data, _op.gather(data.expr, axis, indices.expr), [data, indices])
    m = int(gen.rng.integers(1, ndim + 1))
    indices = gen.operand(index_dtypes, shape=(m,) + gen.shape(int(gen.rng.integers(0, 3))))
    indices = clipped(indices, 0, min(data.shape[:m]) - 1)
    return _keep(data, _op.gather_nd(data.expr, indices.expr), [data, indices])


def bounded_products(a, b, k):
    """Operands for a sum of ``k`` products of elements of ``a`` and ``b`` (convolutions, matrix products): ``a`` and
    ``b`` clipped so that the sum cannot overflow, and the sum's bounds ``(a, b, lo, hi)``."""
    top = dtype_range(a.dtype)[1]
    if overflow_undefined(a.dtype) or kind(a.dtype) == "f":
        limit = math.isqrt(top // k) if kind(a.dtype) != "f" else math.sqrt(top / (4 * k))
        a, b = clipped(a, -limit, limit), clipped(b, -limit, limit)
    top = k * a.magnitude * b.magnitude
    return a, b, -top, top


def linear(gen):
    """conv2d, dense, matmul, batch_matmul and bias_add: sums of products, exact while they fit."""
    name = gen.choice(["nn.conv2d", "nn.dense", "nn.matmul", "nn.batch_matmul", "nn.bias_add"])
    dtypes = accepted(name)
    if name == "nn.conv2d":
        data = gen.reshaped(gen.operand(dtypes), 4)
        channels, groups = data.shape[1], 1 if gen.chance(0.7) else data.shape[1]
        kh, kw = int(gen.rng.integers(1, 3)), int(gen.rng.integers(1, 3))
        weight = gen.fresh((int(gen.rng.integers(1, 4)) * groups, channels // groups, kh, kw), data.dtype)
        pad = int(gen.rng.integers(0, 2))
        if data.shape[2] + 2 * pad < kh or data.shape[3] + 2 * pad < kw:
            return None
        data, weight, lo, hi = bounded_products(data, weight, channels // groups * kh * kw)
        call = _op.nn.conv2d(data.expr, weight.expr, padding=pad, groups=groups)
    elif name == "nn.bias_add":
        data = gen.operand(dtypes)
        if not data.shape:
            return None
        axis = int(gen.rng.integers(len(data.shape)))
        bias = gen.fresh((data.shape[axis],), data.dtype)
        data, bias = fit_sum(data, 2), fit_sum(bias, 2)
        call = _op.nn.bias_add(data.expr, bias.expr, axis)
        return _as_result(call, [data, bias], data.lo + bias.lo, data.hi + bias.hi, data.nan or bias.nan,
                          data.exact and bias.exact, max(data.grid, bias.grid))
    else:
        data = gen.reshaped(gen.operand(dtypes), 3 if name == "nn.batch_matmul" else 2)
        k = data.shape[-1]
        n = int(gen.rng.integers(1, 4))
        shape = {"nn.dense": (n, k), "nn.matmul": (k, n), "nn.batch_matmul": (data.shape[0], n, k)}[name]
        weight = gen.fresh(shape, data.dtype)
        data, weight, lo, hi = bounded_products(data, weight, k)
        call = getattr(_op.nn, name[3:])(data.expr, weight.expr)
    exact = data.exact and weight.exact
    return _as_result(call, [data, weight], lo, hi, data.nan or weight.nan, exact, data.grid + weight.grid)


def pooling_or_norm(gen):
    """max/avg pooling (global too), softmax, log_softmax, layer_norm."""
    name = gen.choice(["nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d",
                       "nn.softmax", "nn.log_softmax", "nn.layer_norm"])
    v = gen.operand(accepted(name), finite=name in ("nn.softmax", "nn.log_softmax", "nn.layer_norm"))
    if name in ("nn.softmax", "nn.log_softmax", "nn.layer_norm"):
        v = clipped(without_nan(v), -64, 64)
        if not v.shape:
            return None
        if name == "nn.layer_norm":
            gamma, beta = gen.fresh(v.shape[-1:], v.dtype), gen.fresh(v.shape[-1:], v.dtype)
            top = math.sqrt(v.shape[-1]) * gamma.magnitude + beta.magnitude + 1
            return _as_result(_op.nn.layer_norm(v.expr, gamma.expr, beta.expr), [v, gamma, beta], -top, top,
                              exact=False)
        axis = int(gen.rng.integers(-len(v.shape), len(v.shape)))
        if name == "nn.softmax":
            return _as_result(_op.nn.softmax(v.expr, axis), [v], 0, 1, exact=False)
        return _as_result(_op.nn.log_softmax(v.expr, axis), [v], -(v.hi - v.lo) - 4, 0, exact=False)
    v = gen.reshaped(without_nan(gen.operand(accepted(name))), 4)
    if name.startswith("nn.global"):
        if "avg" in name:
            v = fit_sum(v, v.shape[2] * v.shape[3])
        return _as_result(getattr(_op.nn, name[3:])(v.expr), [v], v.lo, v.hi, exact=v.exact and "max" in name,
                          grid=v.grid)
    size = (int(gen.rng.integers(1, 3)), int(gen.rng.integers(1, 3)))
    pad = int(gen.rng.integers(0, 2))
    if v.shape[2] + 2 * pad < size[0] or v.shape[3] + 2 * pad < size[1]:
        return None
    fn = getattr(_op.nn, name[3:])
    if name == "nn.avg_pool2d":
        v = fit_sum(v, size[0] * size[1])
        call = fn(v.expr, size, padding=pad, ceil_mode=gen.chance(0.3), count_include_pad=gen.chance(0.5))
        return _as_result(call, [v], min(v.lo, 0), max(v.hi, 0), exact=False)
    call = fn(v.expr, size, padding=pad, ceil_mode=gen.chance(0.3))
    lo = dtype_range(v.dtype)[0] if pad else v.lo  # a window entirely in the padding gives the lowest value
    return _as_result(call, [v], lo, v.hi, exact=v.exact, grid=v.grid)


RECIPES = {
    "reduction": (4, reduction), "scan_or_sort": (2, scan_or_sort), "reshape_like": (3, reshape_like),
    "join_or_slice": (3, join_or_slice), "indexing": (3, indexing), "linear": (2, linear),
    "pooling_or_norm": (2, pooling_or_norm),
}
