"""``Schedule.rfactor`` (TVM's ``s.rfactor(tensor, axis, factor_axis)``): factor a reduction over one of its
reduction loops into a new stage.

For ``B[i] = sum(f(i, k1, k2), axis=[k1, k2])`` and the loop ``axis`` (a reduction axis, or the inner or outer
loop of one split of it), ``rfactor`` makes ``BF`` whose extra data-parallel axis ``v`` (at position
``factor_axis``) runs over ``axis``: ``BF[v, i] = sum(f(i, k1(v, r), k2), axis=[k2, r])`` where ``r`` is the other
loop of the split (none when ``axis`` is the whole reduction axis) and ``k1(v, r)`` recombines the split, guarded by
``k1 < extent`` when the split leaves a tail. ``B`` then reduces ``BF`` over ``v``: ``B[i] = sum(BF[v, i], v)``.
The partial sums of ``BF`` are independent, so its ``v`` loop can run in parallel or be vectorized.
"""

from ..error import TIRError
from ..tir import expr as E
from ..tir import op as _op
from ..tir.expr_reduce import IterVar, IterVarType
from ..tir.stmt_functor import substitute
from .schedule import Split, Stage, split_extent
from .tensor import ComputeOp, Tensor

__all__ = ["rfactor"]


def _factor_loop(stage, axis, root):
    """``(k_expr(v), v_extent, other)``: the reduction axis ``root`` as an expression of the factored loop's
    variable ``v`` and of the other split loop ``other`` (an IterVar with a domain, or None)."""
    if axis is root:
        return (lambda v: v), root.dom.extent, None
    split = next((r for r in stage.relations if isinstance(r, Split) and r.parent is root), None)
    if split is None or not (axis is split.outer or axis is split.inner):
        raise TIRError(f"rfactor: {axis.var.name_hint} must be a reduction axis of {stage.op.name} or a loop of one "
                       "split of it")
    outer_ext, inner_ext = split_extent(split, root.dom.extent)
    if axis is split.inner:
        other = IterVar(E.Range.from_min_extent(E.IntImm(root.var.dtype, 0), outer_ext), split.outer.var,
                        IterVarType.CommReduce)
        return (lambda v: other.var * inner_ext + v), inner_ext, other
    other = IterVar(E.Range.from_min_extent(E.IntImm(root.var.dtype, 0), inner_ext), split.inner.var,
                    IterVarType.CommReduce)
    return (lambda v: v * inner_ext + other.var), outer_ext, other


def rfactor(sch, tensor, axis, factor_axis=0):
    """Factor the reduction computing ``tensor`` over the loop ``axis`` (see the module docstring).

    Returns
    -------
    rf : Tensor
        The factored tensor ``BF``.
    """
    if not isinstance(tensor, Tensor):
        raise TIRError(f"rfactor: expected a tensor, got {type(tensor).__name__}")
    stage = sch[tensor]
    op = stage.op
    if not isinstance(op, ComputeOp) or not op.reduce_axis or op.num_outputs != 1:
        raise TIRError(f"rfactor: {op.name} must be a single-output reduction")
    red = op.body[0]
    root = next((r for r in red.axis if r is axis), None)
    if root is None:
        root = next((r for r in red.axis for rel in stage.relations
                     if isinstance(rel, Split) and rel.parent is r and (axis is rel.inner or axis is rel.outer)), None)
    if root is None:
        raise TIRError(f"rfactor: {getattr(axis, 'var', axis)} is not a reduction loop of {op.name}")
    k_of, v_extent, other = _factor_loop(stage, axis, root)
    ndim = len(op.axis)
    if not 0 <= factor_axis <= ndim:
        raise TIRError(f"rfactor: factor_axis {factor_axis} is out of range [0, {ndim}]")
    data = [IterVar(iv.dom, E.Var(iv.var.name_hint, iv.var.dtype), IterVarType.DataPar) for iv in op.axis]
    v = IterVar(E.Range.from_min_extent(E.IntImm(root.var.dtype, 0), v_extent),
                E.Var(f"{axis.var.name_hint}.v", root.var.dtype), IterVarType.DataPar)
    bf_axis = data[:factor_axis] + [v] + data[factor_axis:]
    k_value = k_of(v.var)
    vmap = {iv.var: new.var for iv, new in zip(op.axis, data, strict=True)}
    vmap[root.var] = k_value
    rest = [r for r in red.axis if r is not root] + ([other] if other is not None else [])
    cond = substitute(red.condition, vmap)
    if other is not None and not _divides(root.dom.extent, v_extent, other.dom.extent):
        cond = _op.logical_and(cond, _op.less(k_value, root.dom.extent))
    source = tuple(substitute(s, vmap) for s in red.source)
    if rest:
        body = E.Reduce(red.combiner, source, tuple(rest), cond, 0, tuple(substitute(s, vmap) for s in red.init))
    else:  # nothing left to reduce: each partial is one element (the identity where the condition fails)
        body = _op.select(cond, source[0], red.combiner.identity_element[0])
    rf_op = ComputeOp(f"{op.name}.rf", op.tag, op.attrs, tuple(bf_axis), (body,))
    rf = rf_op.output(0)
    kr = IterVar(E.Range.from_min_extent(E.IntImm(root.var.dtype, 0), v_extent),
                 E.Var(f"{axis.var.name_hint}.v", root.var.dtype), IterVarType.CommReduce)
    idx = [iv.var for iv in op.axis]
    load = E.ProducerLoad(rf, idx[:factor_axis] + [kr.var] + idx[factor_axis:])
    new_op = ComputeOp(op.name, op.tag, op.attrs, op.axis, (E.Reduce(red.combiner, (load,), (kr,), None, 0),))
    stage.op = new_op
    stage.all_iter_vars = list(new_op.root_iter_vars)
    stage.leaf_iter_vars = list(stage.all_iter_vars)
    stage.relations, stage.iter_var_attrs = [], {}
    sch.stage_map[new_op] = stage
    sch._insert(Stage(rf_op, sch), sch.stages.index(stage))
    return rf


def _divides(extent, a, b) -> bool:
    if all(isinstance(x, E.IntImm) for x in (extent, a, b)):
        return extent.value == a.value * b.value
    return False
