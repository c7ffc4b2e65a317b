"""Converters of ONNX reductions and index-producing operators: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/
SumSquare, ArgMax, ArgMin, TopK, CumSum, CumProd.

Reductions take ``axes`` as an attribute until the opset where they became an optional input (13 for ReduceSum,
18 for the others); no axes means every axis, or the identity when ``noop_with_empty_axes`` is set. ONNX returns
int64 indices, Relay int32 (argmax) or the requested dtype (topk): the converters cast or ask for int64.
"""

import numpy as np

from ... import op as _op
from . import dynamic
from .common import OnnxOpConverter, const, register


def _reduce_converter(build, axes_input_since):
    class Reduce(OnnxOpConverter):
        """A reduction over ``axes`` (``keepdims`` defaults to 1)."""

        @classmethod
        def _impl_v1(cls, inputs, attr, ctx):
            return cls._reduce(inputs[0], attr.get("axes"), attr, ctx)

        @classmethod
        def _from_input(cls, inputs, attr, ctx):
            given = inputs[1] if len(inputs) > 1 else None
            if given is not None and 0 in ctx.shape(given):
                given = None  # an empty axes tensor is no axes, whatever computed it
            axes = None if given is None else ctx.value_or_none(given, "axes")
            if given is not None and axes is None:  # known only at run time: one reduction per set of axes
                cases = dynamic.axis_sets(given, ctx.ndim(inputs[0]), ctx)
                return dynamic.choose([(cond, cls._reduce(inputs[0], list(a), attr, ctx)) for a, cond in cases],
                                      ctx, "axes")
            return cls._reduce(inputs[0], None if axes is None else axes.reshape(-1).tolist(), attr, ctx)

        @staticmethod
        def _reduce(x, axes, attr, ctx):
            if not axes:
                if attr.get("noop_with_empty_axes", 0):
                    return x
                axes = None
            return build(x, None if axes is None else [int(a) for a in axes], bool(attr.get("keepdims", 1)), ctx)

    setattr(Reduce, f"_impl_v{axes_input_since}", Reduce._from_input)
    return Reduce


def _logsumexp(x, axes, keepdims, ctx):
    """``log(sum(exp(x)))`` computed as ``m + log(sum(exp(x - m)))`` with ``m`` the maximum, which cannot overflow."""
    peak = _op.max(x, axes, keepdims=True)
    total = _op.sum(_op.exp(_op.subtract(x, peak)), axes, keepdims=keepdims)
    return _op.add(_op.log(total), peak if keepdims else _op.squeeze(peak, axes))


def _extreme(build, infinity):
    """Relay's max (min) of floats starts from the lowest (highest) finite value, ONNX's from -inf (+inf): the
    finite bound marks rows that held only infinities (or nothing), which ONNX reports as infinite."""

    def reduce(x, axes, keepdims, ctx):
        out = build(x, axes, keepdims)
        dtype = ctx.dtype(x)
        if not dtype.startswith("float"):
            return out
        bound = np.finfo(dtype).min if infinity < 0 else np.finfo(dtype).max
        return _op.where(_op.equal(out, const(bound, dtype)), const(infinity, dtype), out)

    return reduce


_REDUCTIONS = {
    "ReduceSum": (lambda x, a, k, ctx: _op.sum(x, a, k), 13),
    "ReduceMean": (lambda x, a, k, ctx: _op.mean(x, a, k), 18),
    "ReduceMax": (_extreme(_op.max, -np.inf), 18),
    "ReduceMin": (_extreme(_op.min, np.inf), 18),
    "ReduceProd": (lambda x, a, k, ctx: _op.prod(x, a, k), 18),
    "ReduceL1": (lambda x, a, k, ctx: _op.sum(_op.abs(x), a, k), 18),
    "ReduceL2": (lambda x, a, k, ctx: _op.sqrt(_op.sum(_op.multiply(x, x), a, k)), 18),
    "ReduceSumSquare": (lambda x, a, k, ctx: _op.sum(_op.multiply(x, x), a, k), 18),
    "ReduceLogSum": (lambda x, a, k, ctx: _op.log(_op.sum(x, a, k)), 18),
    "ReduceLogSumExp": (_logsumexp, 18),
}
for _name, (_build, _since) in _REDUCTIONS.items():
    register(_name)(_reduce_converter(_build, _since))


def _arg_converter(build):
    class ArgReduce(OnnxOpConverter):
        """The int64 index of the extreme element along ``axis`` (0); ``select_last_index`` from opset 12."""

        @classmethod
        def _impl_v1(cls, inputs, attr, ctx):
            index = build(inputs[0], axis=attr.get("axis", 0), keepdims=bool(attr.get("keepdims", 1)),
                          select_last_index=bool(attr.get("select_last_index", 0)))
            return _op.cast(index, "int64")

    return ArgReduce


register("ArgMax")(_arg_converter(_op.argmax))
register("ArgMin")(_arg_converter(_op.argmin))


@register("TopK")
class TopK(OnnxOpConverter):
    """The ``k`` largest (or smallest, ``largest=0``) elements along ``axis`` and their int64 indices, sorted."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        return _op.topk(inputs[0], attr["k"], attr.get("axis", -1), dtype="int64")

    @classmethod
    def _impl_v10(cls, inputs, attr, ctx):
        k = ctx.value_or_none(inputs[1], "k")
        if k is None:  # known only at run time: dyn.topk
            k = _op.reshape(inputs[1], ())
            out = ctx.dynamic_op("dyn.topk", "k")(inputs[0], k, attr.get("axis", -1), "both",
                                                   not attr.get("largest", 1), "int64")
            return [out[0], out[1]]
        k = int(k.reshape(-1)[0])
        if k < 1:
            raise ctx.error(f"k must be positive, got {k}")
        return _op.topk(inputs[0], k, attr.get("axis", -1), is_ascend=not attr.get("largest", 1), dtype="int64")


def _scan_converter(build):
    class Scan(OnnxOpConverter):
        """Cumulative sum or product along a constant ``axis``; ``exclusive`` leaves out each element, ``reverse``
        runs from the end."""

        @classmethod
        def _impl_v11(cls, inputs, attr, ctx):
            x = inputs[0]
            axis = ctx.value_or_none(inputs[1], "axis")
            if axis is None:  # known only at run time: one scan per axis
                cases = dynamic.axis_choices(inputs[1], ctx.ndim(x), ctx)
                return dynamic.choose([(cond, cls._scan(x, a, attr)) for a, cond in cases], ctx, "axis")
            return cls._scan(x, ctx.axis(axis.reshape(-1)[0], ctx.ndim(x)), attr)

        @staticmethod
        def _scan(x, axis, attr):
            reverse = attr.get("reverse", 0)
            if reverse:
                x = _op.reverse(x, axis)
            out = build(x, axis, exclusive=bool(attr.get("exclusive", 0)))
            return _op.reverse(out, axis) if reverse else out

    return Scan


register("CumSum")(_scan_converter(_op.cumsum))
register("CumProd")(_scan_converter(_op.cumprod))

