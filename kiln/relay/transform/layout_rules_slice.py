"""The layout rule of ``strided_slice`` (TVM's ``StridedSliceInferCorrectLayout``).

Two kinds of new layout are followed:

- a permutation of the old one (``NHWC`` -> ``NCHW``): the begin/end/strides move with their axes (or, with
  ``axes``, the axes are renamed);
- the old layout with axes split (``NCHW`` -> ``NCHW4c``, the old name a prefix of the new one): a slice of a split
  axis becomes a slice of its outer part, which needs unit strides and bounds that are multiples of the factor.

Anything else (``NHWC`` -> ``NCHW16c``, a blocked layout back to a plain one) keeps the call in its old layout.
"""

from dataclasses import replace

from .infer_layout_utils import InferCorrectLayoutOutput, factor_of
from .layout_rules import register_rule


def _ints(values):
    return None if values is None else [None if v is None else int(v) for v in values]


def _permuted(attrs, old, new, shape, begin, end, strides):
    """New attributes when ``new`` permutes the axes of ``old``, or None."""
    if attrs.axes is not None:
        axes = [new.index_of(old[int(a)]) for a in attrs.axes]
        return replace(attrs, axes=tuple(axes), strides=attrs.strides if strides is None else tuple(strides))
    new_begin, new_end, new_strides = [], [], []
    for letter, _ in new.axes:
        index = old.index_of(letter)
        if index < 0:
            return None
        stride = strides[index] if strides is not None and index < len(strides) and strides[index] is not None else 1
        bg = begin[index] if index < len(begin) and begin[index] is not None else 0
        ed = end[index] if index < len(end) and end[index] is not None else int(shape[index])
        new_begin.append(bg)
        new_end.append(ed)
        new_strides.append(stride)
    return replace(attrs, begin=tuple(new_begin), end=tuple(new_end), strides=tuple(new_strides))


def _blocked_bounds(attrs, i, axis_index, shape, begin, end, strides, factor):
    """The bounds on the outer part of an axis split by ``factor``, or None when they do not fall on blocks."""
    if strides is not None and i < len(strides) and strides[i] is not None and strides[i] != 1:
        return None  # an arbitrary stride would pick elements inside blocks
    bg = begin[i] if begin[i] is not None else 0
    if end[i] is None:
        ed = int(shape[axis_index])
    elif attrs.slice_mode == "size":
        ed = int(shape[axis_index]) if end[i] < 0 else bg + end[i]
    else:
        ed = end[i]
    if bg % factor or ed % factor:
        return None
    if attrs.slice_mode == "size":  # the end stays a size (TVM writes the absolute end here, a bug)
        return bg // factor, (-1 if end[i] is None or end[i] < 0 else (ed - bg) // factor)
    return bg // factor, ed // factor


def _split_axes(attrs, old, new, shape, begin, end, strides):
    """New attributes when ``new`` splits axes of ``old``, or None."""
    new_begin, new_end = [], []
    if attrs.axes is not None:
        axes = [int(a) for a in attrs.axes]
        new_axes = []
        for i, old_index in enumerate(axes):
            letter = old[old_index]
            new_axes.append(new.index_of(letter))
            factor = factor_of(new, letter)
            bounds = (begin[i], end[i]) if factor == -1 else \
                _blocked_bounds(attrs, i, old_index, shape, begin, end, strides, factor)
            if bounds is None:
                return None
            new_begin.append(bounds[0])
            new_end.append(bounds[1])
        return replace(attrs, axes=tuple(new_axes), begin=tuple(new_begin), end=tuple(new_end))
    for i in range(len(begin)):
        factor = factor_of(new, old[i])
        bounds = (begin[i], end[i]) if factor == -1 else \
            _blocked_bounds(attrs, i, i, shape, begin, end, strides, factor)
        if bounds is None:
            return None
        new_begin.append(bounds[0])
        new_end.append(bounds[1])
    return replace(attrs, begin=tuple(new_begin), end=tuple(new_end))


@register_rule("strided_slice")
def strided_slice_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Slice in the new layout when it permutes or splits the old one (see the module docstring)."""
    old = old_in_layouts[0]
    fail = InferCorrectLayoutOutput([None], [None], attrs)
    if old is None or new_in_layouts is None:
        return InferCorrectLayoutOutput([old], [old], attrs)
    new = new_in_layouts[0]
    shape = old_in_types[0].shape
    begin, end, strides = _ints(attrs.begin), _ints(attrs.end), _ints(attrs.strides)
    if begin is None or end is None:
        return fail
    if attrs.slice_mode == "size" and strides is not None:
        strides = [1] * len(strides)
    if not old.name.startswith(new.name) and not new.name.startswith(old.name):
        if len(old.name) != len(new.name):
            return fail  # such as NCHW4c -> NHWC: not supported
        new_attrs = _permuted(attrs, old, new, shape, begin, end, strides)
    elif len(old.name) < len(new.name):
        new_attrs = _split_axes(attrs, old, new, shape, begin, end, strides)
    else:
        return InferCorrectLayoutOutput([old], [old], attrs)  # packed to unpacked: keep the old layout
    if new_attrs is None:
        return fail
    return InferCorrectLayoutOutput([new], [new], new_attrs)
