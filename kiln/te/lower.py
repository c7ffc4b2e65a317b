"""``kiln.lower``: a schedule to an ``IRModule`` holding one ``tir.PrimFunc`` (TVM's ``tvm.lower``).

The schedule becomes a loop nest (:mod:`kiln.te.bound` infers the bounds, :mod:`kiln.te.schedule_ops` builds the
statements) over buffers: one per argument tensor (``decl_buffer(tensor.shape, tensor.dtype, tensor.name)`` unless
``binds`` gives one), recorded in the function's ``buffer_map``, and one allocation per other intermediate. Then the
TIR passes TVM's ``lower`` runs on a TE function, in its order (``tvm/driver/build_module.cc``: ``CreatePassList``):

1. ``tir.FlattenBuffer``: accesses become one-dimensional (``A[i * n + j]``), the form code generators index;
2. ``tir.Simplify``;
3. ``tir.VectorizeLoop``: vectorized loops become Ramp/Broadcast vector code (scalar loops when the config
   ``tir.disable_vectorize`` is set);
4. ``tir.StorageRewrite``: allocations whose lifetimes do not overlap share memory;
5. ``tir.UnrollLoop`` (options from the ``tir.UnrollLoop`` config): loops marked unrolled are copied out;
6. ``tir.Simplify`` and ``tir.RemoveNoOp``.

``MakePackedAPI`` (the calling convention) and ``LowerIntrin`` are left to ``kiln.build``, as in TVM.
``simple_mode`` is accepted for TVM compatibility; TVM only skips loop partitioning with it, which kiln does not do.

Every PrimFunc ``lower`` returns is remembered (weakly, by identity): :func:`is_lowered` tells ``kiln.build`` that
running these passes again would only cost time (they are idempotent on their own output), so
``kiln.build(kiln.lower(s, args))`` lowers once. A function changed afterwards is a new object and is lowered again.
"""

import weakref

from ..error import TIRError
from ..ir.module import IRModule
from ..ir.pass_context import PassContext, register_config
from ..ir.transform import Sequential
from ..tir import expr as E
from ..tir import stmt as S
from ..tir.analysis import undefined_vars
from ..tir.buffer import Buffer, decl_buffer
from ..tir.function import PrimFunc
from ..tir.transform.pipeline import lower_passes
from .bound import ScheduleGraph, infer_bound
from .schedule import Schedule
from .schedule_layout import physical_shape
from .schedule_ops import build_body
from .tensor import PlaceholderOp, Tensor

__all__ = ["lower", "schedule_to_prim_func", "lower_passes", "get_binds", "is_lowered"]



_LOWERED: "weakref.WeakSet" = weakref.WeakSet()

register_config("tir.noalias", bool, True)


def is_lowered(func) -> bool:
    """Whether ``func`` is a PrimFunc that :func:`lower` returned (lowering it again would change nothing)."""
    try:
        return func in _LOWERED
    except TypeError:  # not weakly referenceable: not one of ours
        return False


def get_binds(args, binds=None):
    """The buffer of each tensor argument (TVM's ``get_binds``): ``binds[tensor]`` when given, else a new compact
    buffer named after the tensor.

    Returns
    -------
    binds : dict
        Tensor -> Buffer for every tensor argument and every entry of ``binds``.
    arg_list : list
        The arguments as Buffers (for tensors) and Vars (scalars).
    """
    binds = dict(binds or {})
    arg_list = []
    for x in args:
        if isinstance(x, Tensor):
            if x not in binds:
                binds[x] = decl_buffer(x.shape, x.dtype, x.name)
            arg_list.append(binds[x])
        elif isinstance(x, Buffer | E.Var):
            arg_list.append(x)
        else:
            raise TIRError(f"lower: an argument must be a te.Tensor, tir.Buffer or tir.Var, got {type(x).__name__}")
    return binds, arg_list


def schedule_to_prim_func(sch, args, name="default_function", binds=None) -> PrimFunc:
    """Build the (unoptimized) PrimFunc computing schedule ``sch`` with parameters ``args``.

    Parameters
    ----------
    sch : Schedule
        The schedule.
    args : list of Tensor, Buffer or Var
        The parameters: tensors (inputs and outputs) become buffer parameters, Vars scalar parameters.
    name : str
        The function's ``global_symbol``.
    binds : dict, optional
        Tensor -> Buffer, to give an argument a buffer of your own (strides, offset).
    """
    if args is None:
        raise TIRError("lower: the arguments of the function (a list of tensors) are required for a schedule")
    binds = dict(binds or {})
    for x in args:  # an argument with a layout transformation is passed in its physical layout
        stage = sch.stage_map.get(x.op) if isinstance(x, Tensor) else None
        if stage is not None and stage.layout_transforms and x not in binds:
            binds[x] = decl_buffer(physical_shape(stage, x.shape), x.dtype, x.name,
                                   axis_separators=stage.axis_separators)
    binds, arg_list = get_binds(args, binds)
    graph = ScheduleGraph(sch)
    stage_binds, seen = {}, set()
    for tensor, buf in binds.items():
        stage = sch.stage_map.get(tensor.op)
        if stage is None and isinstance(tensor.op, PlaceholderOp):
            continue  # an input nothing reads stays a parameter, as in TVM (shape_of reads no element)
        if stage is None:
            raise TIRError(f"lower: argument {tensor.name} is not a tensor of this schedule")
        stage_binds[(stage, tensor.value_index)] = buf
    for x in args:
        if id(x) in seen:
            raise TIRError(f"lower: argument {getattr(x, 'name', x)} is given twice")
        seen.add(id(x))
    if _writes_nothing(sch):
        body = S.Evaluate(E.IntImm("int32", 0))  # every output is empty: no loop runs (bound inference needs one)
    else:
        infos = infer_bound(sch, graph, {stage for stage, _ in stage_binds})
        body = build_body(graph, infos, stage_binds)
    params, buffer_map = [], {}
    for x in arg_list:
        if isinstance(x, Buffer):
            param = E.Var(x.name, "handle")
            params.append(param)
            buffer_map[param] = x
        else:
            params.append(x)
    _check_defined(body, params, buffer_map, name)
    return PrimFunc(params, body, None, buffer_map, {"global_symbol": name, "tir.noalias": True})


def _writes_nothing(sch) -> bool:
    """Whether every output of ``sch`` has a dimension of static extent 0."""
    for op in sch.outputs:
        for k in range(op.num_outputs):
            if not any(isinstance(d, E.IntImm) and d.value == 0 for d in op.output(k).shape):
                return False
    return True


def _check_defined(body, params, buffer_map, name):
    defined = {id(p) for p in params}
    for buf in buffer_map.values():
        defined.add(id(buf.data))
        for e in (*buf.shape, *buf.strides, buf.elem_offset):
            defined.update(id(v) for v in undefined_vars(e))
    missing = [v for v in undefined_vars(body) if id(v) not in defined]
    if missing:
        names = ", ".join(sorted({v.name_hint for v in missing}))
        raise TIRError(f"lower {name}: the variables {names} are used but are not arguments and do not appear in the "
                       "shape of an argument; add them to the argument list")


def lower(inp, args=None, name="main", binds=None, simple_mode=False) -> IRModule:
    """Lower a schedule (or a PrimFunc / IRModule) to an IRModule of optimized loop-level code (TVM's ``tvm.lower``).

    Parameters
    ----------
    inp : Schedule, PrimFunc or IRModule
        What to lower.
    args : list of Tensor, Buffer or Var
        The function's parameters (for a schedule).
    name : str
        The name of the function (its ``global_symbol``).
    binds : dict, optional
        Tensor -> Buffer for arguments that need a buffer of their own.
    simple_mode : bool
        Accepted for TVM compatibility (see the module docstring).

    Returns
    -------
    mod : IRModule
        One ``tir.PrimFunc`` named ``name``; ``print(mod)`` shows its loop nest.

    Examples
    --------
    >>> s = te.create_schedule(C.op)                     # doctest: +SKIP
    >>> print(kiln.lower(s, [A, B, C], name="mm"))       # doctest: +SKIP
    """
    if isinstance(inp, Schedule):
        mod = IRModule({name: schedule_to_prim_func(inp, args, name, binds)})
    elif isinstance(inp, PrimFunc):
        func = inp.with_attr("global_symbol", name)
        if PassContext.current().config.get("tir.noalias", True):  # as TVM's LowerPrimFunc marks it
            func = func.with_attr("tir.noalias", True)
        mod = IRModule({name: func})
    elif isinstance(inp, IRModule):
        mod = inp
    else:
        raise TIRError(f"lower: expected a te.Schedule, tir.PrimFunc or IRModule, got {type(inp).__name__}")
    mod = Sequential(lower_passes(), name="tir.lower")(mod)
    for func in mod.functions.values():
        if isinstance(func, PrimFunc):
            _LOWERED.add(func)
    return mod
