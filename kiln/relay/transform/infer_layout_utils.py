"""The layout-inference protocol of the layout rewriter (TVM's ``infer_layout_utils``).

An operator takes part in AlterOpLayout and ConvertLayout through its op attribute ``FInferCorrectLayout``: a function
``(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput``. It is called twice per call:

- with ``new_in_layouts=None``, to learn the layouts the call reads its inputs in and writes its output in, given the
  layouts its producers wrote them in (``old_in_layouts``, None where unknown);
- with ``new_in_layouts`` (the layouts the rewritten producers now write), to adapt: the returned input layouts are
  the ones the call wants (the rewriter transforms the inputs that arrive otherwise), the output layouts are the ones
  the call then writes, and ``new_attrs`` the call's attributes fitted to them (a moved ``axis``, a new ``layout``).

A layout is a :class:`kiln.tir.Layout`, or None: undefined. A rule that cannot infer returns None for a layout; the
rewriter then leaves the call in its original layouts. :func:`elemwise_arbitrary_layout` and
:func:`binary_broadcast_layout` are the rules of element-wise and broadcasting operators; the per-operator rules are
registered in :mod:`.layout_rules` and :mod:`.layout_rules_nn`.
"""

import dataclasses

from ...error import KilnError
from ...tir.layout import Layout, from_axes
from ...tir.layout import layout as parse_layout

__all__ = ["InferCorrectLayoutOutput", "as_layout", "elemwise_arbitrary_layout", "binary_broadcast_layout",
           "adjust_subordinate_factors", "isomorphic", "try_transform_like", "factor_of"]


def as_layout(value) -> Layout | None:
    """A layout from what a rule may return: a Layout, a name (``""``: undefined, as TVM's ``Layout("")``) or None."""
    if value is None or isinstance(value, Layout):
        return value
    if isinstance(value, str):
        return parse_layout(value) if value else None
    raise KilnError(f"FInferCorrectLayout: expected a layout, got {value!r}")


@dataclasses.dataclass(frozen=True)
class InferCorrectLayoutOutput:
    """What an ``FInferCorrectLayout`` returns: the layouts of the inputs (a tuple argument counts one per field) and
    of the outputs, and the attributes that fit them."""

    input_layouts: tuple
    output_layouts: tuple
    new_attrs: object

    def __init__(self, input_layouts, output_layouts, new_attrs):
        object.__setattr__(self, "input_layouts", tuple(as_layout(lay) for lay in input_layouts))
        object.__setattr__(self, "output_layouts", tuple(as_layout(lay) for lay in output_layouts))
        object.__setattr__(self, "new_attrs", new_attrs)


def factor_of(lay: Layout, letter: str) -> int:
    """The split factor of ``letter``'s primal axis in ``lay`` (the product of its sub-axes), or -1 when it is not
    split (TVM's ``FactorOf``)."""
    return lay.factor_of(letter.upper()) if lay.sub_axes(letter.upper()) else -1


def _primal(letter: str) -> bool:
    return letter.isupper()


def elemwise_arbitrary_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Element-wise operators compute in any layout: the (first) input's new layout, else the first known old one."""
    ret = None
    if new_in_layouts is not None:
        ret = new_in_layouts[0]
    else:
        ret = next((lay for lay in old_in_layouts if lay is not None), None)
    return InferCorrectLayoutOutput([ret] * len(old_in_layouts), [ret], attrs)


def adjust_subordinate_factors(src: Layout, old: Layout, old_shape) -> Layout:
    """``src`` with each split factor set to 1 where the tensor (of ``old_shape`` in layout ``old``) has size 1 on
    that axis or lacks it: a broadcast operand of ``NCHW16c`` with one channel is ``NCHW1c`` (TVM's
    ``AdjustSubordinateFactors``)."""
    axes = []
    for letter, factor in src.axes:
        if factor is not None:
            primal = letter.upper()
            at = old.index_of(primal)
            one = at < 0
            if not one:
                size = old_shape[at]
                # a size of 1 broadcasts only where the old layout did not split the axis already
                one = isinstance(size, int) and size == 1 and old.index_of(letter) < 0
            factor = 1 if one else max(factor_of(src, primal), 1)
        axes.append((letter, factor))
    return from_axes(axes)


def isomorphic(lhs: Layout, rhs: Layout) -> bool:
    """Whether two layouts have the same structure, differing only in the names of their axes."""
    if lhs.ndim != rhs.ndim:
        return False
    to: dict[str, str] = {}
    back: dict[str, str] = {}
    for (la, lf), (ra, _) in zip(lhs.axes, rhs.axes, strict=True):
        if _primal(la) != _primal(ra) or to.setdefault(la, ra) != ra or back.setdefault(ra, la) != la:
            return False
        if lf is not None and factor_of(lhs, la) != factor_of(rhs, ra):
            return False
    return True


def try_transform_like(old: Layout, ref_old: Layout, ref_new: Layout) -> Layout | None:
    """``old`` transformed as ``ref_old`` was into ``ref_new``, the two describing broadcastable tensors (the one of
    lower rank is aligned to the right): ``NW`` like ``NC -> NC1c`` is ``NW1w``. None when they are not compatible
    (TVM's ``TryTransformLike``)."""
    large, small = (ref_old, old) if ref_old.ndim > old.ndim else (old, ref_old)
    large_sub = from_axes(large.axes[large.ndim - small.ndim:])
    rest = from_axes(large.axes[:large.ndim - small.ndim])
    if any(large_sub.index_of(a.upper()) >= 0 or large_sub.index_of(a.lower()) >= 0 for a, _ in rest.axes):
        return None
    if not isomorphic(large_sub, small):
        return None
    if old.ndim == 0:
        return old
    mapping: dict[str, str] = {}
    used: set[str] = set()
    for (ref_axis, _), (axis, _) in zip(reversed(ref_old.axes), reversed(old.axes), strict=False):
        mapping[ref_axis.upper()] = axis.upper()
        used.add(axis.upper())
    for ref_axis, _ in reversed(ref_old.axes):
        name = ref_axis.upper()
        if name not in mapping:
            free = name if name not in used else next(chr(c) for c in range(65, 91) if chr(c) not in used)
            mapping[name] = free
            used.add(free)
    axes = []
    for letter, factor in ref_new.axes:
        renamed = mapping.get(letter.upper())
        if renamed is None:
            return None
        axes.append((renamed if _primal(letter) else renamed.lower(), factor))
    return from_axes(axes)


def _broadcast_layouts(new_in_layouts, old_in_layouts, old_in_types):
    """TVM's ``BinaryBroadcastLayoutHelper``: ``(input layouts, output layouts)``."""
    shapes = [t.shape for t in old_in_types]
    old_large = 0 if len(shapes[0]) >= len(shapes[1]) else 1
    layouts = list(old_in_layouts)
    fail = ([None, None], [None])
    if layouts[0] is None and layouts[1] is None:
        out = fail
    elif layouts[0] is None or layouts[1] is None:
        known = 0 if layouts[0] is not None else 1
        unknown = 1 - known
        if len(shapes[known]) >= len(shapes[unknown]):
            # the smaller tensor is read in the trailing part of the known layout
            layouts[unknown] = layouts[known].sub_layout(len(shapes[known]) - len(shapes[unknown]),
                                                         len(shapes[unknown]))
            out = (list(layouts), [layouts[known]])
        else:
            out = fail
    else:
        out = (list(layouts), [layouts[old_large]])
    if new_in_layouts is None:
        return out
    # after rewriting: transform the smaller operand the way the larger one was, so they still broadcast
    ret = new_in_layouts[old_large]
    large = 0 if new_in_layouts[0].ndim_primal >= new_in_layouts[1].ndim_primal else 1
    small = 1 - large
    if layouts[small] is None or layouts[large] is None:
        return fail
    target = try_transform_like(layouts[small], layouts[large], new_in_layouts[large])
    if target is None:
        return fail
    layouts[small] = adjust_subordinate_factors(target, layouts[small], shapes[small])
    layouts[large] = new_in_layouts[large]
    return layouts, [ret]


def binary_broadcast_layout(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """Broadcasting binary operators: the larger operand's layout, the smaller one transformed alike."""
    inputs, outputs = _broadcast_layouts(new_in_layouts, old_in_layouts, old_in_types)
    return InferCorrectLayoutOutput(inputs, outputs, attrs)

