"""``BijectiveLayout`` (TVM's ``tir.bijective_layout``): the index and shape maps between two layouts of the same
primal axes, such as ``NCHW`` and ``NCHW16c``.

Both directions go through the primal (logical) coordinates: a layout's index gives each primal axis the value
``outer * factor + sub_1 * stride_1 + ...`` (a sub-axis's stride is the product of the factors of the sub-axes after
it), and a primal coordinate gives each axis of the other layout ``floordiv`` / ``floormod`` of it.
"""

from . import op as _op
from .expr import convert
from .layout import Layout, layout

_UNDEFINED = ("", "__undef__")


def _parse(value):
    if isinstance(value, Layout):
        return value
    return None if value in _UNDEFINED else layout(str(value))


def _strides(lay, primal_axis):
    """``{position: stride}`` of the sub-axes of ``primal_axis`` in ``lay`` (the innermost has stride 1)."""
    subs = [i for i, (a, f) in enumerate(lay.axes) if f is not None and a == primal_axis.lower()]
    strides, stride = {}, 1
    for i in reversed(subs):
        strides[i] = stride
        stride *= lay.axes[i][1]
    return strides


def _index_to_primal(lay, index):
    primal = {}
    for a, f in lay.axes:
        if f is None:
            primal[a] = _op.multiply(convert(index[lay.index_of(a)]), lay.factor_of(a))
    for a, f in lay.axes:
        if f is None:
            for i, stride in _strides(lay, a).items():
                primal[a] = _op.add(primal[a], _op.multiply(convert(index[i]), stride))
    return primal


def _index_from_primal(lay, primal):
    out = []
    for i, (a, f) in enumerate(lay.axes):
        if f is None:
            factor = lay.factor_of(a)
            out.append(_op.floordiv(primal[a], factor) if factor != 1 else primal[a])
        else:
            stride = _strides(lay, a.upper())[i]
            out.append(_op.floormod(_op.floordiv(primal[a.upper()], stride), f))
    return out


class BijectiveLayout:
    """The two-way map between layouts ``src`` and ``dst`` (build with :func:`bijective_layout`).

    Examples
    --------
    >>> b = bijective_layout("NCHW", "NCHW16c")
    >>> [int(d) for d in b.forward_shape((1, 32, 7, 7))]
    [1, 2, 7, 7, 16]
    """

    def __init__(self, src: Layout, dst: Layout):
        self.src_layout, self.dst_layout = src, dst

    def forward_index(self, index):
        """The index in ``dst`` of the element at ``index`` in ``src``."""
        return _index_from_primal(self.dst_layout, _index_to_primal(self.src_layout, list(index)))

    def backward_index(self, index):
        """The index in ``src`` of the element at ``index`` in ``dst``."""
        return _index_from_primal(self.src_layout, _index_to_primal(self.dst_layout, list(index)))

    def forward_shape(self, shape):
        """The shape in ``dst`` of a tensor of ``shape`` in ``src``."""
        return [convert(d) for d in self.src_layout.convert_shape(tuple(_int(d) for d in shape), self.dst_layout)]

    def backward_shape(self, shape):
        """The shape in ``src`` of a tensor of ``shape`` in ``dst``."""
        return [convert(d) for d in self.dst_layout.convert_shape(tuple(_int(d) for d in shape), self.src_layout)]


def _int(dim):
    value = getattr(dim, "value", dim)
    return value if isinstance(value, int) else dim


def bijective_layout(src_layout, dst_layout):
    """The :class:`BijectiveLayout` between two layouts, or None when either is undefined (``""``) or they do not
    have the same primal axes (TVM returns its undefined layout then)."""
    src, dst = _parse(src_layout), _parse(dst_layout)
    if src is None or dst is None or not src.axes or sorted(src.primal) != sorted(dst.primal):
        return None
    return BijectiveLayout(src, dst)
