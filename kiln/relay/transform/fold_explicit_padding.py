"""FoldExplicitPadding: an ``nn.pad`` feeding a convolution or a pool becomes that op's own padding (TVM's pass).

Frontends often emit padding as a separate ``nn.pad`` (ONNX's explicit pads, TensorFlow's SAME emulation); the
convolutions and pools pad implicitly, so the separate op is a wasted copy of the input. The pad folds when it
pads only spatial axes (``D``, ``H``, ``W`` of the op's layout) with a constant, and that constant is what the op
pads with itself:

- ``nn.conv1d/2d/3d`` and ``nn.avg_pool1d/2d/3d``: zero (an average pool must then count the padding: it folds
  when ``count_include_pad`` is set, or when the pool has no padding of its own, and the result counts it);
- ``nn.max_pool1d/2d/3d``: the lowest value of the pad value's dtype;
- ``qnn.conv2d``: its input zero point (compared by value; TVM compares the constants structurally, so a float
  pad value equal to an integer zero point folds here and not there).

The padding is added to the op's, ``(before..., after...)`` per spatial axis in layout order (TVM's
``fold_explicit_padding.cc``).
"""

import dataclasses
from dataclasses import dataclass

import numpy as np

from ...ir.transform import PassInfo, register_pass
from ..expr import Call, Constant
from .function_pass import FunctionPass
from .rewrite import RuleTable, rewrite

RULES = RuleTable()

_CONVS = ("nn.conv1d", "nn.conv2d", "nn.conv3d")
_AVG_POOLS = ("nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d")
_MAX_POOLS = ("nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d")


def _scalar(expr):
    """The value of a scalar constant, or None."""
    if not isinstance(expr, Constant) or expr.data.numpy().size != 1:
        return None
    return expr.data.numpy().reshape(()).item()


def _spatial_padding(pad_attrs, layout: str):
    """The pad's widths as an op's ``padding`` (befores, then afters, of the spatial axes), or None when it pads
    a non-spatial axis, crops, or does not match the layout."""
    widths = pad_attrs.pad_width
    if len(layout) != len(widths) or any(w < 0 for pair in widths for w in pair):
        return None
    if any(axis not in "DHW" and pair != (0, 0) for axis, pair in zip(layout, widths, strict=True)):
        return None
    spatial = [pair for axis, pair in zip(layout, widths, strict=True) if axis in "DHW"]
    return tuple(pair[0] for pair in spatial) + tuple(pair[1] for pair in spatial)


def _folded_attrs(pad, attrs, layout_field: str):
    """``attrs`` with the pad's widths added to its padding, or None when the pad cannot be expressed."""
    padding = _spatial_padding(pad.attrs, getattr(attrs, layout_field))
    if padding is None or len(padding) != len(attrs.padding):
        return None
    return dataclasses.replace(attrs, padding=tuple(int(a) + b for a, b in zip(attrs.padding, padding, strict=True)))


def _min_value(dtype: str):
    """The lowest finite value of ``dtype`` (what a max pool pads with)."""
    kind = np.dtype(dtype)
    return float(np.finfo(kind).min) if np.issubdtype(kind, np.floating) else int(np.iinfo(kind).min)


def _constant_pad(call):
    """``(pad, pad_value)`` when ``call``'s first argument is a constant-mode ``nn.pad`` of a constant, else None."""
    pad = _constant_mode_pad(call.args[0])
    value = None if pad is None else _scalar(pad.args[1])
    return None if value is None else (pad, value)


def _constant_mode_pad(expr):
    """``expr`` when it is an ``nn.pad`` in constant mode, else None."""
    if isinstance(expr, Call) and getattr(expr.op, "name", None) == "nn.pad" \
            and getattr(expr.attrs, "pad_mode", None) == "constant":
        return expr
    return None


@RULES.register(*_CONVS)
def fold_pad_into_conv(call):
    """conv(pad(x, 0), w) -> conv(x, w) with the pad's widths added to the convolution's padding."""
    found = _constant_pad(call)
    if found is None or found[1] != 0:
        return None
    attrs = _folded_attrs(found[0], call.attrs, "data_layout")
    return None if attrs is None else Call(call.op, (found[0].args[0], call.args[1]), attrs, span=call.span)


@RULES.register(*_AVG_POOLS)
def fold_pad_into_avg_pool(call):
    """avg_pool(pad(x, 0)) -> avg_pool(x) padding and counting the pad's zeros."""
    found = _constant_pad(call)
    if found is None or found[1] != 0:
        return None
    if not call.attrs.count_include_pad and any(int(p) != 0 for p in call.attrs.padding):
        return None  # the pool's own padding is not counted, the pad's would have to be: not one attribute
    attrs = _folded_attrs(found[0], call.attrs, "layout")
    if attrs is None:
        return None
    return Call(call.op, (found[0].args[0],), dataclasses.replace(attrs, count_include_pad=True), span=call.span)


@RULES.register(*_MAX_POOLS)
def fold_pad_into_max_pool(call):
    """max_pool(pad(x, lowest)) -> max_pool(x) with the pad's widths added to the pool's padding."""
    found = _constant_pad(call)
    if found is None or found[1] != _min_value(found[0].args[1].data.dtype):
        return None
    attrs = _folded_attrs(found[0], call.attrs, "layout")
    return None if attrs is None else Call(call.op, (found[0].args[0],), attrs, span=call.span)


def fold_pad_into_qnn_conv2d(call):
    """qnn.conv2d(pad(x, zp), w, zp, ...) -> qnn.conv2d(x, w, zp, ...) padding with the zero point itself."""
    pad = _constant_mode_pad(call.args[0])  # TVM does not check the mode here: it folds an edge padding too
    if pad is None:
        return None
    value, zero_point = _scalar(pad.args[1]), _scalar(call.args[2])
    if value is None or zero_point is None or value != zero_point:
        return None
    attrs = _folded_attrs(pad, call.attrs, "data_layout")
    return None if attrs is None else Call(call.op, (pad.args[0], *call.args[1:]), attrs, span=call.span)


def fold_explicit_padding(expr, mod=None):
    """``expr`` with every foldable ``nn.pad`` merged into the convolution or pool it feeds."""
    if "qnn.conv2d" not in RULES:
        # the quantized operators register when kiln.relay.qnn is imported, after the passes
        from ..qnn.op import qnn  # noqa: F401

        RULES.add("qnn.conv2d", fold_pad_into_qnn_conv2d)
    return rewrite(expr, RULES, mod=mod)


@register_pass("FoldExplicitPadding")
@dataclass(frozen=True)
class FoldExplicitPadding(FunctionPass):
    """Merge explicit ``nn.pad`` ops into the padding of the convolutions and pools they feed."""

    info = PassInfo(0, "FoldExplicitPadding", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return fold_explicit_padding(func, mod)
