"""The statement of an extern stage (TVM's ``ExternOp`` in ``ScheduleOps``): ``te.extern``'s statement with its
placeholder buffers replaced by the buffers of the tensors they stand for (their data handles, shapes, strides and
offsets substituted where the statement names them, as a packed call's DLTensor does). An extern stage has no loops
to schedule; its inputs are computed whole before it and its outputs stored whole.
"""

from ..error import TIRError
from ..tir import expr as E
from ..tir import stmt as S
from ..tir.stmt_functor import rebind_buffers

__all__ = ["extern_stage"]


def _bind(placeholder, real, mins, var_map, buffer_map, where):
    if mins is not None and not all(isinstance(m, E.IntImm) and m.value == 0 for m in mins):
        raise TIRError(f"{where}: tensor {real.name} is only partly stored here; an extern reads and writes whole "
                       "tensors (do not compute its inputs inside another stage's loop)")
    var_map[placeholder.data] = real.data
    if isinstance(placeholder.elem_offset, E.Var):
        var_map[placeholder.elem_offset] = real.elem_offset
    for mine, theirs in zip(placeholder.shape, real.shape, strict=True):
        if isinstance(mine, E.Var) and mine is not theirs:
            var_map[mine] = theirs
    for mine, theirs in zip(placeholder.strides, real.strides or real.default_strides(), strict=False):
        if isinstance(mine, E.Var):
            var_map[mine] = theirs
    buffer_map[placeholder] = real


def extern_stage(builder, stage) -> S.Stmt:
    """The statements computing the extern ``stage`` (see the module docstring)."""
    op = stage.op
    where = f"lower: extern stage {op.name}"
    var_map, buffer_map = {}, {}
    for t, placeholder in zip(op.inputs, op.input_placeholders, strict=True):
        real, mins = builder.buffer(builder.graph.stage_of(t), t.value_index)
        _bind(placeholder, real, mins, var_map, buffer_map, where)
    for k, placeholder in enumerate(op.output_placeholders):
        real, mins = builder.buffer(stage, k)
        _bind(placeholder, real, mins, var_map, buffer_map, where)
    return rebind_buffers(op.body, var_map, buffer_map)
