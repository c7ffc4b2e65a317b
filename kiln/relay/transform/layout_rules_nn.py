"""Layout rules (``FInferCorrectLayout``) of the nn, image and vision operators (TVM's rules in
``src/relay/op/nn/*.cc``, ``image/resize.cc``, ``vision/rcnn_op.cc``).

Convolutions declare their layouts and never follow their inputs: the rewriter transforms the inputs to what the
(possibly altered) call declares. Poolings, upsampling and resizing follow their input's new layout when it keeps
the spatial axes whole; pad, normalizations and l2_normalize move their axes into the new layout. prelu and dense read
their inputs in their original layouts, so a changed layout is transformed back before them.
"""

import dataclasses

from ...tir.layout import SCALAR, Layout
from ...tir.layout import layout as parse_layout
from .infer_layout_utils import InferCorrectLayoutOutput, factor_of
from .layout_rules import register_rule

_C = parse_layout("C")
_ROIS = Layout("N5", (("N", None),))  # TVM's name for the (num_roi, 5) boxes, which it never transforms


def _replace(attrs, **changes):
    return dataclasses.replace(attrs, **changes)


def _axis(axis, ndim) -> int:
    return axis + ndim if axis < 0 else axis


def _whole(lay: Layout, letters) -> bool:
    """Whether ``lay`` has every axis of ``letters`` and splits none of them."""
    return all(lay.index_of(a) >= 0 and factor_of(lay, a) == -1 for a in letters)


# ---- operators that declare their layouts ------------------------------------------------------------------------
@register_rule("nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv2d_transpose", "nn.conv3d_transpose",
               "nn.contrib_conv2d_NCHWc", "nn.contrib_depthwise_conv2d_NCHWc", "nn.conv2d_backward_weight",
               "nn.contrib_conv2d_gemm_without_weight_transform",
               "nn.contrib_conv2d_winograd_without_weight_transform", "image.dilation2d")
def conv_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """A convolution reads its data and kernel in its declared layouts, whatever its inputs come in."""
    return InferCorrectLayoutOutput([attrs.data_layout, attrs.kernel_layout],
                                    [getattr(attrs, "out_layout", "") or attrs.data_layout], attrs)


@register_rule("nn.deformable_conv2d")
def deformable_conv_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """The offsets are laid out as the data."""
    return InferCorrectLayoutOutput([attrs.data_layout, attrs.data_layout, attrs.kernel_layout],
                                    [attrs.out_layout or attrs.data_layout], attrs)


@register_rule("nn.correlation")
def correlation_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Both inputs in the declared layout."""
    return InferCorrectLayoutOutput([attrs.layout, attrs.layout], [attrs.layout], attrs)


@register_rule("vision.roi_align", "vision.roi_pool")
def roi_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """The data in the declared layout; the boxes as they are."""
    return InferCorrectLayoutOutput([attrs.layout, _ROIS], [attrs.layout], attrs)


@register_rule("nn.dense")
def dense_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """dense reads NC data and an NC weight."""
    return InferCorrectLayoutOutput(["NC", "NC"], ["NC"], attrs)


@register_rule("nn.contrib_dense_pack")
def dense_pack_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """The packed weight is in ``weight_layout``."""
    return InferCorrectLayoutOutput(["NC", attrs.weight_layout], ["NC"], attrs)


@register_rule("nn.prelu")
def prelu_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """prelu reads its data in the original layout (its ``axis`` is not moved) and a per-channel alpha."""
    return InferCorrectLayoutOutput([old_in_layouts[0], _C], [old_in_layouts[0]], attrs)


# ---- operators that follow their input's layout ------------------------------------------------------------------
_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}
_POOLS = {"nn.max_pool1d": 1, "nn.avg_pool1d": 1, "nn.adaptive_avg_pool1d": 1, "nn.adaptive_max_pool1d": 1,
          "nn.max_pool2d": 2, "nn.avg_pool2d": 2, "nn.global_avg_pool2d": 2, "nn.global_max_pool2d": 2,
          "nn.adaptive_avg_pool2d": 2, "nn.adaptive_max_pool2d": 2, "nn.max_pool3d": 3, "nn.avg_pool3d": 3,
          "nn.adaptive_avg_pool3d": 3, "nn.adaptive_max_pool3d": 3}


def _pool_layout(spatial):
    def pool_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
        """Pooling computes in its input's new layout (unless ``out_layout`` fixes it) when that layout keeps the
        pooled axes whole (TVM's ``PoolInferCorrectLayout``, which does not check that)."""
        if not attrs.out_layout and new_in_layouts is not None and _whole(new_in_layouts[0], spatial):
            attrs = _replace(attrs, layout=new_in_layouts[0].name)
        return InferCorrectLayoutOutput([attrs.layout], [attrs.layout], attrs)

    return pool_layout


for _name, _dims in _POOLS.items():
    register_rule(_name)(_pool_layout(_SPATIAL[_dims]))


def _upsampling_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Upsampling follows a new layout that keeps H, W (and D) whole and where they were."""
    if new_in_layouts is not None:
        raw, new = parse_layout(attrs.layout), new_in_layouts[0]
        spatial = "DHW" if raw.index_of("D") >= 0 else "HW"
        if all(new.index_of(a) == raw.index_of(a) for a in spatial) and _whole(new, spatial):
            attrs = _replace(attrs, layout=new.name)
    n_inputs = len(old_in_layouts)  # the dynamic forms also take their scales as tensors
    return InferCorrectLayoutOutput([attrs.layout] + [SCALAR] * (n_inputs - 1), [attrs.layout], attrs)


register_rule("nn.upsampling", "nn.upsampling3d", "dyn.nn.upsampling", "dyn.nn.upsampling3d")(_upsampling_layout)


@register_rule("image.resize1d", "image.resize2d")
def resize_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Resizing follows a new layout of the same rank when the call's layout is the input's old one."""
    if new_in_layouts is not None:
        raw, new, old = parse_layout(attrs.layout), new_in_layouts[0], old_in_layouts[0]
        spatial = "W" if raw.index_of("H") < 0 else "HW"
        if new != old and raw == old and new.ndim == old.ndim and _whole(new, spatial):
            attrs = _replace(attrs, layout=new.name)
    return InferCorrectLayoutOutput([attrs.layout], [attrs.layout], attrs)


@register_rule("nn.pad")
def pad_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Pad the same (moved) axes; a split axis must not be padded (TVM's ``PadInferCorrectLayout``)."""
    ret = old_in_layouts[0]
    if new_in_layouts is not None and old_in_layouts[0] is not None:
        width = dict(zip((a for a, _ in old_in_layouts[0].axes), attrs.pad_width, strict=True))
        new_width, modified = [], True
        for letter, factor in new_in_layouts[0].axes:
            if factor is None and letter in width:
                new_width.append(width[letter])
                continue
            primal = letter.upper()
            if primal not in width:
                modified = False
                break
            new_width.append(width[primal] if factor is None else (0, 0))
            if any(int(w) != 0 for w in width[primal]):
                modified = False  # padding along an axis the new layout splits
        if modified:
            ret = new_in_layouts[0]
            attrs = _replace(attrs, pad_width=tuple(tuple(w) for w in new_width))
    return InferCorrectLayoutOutput([ret, SCALAR], [ret], attrs)


def _moved_axes(attrs, new_in_layouts, old_in_layouts, old_in_types, names):
    """``(layout, attrs)`` with the attributes ``names`` (axes of the input) moved into the new layout, when it does
    not split them; else the old layout."""
    ret = old_in_layouts[0]
    if new_in_layouts is not None and ret is not None:
        new, ndim = new_in_layouts[0], len(old_in_types[0].shape)
        changes = {}
        for name in names:
            value = getattr(attrs, name)
            axes = [value] if isinstance(value, int) else list(value)
            letters = [ret[_axis(int(a), ndim)] for a in axes]
            if any(factor_of(new, a) != -1 or new.index_of(a) < 0 for a in letters):
                return ret, attrs  # TVM moves the axis onto the outer part of a split axis: wrong; keep the old
            moved = [new.index_of(a) for a in letters]
            changes[name] = moved[0] if isinstance(value, int) else tuple(moved)
        return new, _replace(attrs, **changes)
    return ret, attrs


@register_rule("nn.batch_norm")
def batch_norm_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """batch_norm normalizes the moved channel axis; its parameters and statistics are per channel."""
    ret, attrs = _moved_axes(attrs, new_in_layouts, old_in_layouts, old_in_types, ("axis",))
    return InferCorrectLayoutOutput([ret, _C, _C, _C, _C], [ret, _C, _C], attrs)


@register_rule("nn.layer_norm", "nn.instance_norm")
def normalization_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """layer_norm and instance_norm normalize along the moved axis; gamma and beta are per channel."""
    ret, attrs = _moved_axes(attrs, new_in_layouts, old_in_layouts, old_in_types, ("axis",))
    return InferCorrectLayoutOutput([ret, _C, _C], [ret], attrs)


@register_rule("nn.l2_normalize")
def l2_normalize_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """l2_normalize normalizes along the moved axes."""
    ret, attrs = _moved_axes(attrs, new_in_layouts, old_in_layouts, old_in_types, ("axis",))
    return InferCorrectLayoutOutput([ret], [ret], attrs)


@register_rule("nn.bias_add")
def bias_add_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """bias_add adds along the moved axis when the new layout keeps it whole. (TVM has no rule: its passes run
    CanonicalizeOps first, which makes bias_add a broadcast add; kiln follows it also when called directly.)"""
    ret = old_in_layouts[0]
    if ret is None:
        return InferCorrectLayoutOutput([None, None], [None], attrs)
    ret, attrs = _moved_axes(attrs, new_in_layouts, old_in_layouts, old_in_types, ("axis",))
    letter = ret[_axis(attrs.axis, ret.ndim)]
    return InferCorrectLayoutOutput([ret, parse_layout(letter.upper())], [ret], attrs)
