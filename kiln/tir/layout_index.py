"""Index maps between two layouts of the same primal axes, such as ``NCHW`` and ``NCHW16c`` (what
``BijectiveLayout.forward_index``/``backward_index`` compute).

Both directions go through the primal (logical) coordinates: a layout's index gives each primal axis the value
``outer * factor + sub_1 * stride_1 + ...`` (a sub-axis's stride is the product of the factors of the sub-axes after
it), and a primal coordinate gives each axis of the other layout ``floordiv`` / ``floormod`` of it.
"""

from . import op as _op
from .expr import convert


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


def convert_index(src, dst, index):
    """The index in layout ``dst`` of the element at ``index`` in layout ``src`` (same primal axes)."""
    return _index_from_primal(dst, _index_to_primal(src, list(index)))
