"""Padding (TVM's ``topi/nn/pad.py``): ``pad`` with ``constant``, ``edge`` and ``reflect`` modes.

An output index ``i`` along an axis padded by ``(before, after)`` reads input position ``p = i - before``:

* ``constant``: ``p`` itself where ``0 <= p < n``, else the pad value. The read is under ``if_then_else``, which
  evaluates only the taken branch, so no out-of-bounds address is ever loaded;
* ``edge``: ``p`` clamped into ``[0, n)``;
* ``reflect``: the mirror image without repeating the edge, repeated as numpy does for pads wider than the axis:
  with period ``2 (n - 1)``, ``q = p mod period`` and the position is ``q`` when ``q < n``, else ``period - q``.

A negative width crops: ``p`` then starts inside the input (or the output ends before the input does), and that
side needs no bound check. Axes without padding are read directly, so the bound checks only cover padded sides.
The result is tagged ``injective,pad``; schedules inline it into its consumer (a convolution reads the padded value
on the fly).
"""

from ...error import OpAttributeInvalid
from ...te.operation import compute
from ...tir import expr as E
from ...tir import intrin as _intrin
from ...tir import op as _op
from .. import tag as _tag
from ..elemwise import cast_expr
from ..utils import get_const_tuple

__all__ = ["pad", "has_padding"]


def pad(data, pad_before, pad_after=None, pad_value=0.0, name="PadInput", pad_mode="constant"):
    """Pad ``data`` by ``pad_before``/``pad_after`` elements per axis.

    Parameters
    ----------
    data : te.Tensor
    pad_before : sequence of int
        Elements added before each axis (shorter sequences pad the leading axes); a negative number crops. A width
        may be an expression of symbolic sizes (its reads are guarded).
    pad_after : sequence of int, optional
        Elements added after each axis (default: ``pad_before``).
    pad_value : number or PrimExpr
        The fill value of ``constant`` mode (converted to ``data``'s dtype).
    pad_mode : str
        ``constant``, ``edge`` or ``reflect``.

    Returns
    -------
    out : te.Tensor
    """
    shape = get_const_tuple(data.shape)
    ndim = len(shape)
    pad_after = pad_before if pad_after is None else pad_after
    before = [_width(v) for v in pad_before] + [0] * (ndim - len(pad_before))
    after = [_width(v) for v in pad_after] + [0] * (ndim - len(pad_after))
    out_shape = [d + b + a for d, b, a in zip(shape, before, after, strict=True)]
    if len(before) != ndim or len(after) != ndim or any(isinstance(d, int) and d < 0 for d in out_shape):
        raise OpAttributeInvalid(f"topi.pad: pad widths {pad_before}/{pad_after} do not fit a tensor of shape {shape}")
    if pad_mode not in ("constant", "edge", "reflect"):
        raise OpAttributeInvalid(f"topi.pad: pad_mode must be constant, edge or reflect, got {pad_mode!r}")
    if isinstance(pad_value, E.PrimExpr):
        fill = cast_expr(pad_value, data.dtype)
    else:
        fill = _op.const(pad_value if not data.dtype.startswith(("int", "uint")) else int(pad_value), data.dtype)

    def fcompute(*i):
        idx, inside = [], []
        for k in range(ndim):
            if _zero(before[k]) and _zero(after[k]):
                idx.append(i[k])
                continue
            p = i[k] if _zero(before[k]) else i[k] - before[k]
            n = shape[k]
            if pad_mode == "constant":
                idx.append(p)
                if _may_be_positive(before[k]):
                    inside.append(p >= 0)
                if _may_be_positive(after[k]):
                    inside.append(p < n)
            elif pad_mode == "edge":
                idx.append(_op.minimum(_op.maximum(p, 0), n - 1))
            else:
                idx.append(_reflect(p, n))
        value = data(*idx)
        if inside:
            return _intrin.if_then_else(_op.all(*inside), value, fill)
        return value

    return compute(out_shape, fcompute, name=name, tag=f"{_tag.INJECTIVE},pad")


def _width(v):
    """A pad width: an int, or an expression of sizes known only at run time (pooling's ceil_mode tail)."""
    return v if isinstance(v, E.PrimExpr) and not isinstance(v, E.IntImm) else int(v)


def _zero(width) -> bool:
    return isinstance(width, int) and width == 0


def has_padding(widths) -> bool:
    """Whether some of ``widths`` is not a static 0 (a symbolic width may pad): whether :func:`pad` adds a stage."""
    return not all(_zero(w) for w in widths)


def _may_be_positive(width) -> bool:
    return not isinstance(width, int) or width > 0


def _reflect(p, n):
    if n == 1:
        return _op.const(0, p.dtype)
    period = 2 * (n - 1)
    q = _op.floormod(p, period)
    return _op.select(q < n, q, period - q)
