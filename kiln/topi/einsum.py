"""``einsum`` (TVM's ``topi/einsum.py``): numpy's subscript notation as one reduction.

:func:`parse_einsum` turns the equation into one letter string per operand and one for the output (``...`` becomes
upper-case letters standing for the broadcast axes, implicit output: the letters seen once, sorted, after the
broadcast axes). The compute is a single ``te.compute`` over the output letters whose body is ``te.sum`` over the
remaining letters of the product of the operands, each indexed by its letters (a size-1 broadcast axis at 0).

The sizes an axis letter takes in different operands are joined as a broadcast joins them (TVM's
``GetBroadcastedExtent``): equal sizes, or 1 against any size. A size known only at run time (a ``relay.Any`` in a
type relation, a size variable in the compute) gives way to a static one other than 1; the compute then reads the
dynamic axis at index 0 where it turns out to be 1, and records the run-time check that it is the letter's size or
1 (the shape function asserts it).
"""

from ..te.operation import compute, reduce_axis
from ..te.operation import sum as _te_sum
from ..tir import op as _op
from . import tag as _tag
from .broadcast import broadcast_index
from .utils import SHAPE_CHECKS, get_const_tuple

__all__ = ["parse_einsum", "einsum_shape", "einsum"]

_ELLIPSIS_LETTERS = "ZYXWVUTSRQPONMLKJIHGFEDCBA"  # stand-ins for "..." axes (the equation uses lower case)


def _join(letter, a, b):
    """The size of axis ``letter`` that has sizes ``a`` and ``b`` (ints, or sizes known only at run time)."""
    if isinstance(a, int) and isinstance(b, int):
        if a != b and 1 not in (a, b):
            raise ValueError(f"axis {letter!r} has sizes {a} and {b}")
        return b if a == 1 else a
    if isinstance(a, int):
        return b if a == 1 else a
    if isinstance(b, int):
        return a if b == 1 else b
    return a


def parse_einsum(equation, shapes):
    """``(input letter strings, output letters, {letter: size})`` of ``equation`` for operands of ``shapes``;
    ValueError when they do not fit."""
    equation = equation.replace(" ", "")
    lhs, arrow, out = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(shapes):
        raise ValueError(f"{len(inputs)} operand subscripts for {len(shapes)} operands")
    n_ell = 0
    for subs, shape in zip(inputs, shapes, strict=True):
        if "..." in subs:
            n_ell = max(n_ell, len(shape) - (len(subs) - 3))
    ell = _ELLIPSIS_LETTERS[:n_ell][::-1]
    letters, sizes = [], {}
    for subs, shape in zip(inputs, shapes, strict=True):
        if "..." in subs:
            k = len(shape) - (len(subs) - 3)
            if k < 0:
                raise ValueError(f"subscripts {subs!r} have more axes than the operand's shape {tuple(shape)}")
            subs = subs.replace("...", ell[n_ell - k:])
        if len(subs) != len(shape) or not all(c.isalpha() for c in subs):
            raise ValueError(f"subscripts {subs!r} do not fit an operand of shape {tuple(shape)}")
        for c, d in zip(subs, shape, strict=True):
            sizes[c] = _join(c, sizes[c], d) if c in sizes else d
        letters.append(subs)
    if arrow:
        out = out.replace("...", ell)
        if any(c not in sizes for c in out) or len(set(out)) != len(out):
            raise ValueError(f"output subscripts {out!r} name an axis twice or one no operand has")
    else:
        counts = {}
        for subs in letters:
            for c in subs:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return letters, out, sizes


def einsum_shape(equation, shapes) -> tuple:
    """The result shape of ``einsum(equation)`` of operands of ``shapes``."""
    _, out, sizes = parse_einsum(equation, [tuple(s) for s in shapes])
    return tuple(sizes[c] for c in out)


def einsum(equation, *tensors):
    """numpy's ``einsum`` of ``tensors`` (TVM's argument order).

    Parameters
    ----------
    equation : str
        The subscripts, such as ``"ij,jk->ik"``.
    tensors : te.Tensor
        The operands, of one dtype.

    Returns
    -------
    out : te.Tensor
    """
    shapes = [get_const_tuple(t.shape) for t in tensors]
    letters, out, sizes = parse_einsum(equation, shapes)
    reduced = sorted({c for subs in letters for c in subs} - set(out))
    dtype = tensors[0].dtype
    work = "float32" if dtype == "float16" else dtype  # float16 accumulates in float32, as the sums do

    def fcompute(*idx):
        where = dict(zip(out, idx, strict=True))
        raxes = {c: reduce_axis((0, sizes[c]), name=f"k_{c}") for c in reduced}
        where.update({c: r.var for c, r in raxes.items()})
        product = None
        for t, subs, shape in zip(tensors, letters, shapes, strict=True):
            index = [broadcast_index(d, sizes[c], where[c]) for c, d in zip(subs, shape, strict=True)]
            value = _op.cast(t(*index), work)
            product = value if product is None else _op.multiply(product, value)
        if not raxes:
            return product
        return _te_sum(product, axis=list(raxes.values()))

    checks = [(_op.logical_or(_op.equal(d, sizes[c]), _op.equal(d, 1)),
               f"einsum {equation!r}: axis {c!r} of operand {n} has a size other than {sizes[c]} or 1")
              for n, (subs, shape) in enumerate(zip(letters, shapes, strict=True))
              for c, d in zip(subs, shape, strict=True) if not isinstance(d, int) and d is not sizes[c]]
    result = compute(tuple(sizes[c] for c in out), fcompute, name="T_einsum",
                     tag=_tag.COMM_REDUCE if reduced else _tag.INJECTIVE,
                     attrs={SHAPE_CHECKS: tuple(checks)} if checks else None)
    if work == dtype:
        return result
    return compute(result.shape, lambda *i: _op.cast(result(*i), dtype), name="T_einsum_cast", tag=_tag.ELEMWISE)
