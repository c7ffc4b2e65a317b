"""The loop nest of a tensorized stage (TVM's ``MakeTensorize``): the stage's loops down to the tensorized axis,
around the tensor intrinsic's statement bound to the regions the inner loops would have accessed.

The regions come from bound inference: each input tensor's reads and the stage's output, with the stage's axes at
their values and the loops from the tensorized axis inward relaxed over their ranges. When every reduction loop is
inside the tensorized part, the intrinsic's ``body`` computes the whole result; otherwise the reduction loops that
stay outside run the intrinsic's ``reset`` once (over fresh copies of the data-parallel loops between them and the
tensorized axis, as a reduction's init) and then its ``update`` in every iteration.
"""

from ..error import TIRError
from ..tir import expr as E
from ..tir import op as _op
from ..tir import stmt as S
from ..tir.expr_reduce import IterVarType
from ..tir.stmt_functor import post_order_visit, substitute
from .tensor_intrin import bind_intrinsic, tensor_region

__all__ = ["tensorized_leaf", "tensorize_stage", "tensor_compute_stage"]


def tensorized_leaf(stage):
    """The index of the leaf axis ``stage`` is tensorized at, or None."""
    for k, iv in enumerate(stage.leaf_iter_vars):
        attr = stage.iter_var_attrs.get(iv)
        if attr is not None and attr.tensor_intrin is not None:
            return k
    return None


def _union(a, b, ana):
    lo = ana.simplify(_op.minimum(a.min, b.min))
    hi = ana.simplify(_op.maximum(_op.add(a.min, a.extent), _op.add(b.min, b.extent)))
    return E.Range.from_min_extent(lo, ana.simplify(_op.subtract(hi, lo)))


def _regions(builder, stage, t, intrin, where):
    """Per intrinsic buffer: (real buffer, its mins, Ranges of the real tensor the inner loops access)."""
    info = builder.infos[stage]
    op = stage.op
    ana = builder.ana
    relax = {iv.var: info.leaf_range(iv) for iv in stage.leaf_iter_vars[t:]}
    vmap = {iv.var: info.values[iv] for iv in info.root_ranges}
    body = builder.graph.effective_body(stage)
    exprs = list(body[0].source) + [body[0].condition] if isinstance(body[0], E.Reduce) else list(body)
    loads: dict = {}
    for e in exprs:
        post_order_visit(e, lambda n: loads.setdefault(n.producer, []).append(n)
                         if isinstance(n, E.ProducerLoad) else None)
    tensors = list(loads)
    if len(tensors) != len(intrin.inputs):
        raise TIRError(f"{where}: the stage reads {len(tensors)} tensors, the intrinsic {len(intrin.inputs)}")
    out = []
    for tensor in tensors:
        region = None
        for load in loads[tensor]:
            r = tensor_region([substitute(i, vmap) for i in load.indices], relax, ana)
            region = r if region is None else [_union(a, b, ana) for a, b in zip(region, r, strict=True)]
        buf, mins = builder.buffer(builder.graph.stage_of(tensor), tensor.value_index)
        out.append((buf, mins, region))
    region = tensor_region([info.values[iv] for iv in op.axis], relax, ana)
    for k in range(op.num_outputs):
        buf, mins = builder.buffer(stage, k)
        out.append((buf, mins, region))
    if len(out) != len(intrin.buffers):
        raise TIRError(f"{where}: the intrinsic has {len(intrin.buffers)} buffers for {len(out)} tensors")
    return out


def tensorize_stage(builder, stage, t) -> S.Stmt:
    """The statements computing ``stage`` tensorized at leaf ``t`` (see the module docstring)."""
    leaves = stage.leaf_iter_vars
    intrin = stage.iter_var_attrs[leaves[t]].tensor_intrin
    where = f"tensorize of stage {stage.op.name} at {leaves[t].var.name_hint}"
    if len(intrin.op.axis) > len(stage.op.axis):
        raise TIRError(f"{where}: the intrinsic computes a {len(intrin.op.axis)}-d tensor, the stage only has "
                       f"{len(stage.op.axis)} dimensions")
    return _emit(builder, stage, t, intrin, _regions(builder, stage, t, intrin, where), where, {})


def tensor_compute_stage(builder, stage) -> S.Stmt:
    """The statements computing a TensorComputeOp's stage: its loops around the intrinsic bound to the slices."""
    info = builder.infos[stage]
    op = stage.op
    vmap = {iv.var: info.values[iv] for iv in info.root_ranges}
    where = f"tensor compute {op.name}"
    regions = []
    for tensor, region in zip(op.inputs, op.regions, strict=True):
        buf, mins = builder.buffer(builder.graph.stage_of(tensor), tensor.value_index)
        regions.append((buf, mins, [E.Range.from_min_extent(builder.ana.simplify(substitute(r.min, vmap)),
                                                            substitute(r.extent, vmap)) for r in region]))
    n = op.schedulable_ndim
    out = [E.Range.from_min_extent(info.values[iv], E.IntImm(iv.var.dtype, 1)) for iv in op.axis[:n]]
    out += [iv.dom for iv in op.axis[n:]]
    for k in range(op.num_outputs):
        buf, mins = builder.buffer(stage, k)
        regions.append((buf, mins, out))
    scalars = {p: substitute(v, vmap) for p, v in zip(op.intrin.scalar_params, op.scalar_inputs, strict=True)}
    return _emit(builder, stage, len(stage.leaf_iter_vars), op.intrin, regions, where, scalars)


def _emit(builder, stage, t, intrin, regions, where, scalars):
    leaves = stage.leaf_iter_vars
    outer_reduce = [k for k, iv in enumerate(leaves[:t]) if iv.iter_type == IterVarType.CommReduce]
    if not outer_reduce:
        if intrin.body is None:
            raise TIRError(f"{where}: the intrinsic has no body statement")
        return builder.loops(stage, 0, t, bind_intrinsic(intrin, intrin.body, regions, where, scalars))
    if intrin.reduce_update is None or intrin.reduce_init is None:
        raise TIRError(f"{where}: reduction loops stay outside the intrinsic, so it needs its reset and update "
                       "statements ((body, reset, update) from fcompute)")
    begin = outer_reduce[0]
    init_map = {iv.var: E.Var(f"{iv.var.name_hint}.init", iv.var.dtype) for iv in leaves[begin:t]
                if iv.iter_type != IterVarType.CommReduce}
    reset = substitute(bind_intrinsic(intrin, intrin.reduce_init, regions, where, scalars), init_map)
    init = builder.loops(stage, begin, t, reset, (), init_map)
    update = builder.loops(stage, begin, t, bind_intrinsic(intrin, intrin.reduce_update, regions, where, scalars))
    return builder.loops(stage, 0, begin, S.stmt_seq(init, update))
