"""Converters of ONNX convolution, pooling and matrix-product operators.

1-D ONNX convolutions and poolings run as 2-D ones with a unit height, 3-D ones as ``nn.conv3d``,
``nn.conv3d_transpose``, ``nn.max_pool3d`` and ``nn.avg_pool3d``. A 1-D or 2-D ``ConvTranspose``
is a convolution of the stride-dilated input (zeros inserted between pixels: a reshape, a pad and a slice) with the
spatially flipped kernel whose input and output channels are swapped per group; constant weights fold.
``MatMul`` uses ``nn.dense`` when the right operand is a matrix and ``nn.batch_matmul`` over the broadcast batch
axes otherwise; ``Einsum`` contracts its operands pairwise the same way (batch letters, kept letters of each side,
contracted letters, each group flattened to one axis of a batched matrix product). Pooling with ``ceil_mode``
follows ONNX: a last window that would start in the end padding is dropped (the result is sliced when Relay's rule
keeps it).
"""

import math

import numpy as np

from ....error import OpNotImplemented
from ....ir.type import is_any
from ....topi.nn.pooling import pool_out_size
from ... import op as _op
from ...op import nn as _nn
from ...op.type_relations import broadcast_shapes
from .common import OnnxOpConverter, const, get_pads, register


def _spatial_rank(ctx, x, what):
    rank = ctx.ndim(x) - 2
    if rank not in (1, 2, 3):
        raise ctx.error(f"{what} over {rank} spatial axes is not supported (kiln has 1-D, 2-D and 3-D)",
                        OpNotImplemented)
    return rank


def _as_2d(x, ctx):
    """(N, C, W) -> (N, C, 1, W)."""
    n, c, w = ctx.shape(x)
    return _op.reshape(x, (n, c, 1, w))


def _padding(pads):
    """[(top, bottom), (left, right)] -> Relay's (top, left, bottom, right) (every begin, then every end, for any
    number of axes)."""
    return tuple(p[0] for p in pads) + tuple(p[1] for p in pads)


def _spatial_attrs(attr, rank, kernel, ctx):
    """``kernel``, ``strides`` and ``dilations``, each checked to hold one value per spatial axis; a ``kernel_shape``
    attribute must agree with ``kernel`` (the weight's spatial shape for convolutions)."""
    if "kernel_shape" in attr and [int(k) for k in attr["kernel_shape"]] != [int(k) for k in kernel]:
        raise ctx.error(f"kernel_shape {list(attr['kernel_shape'])} contradicts the weight's spatial shape "
                        f"{list(kernel)}")
    values = {"kernel_shape": list(kernel), "strides": list(attr.get("strides", [1] * rank)),
              "dilations": list(attr.get("dilations", [1] * rank))}
    for name, value in values.items():
        if len(value) != rank:
            raise ctx.error(f"{name} has {len(value)} values for {rank} spatial axes")
    return values["kernel_shape"], values["strides"], values["dilations"]


@register("Conv")
class Conv(OnnxOpConverter):
    """Grouped, dilated, padded 1-D/2-D convolution with optional bias."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x, w = inputs[0], inputs[1]
        bias = inputs[2] if len(inputs) > 2 else None
        rank = _spatial_rank(ctx, x, "Conv")
        wshape = ctx.shape(w)
        kernel, strides, dilations = _spatial_attrs(attr, rank, wshape[2:], ctx)
        pads = get_pads(ctx, attr, ctx.shape(x)[2:], kernel, strides, dilations)
        if rank == 1:
            x, w = _as_2d(x, ctx), _op.reshape(w, wshape[:2] + (1,) + wshape[2:])
            kernel, strides, dilations, pads = [1] + kernel, [1] + strides, [1] + dilations, [(0, 0)] + pads
        conv = _nn.conv3d if rank == 3 else _nn.conv2d
        out = conv(x, w, strides=strides, padding=_padding(pads), dilation=dilations,
                   groups=attr.get("group", 1), channels=wshape[0], kernel_size=kernel)
        if bias is not None:
            out = _nn.bias_add(out, bias, axis=1)
        if rank == 1:
            out = _op.squeeze(out, axis=[2])
        return out


def _dilate(x, strides, ctx):
    """Insert ``stride - 1`` zeros between neighbouring pixels along H and W of an NCHW tensor."""
    n, c, h, w = ctx.shape(x)
    sh, sw = strides
    if sh == sw == 1:
        return x
    y = _op.reshape(x, (n, c, h, 1, w, 1))
    y = _nn.pad(y, ((0, 0), (0, 0), (0, 0), (0, sh - 1), (0, 0), (0, sw - 1)), const(0, ctx.dtype(x)))
    y = _op.reshape(y, (n, c, h * sh, w * sw))
    return _op.strided_slice(y, [0, 0], [(h - 1) * sh + 1, (w - 1) * sw + 1], axes=[2, 3])


@register("ConvTranspose")
class ConvTranspose(OnnxOpConverter):
    """Transposed convolution (see the module docstring), with ``output_padding``, ``output_shape`` and
    ``auto_pad``."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x, w = inputs[0], inputs[1]
        bias = inputs[2] if len(inputs) > 2 else None
        rank = _spatial_rank(ctx, x, "ConvTranspose")
        xshape, wshape = ctx.shape(x), ctx.shape(w)
        group = attr.get("group", 1)
        kernel, strides, dilations = _spatial_attrs(attr, rank, wshape[2:], ctx)
        out_pad = list(attr.get("output_padding", [0] * rank))
        if len(out_pad) != rank:
            raise ctx.error(f"output_padding has {len(out_pad)} values for {rank} spatial axes")
        pads = cls._pads(attr, xshape[2:], kernel, strides, dilations, out_pad, ctx)
        if rank == 3:
            out = _nn.conv3d_transpose(x, w, strides, _padding(pads), dilations, group, wshape[1] * group, kernel,
                                       output_padding=out_pad)
            return out if bias is None else _nn.bias_add(out, bias, axis=1)
        if rank == 1:
            x, w = _as_2d(x, ctx), _op.reshape(w, wshape[:2] + (1,) + wshape[2:])
            kernel, strides, dilations = [1] + kernel, [1] + strides, [1] + dilations
            out_pad, pads = [0] + out_pad, [(0, 0)] + pads
        cin, cout_g = wshape[0], wshape[1]
        # (Cin, Cout/g, kh, kw) -> (Cout, Cin/g, kh, kw), flipped in space
        kh, kw = kernel
        k = _op.reshape(w, (group, cin // group, cout_g, kh, kw))
        k = _op.reshape(_op.transpose(k, (0, 2, 1, 3, 4)), (group * cout_g, cin // group, kh, kw))
        k = _op.reverse(_op.reverse(k, 2), 3)
        conv_pads, crops = [], []
        for (begin, end), size, d, extra in zip(pads, kernel, dilations, out_pad, strict=True):
            full = (size - 1) * d
            before, after = full - begin, full - end + extra
            conv_pads.append((max(before, 0), max(after, 0)))
            crops.append((max(-before, 0), max(-after, 0)))
        out = _nn.conv2d(_dilate(x, strides, ctx), k, padding=_padding(conv_pads), dilation=dilations,
                         groups=group, channels=group * cout_g, kernel_size=kernel)
        if any(c for pair in crops for c in pair):
            oshape = ctx.shape(out)
            out = _op.strided_slice(out, [crops[0][0], crops[1][0]],
                                    [oshape[2] - crops[0][1], oshape[3] - crops[1][1]], axes=[2, 3])
        if bias is not None:
            out = _nn.bias_add(out, bias, axis=1)
        if rank == 1:
            out = _op.squeeze(out, axis=[2])
        return out

    @staticmethod
    def _pads(attr, spatial, kernel, strides, dilations, out_pad, ctx):
        auto_pad = attr.get("auto_pad", "NOTSET")
        target = attr.get("output_shape")
        if target is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            target = [size * s for size, s in zip(spatial, strides, strict=True)]
        if target is None:
            return get_pads(ctx, attr, spatial, kernel, strides, dilations)
        target = list(target)[-len(spatial):]
        if len(target) != len(spatial):
            raise ctx.error(f"output_shape {target} has fewer values than the {len(spatial)} spatial axes")
        pads = []
        for size, k, s, d, extra, want in zip(spatial, kernel, strides, dilations, out_pad, target, strict=True):
            total = s * (size - 1) + extra + (k - 1) * d + 1 - want
            half = total // 2
            pads.append((half, total - half) if auto_pad == "SAME_UPPER" else (total - half, half))
        return pads


def _onnx_pool_size(size, kernel, stride, dilation, begin, end, ceil_mode):
    """ONNX's output length: with ``ceil_mode`` a last window starting past the data and begin padding is dropped."""
    span = size + begin + end - ((kernel - 1) * dilation + 1)
    if not ceil_mode:
        return span // stride + 1
    out = -(-span // stride) + 1
    return out - 1 if (out - 1) * stride >= size + begin else out


class _Pool(OnnxOpConverter):
    kind = "max"

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x = inputs[0]
        if len(ctx.node.output) > 1 and ctx.node.output[1]:
            raise ctx.error("the Indices output of MaxPool is not supported", OpNotImplemented)
        rank = _spatial_rank(ctx, x, ctx.node.op_type)
        spatial = ctx.shape(x)[2:]
        kernel, strides, dilations = _spatial_attrs(attr, rank, attr["kernel_shape"], ctx)
        pads = get_pads(ctx, attr, spatial, kernel, strides, dilations)
        if any(p >= k for k, pair in zip(kernel, pads, strict=True) for p in pair):
            # a window wholly inside the padding has nothing to pool (ONNX Runtime and PyTorch refuse it too)
            raise ctx.error(f"pads {[p for pair in zip(*pads, strict=True) for p in pair]} must each be smaller "
                            f"than the kernel {list(kernel)}")
        ceil_mode = bool(attr.get("ceil_mode", 0))
        if rank == 1:
            x, spatial = _as_2d(x, ctx), (1,) + tuple(spatial)
            kernel, strides, dilations, pads = [1] + kernel, [1] + strides, [1] + dilations, [(0, 0)] + pads
        per_axis = list(zip(spatial, kernel, strides, dilations, *zip(*pads, strict=True), strict=True))
        want = [_onnx_pool_size(*args, ceil_mode) for args in per_axis]
        floor = [pool_out_size(*args, False) for args in per_axis]
        use_ceil = want != floor
        out = cls._pool(x, kernel, strides, dilations, _padding(pads), use_ceil, attr, ctx)
        got = ctx.shape(out)[2:]
        if list(got) != want:
            out = _op.strided_slice(out, [0] * len(want), want, axes=list(range(2, 2 + len(want))))
        if rank == 1:
            out = _op.squeeze(out, axis=[2])
        return out

    @classmethod
    def _pool(cls, x, kernel, strides, dilations, padding, ceil_mode, attr, ctx):
        max_pool, avg_pool = (_nn.max_pool3d, _nn.avg_pool3d) if len(kernel) == 3 else (_nn.max_pool2d,
                                                                                         _nn.avg_pool2d)
        if cls.kind == "max":
            return max_pool(x, kernel, strides, dilations, padding, ceil_mode=ceil_mode)
        if cls.kind == "avg":
            return avg_pool(x, kernel, strides, dilations, padding, ceil_mode=ceil_mode,
                            count_include_pad=bool(attr.get("count_include_pad", 0)))
        # LpPool: (sum |x|^p)^(1/p), the sum as an average over the window times its size
        p = float(attr.get("p", 2))
        dtype = ctx.dtype(x)
        powered = _op.power(_op.abs(x), const(p, dtype))
        total = _op.multiply(avg_pool(powered, kernel, strides, dilations, padding, ceil_mode=ceil_mode,
                                      count_include_pad=True), const(math.prod(kernel), dtype))
        return _op.power(total, const(1 / p, dtype))


@register("MaxPool")
class MaxPool(_Pool):
    """Max pooling (1-D/2-D; ``auto_pad``, ``ceil_mode``, ``dilations``)."""

    kind = "max"


@register("AveragePool")
class AveragePool(_Pool):
    """Average pooling (``count_include_pad`` counts padded cells in the divisor)."""

    kind = "avg"


@register("LpPool")
class LpPool(_Pool):
    """``p``-norm pooling."""

    kind = "lp"


class _GlobalPool(OnnxOpConverter):
    kind = "avg"

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        x = inputs[0]
        rank = ctx.ndim(x)
        if rank == 4 and cls.kind != "lp":
            return (_nn.global_avg_pool2d if cls.kind == "avg" else _nn.global_max_pool2d)(x)
        axes = list(range(2, rank))
        if cls.kind == "avg":
            return _op.mean(x, axes, keepdims=True)
        if cls.kind == "max":
            return _op.max(x, axes, keepdims=True)
        p = float(attr.get("p", 2))
        dtype = ctx.dtype(x)
        total = _op.sum(_op.power(_op.abs(x), const(p, dtype)), axes, keepdims=True)
        return _op.power(total, const(1 / p, dtype))


@register("GlobalAveragePool")
class GlobalAveragePool(_GlobalPool):
    """Mean over every spatial axis."""

    kind = "avg"


@register("GlobalMaxPool")
class GlobalMaxPool(_GlobalPool):
    """Maximum over every spatial axis."""

    kind = "max"


@register("GlobalLpPool")
class GlobalLpPool(_GlobalPool):
    """``p``-norm over every spatial axis."""

    kind = "lp"


@register("Gemm")
class Gemm(OnnxOpConverter):
    """``alpha * A' B' + beta * C`` with ``A'``, ``B'`` optionally transposed: ``nn.dense`` plus scaling."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        a, b = inputs[0], inputs[1]
        c = inputs[2] if len(inputs) > 2 else None
        alpha, beta = attr.get("alpha", 1.0), attr.get("beta", 1.0)
        dtype = ctx.dtype(a)
        if attr.get("transA", 0):
            a = _op.transpose(a, (1, 0))
        if not attr.get("transB", 0):
            b = _op.transpose(b, (1, 0))
        out = _nn.dense(a, b)
        if alpha != 1.0:
            out = _op.multiply(out, const(alpha, dtype))
        if c is not None and beta != 0.0:
            out = _op.add(out, c if beta == 1.0 else _op.multiply(c, const(beta, dtype)))
        return out


def matmul(a, b, ctx):
    """numpy's ``matmul`` of two typed Relay tensors (1-D operands, broadcast batch axes)."""
    ashape, bshape = ctx.shape(a), ctx.shape(b)
    if len(ashape) > 1 and len(bshape) > 1 and any(is_any(d) for d in (ashape[-1], *bshape)):
        # a reduction or a right operand of sizes known only at run time: no reshape to fixed sizes
        if len(ashape) == len(bshape) == 3:
            return _nn.batch_matmul(a, b, transpose_b=False)
        return _op.einsum([a, b], "...mk,...kn->...mn")
    if len(bshape) == 1:  # a column: the product's last axis (of size 1) dropped
        return _op.squeeze(matmul(a, _op.expand_dims(b, 1), ctx), axis=[len(ashape) - 1])
    if len(bshape) == 2:
        if len(ashape) > 2:  # rows of every batch in one 2-D product: what the x86 GEMM schedule tiles
            k = ashape[-1]
            lead = ashape[:-1]
            dynamic = [d for d in lead if is_any(d)]
            rows = -1 if dynamic else math.prod(lead)
            flat = _nn.dense(_op.reshape(a, (rows, k)), _op.transpose(b, (1, 0)))
            if len(dynamic) <= 1:  # -1 stands for the one dimension known only at run time
                return _op.reshape(flat, tuple(-1 if is_any(d) else d for d in lead) + (bshape[1],))
            shape = _op.concatenate([_op.strided_slice(_op.shape_of(a, "int64"), [0], [len(lead)]),
                                     const([bshape[1]], "int64")], 0)
            return ctx.dynamic_op("dyn.reshape", "the rows")(flat, shape)
        return _nn.dense(a, _op.transpose(b, (1, 0)))
    squeeze_m = len(ashape) == 1
    if squeeze_m:
        a, ashape = _op.expand_dims(a, 0), (1,) + ashape
    if any(is_any(d) for d in (*ashape, *bshape)):  # batch sizes known only at run time
        out = _op.einsum([a, b], "...mk,...kn->...mn")
        return _op.squeeze(out, axis=[len(ashape) - 2]) if squeeze_m else out
    batch = broadcast_shapes(ashape[:-2], bshape[:-2])
    size = math.prod(batch)
    m, k, n = ashape[-2], ashape[-1], bshape[-1]

    def as_3d(x, shape, rows, cols):
        if math.prod(shape[:-2]) == 1:
            return _op.reshape(x, (1, rows, cols))
        if tuple(shape[:-2]) != tuple(batch):
            x = _op.broadcast_to(x, tuple(batch) + (rows, cols))
        return _op.reshape(x, (size, rows, cols))

    out = _nn.batch_matmul(as_3d(a, ashape, m, k), as_3d(b, bshape, k, n), transpose_b=False)
    return _op.reshape(out, tuple(batch) + ((n,) if squeeze_m else (m, n)))


@register("MatMul")
class MatMul(OnnxOpConverter):
    """numpy-style matrix product (see :func:`matmul`)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        return matmul(inputs[0], inputs[1], ctx)


def _einsum_terms(equation, shapes, ctx):
    """Input and output index strings of ``equation`` with ``...`` replaced by fresh upper-case letters."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ctx.error(f"equation {equation!r} names {len(terms)} operands, the node has {len(shapes)}")
    used = set(equation)
    fresh = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    width = max((len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes, strict=True) if "..." in t),
                default=0)
    ellipsis = "".join(fresh[:width])
    terms = [t.replace("...", ellipsis[width - (len(s) - len(t.replace("...", ""))):])
             for t, s in zip(terms, shapes, strict=True)]
    if arrow:
        out = rhs.replace("...", ellipsis)
    else:  # implicit output: the ellipsis, then the letters used once, in alphabetical order
        counts = {c: "".join(terms).count(c) for c in set("".join(terms))}
        out = ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ellipsis))
    for t, s in zip(terms, shapes, strict=True):
        if len(t) != len(s):
            raise ctx.error(f"einsum term {t!r} does not fit an operand of shape {s}")
    return terms, out


def _diagonal(x, term, ctx):
    """Take the diagonal of every letter ``term`` repeats (mask with the identity, sum one copy away)."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        p, q = term.index(c), term.index(c, term.index(c) + 1)
        shape = ctx.shape(x)
        eye = np.eye(shape[p], dtype=ctx.dtype(x)).reshape(
            [shape[p] if k in (p, q) else 1 for k in range(len(shape))])
        x = ctx.typed(_op.sum(_op.multiply(x, const(eye, ctx.dtype(x))), [q]))
        term = term[:q] + term[q + 1:]
    return x, term


def _sum_out(x, term, keep):
    """Sum the axes of ``x`` whose letters are not in ``keep``."""
    axes = [i for i, c in enumerate(term) if c not in keep]
    if not axes:
        return x, term
    return _op.sum(x, axes), "".join(c for c in term if c in keep)


def _contract(a, ta, b, tb, keep, sizes):
    """Contract two operands over their shared letters not in ``keep``; returns the result and its term."""
    batch = [c for c in ta if c in tb and c in keep]
    inner = [c for c in ta if c in tb and c not in keep]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]

    def arrange(x, term, order, groups):
        x = _op.transpose(x, [term.index(c) for c in order]) if list(term) != order else x
        return _op.reshape(x, tuple(math.prod(sizes[c] for c in g) for g in groups))

    a3 = arrange(a, ta, batch + left + inner, [batch, left, inner])
    b3 = arrange(b, tb, batch + inner + right, [batch, inner, right])
    out = _nn.batch_matmul(a3, b3, transpose_b=False)
    term = batch + left + right
    return _op.reshape(out, tuple(sizes[c] for c in term)), "".join(term)


@register("Einsum")
class Einsum(OnnxOpConverter):
    """Einstein summation: operands contracted pairwise with ``nn.batch_matmul`` (after summing letters only one
    operand has), then the result transposed into the output order."""

    @classmethod
    def _impl_v12(cls, inputs, attr, ctx):
        shapes = [ctx.shape(x) for x in inputs]
        terms, out = _einsum_terms(attr["equation"], shapes, ctx)
        inputs = list(inputs)
        for i, t in enumerate(terms):
            inputs[i], terms[i] = _diagonal(inputs[i], t, ctx)
        shapes = [ctx.shape(x) for x in inputs]
        sizes: dict = {}
        for t, s in zip(terms, shapes, strict=True):
            for c, d in zip(t, s, strict=True):
                if sizes.get(c, 1) not in (1, d) and d != 1:
                    raise ctx.error(f"index {c!r} has sizes {sizes[c]} and {d}")
                sizes[c] = max(sizes.get(c, 1), d)
        operands = list(inputs)
        for i, (x, t) in enumerate(zip(operands, terms, strict=True)):
            if any(ctx.shape(x)[k] != sizes[c] for k, c in enumerate(t)):
                operands[i] = _op.broadcast_to(x, tuple(sizes[c] for c in t))
        x, term = operands[0], terms[0]
        later = "".join(terms[1:]) + out
        x, term = _sum_out(x, term, later)
        for y, ty in zip(operands[1:], terms[1:], strict=True):
            later = later[len(ty):]
            keep = set(later)
            y, ty = _sum_out(y, ty, keep | set(term))
            x, term = _sum_out(x, term, keep | set(ty))
            x, term = _contract(x, term, y, ty, keep, sizes)
        x, term = _sum_out(x, term, out)
        return x if term == out else _op.transpose(x, [term.index(c) for c in out])
