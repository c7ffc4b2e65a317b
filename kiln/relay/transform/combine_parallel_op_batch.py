"""CombineParallelOpBatch: parallel calls of one operator on same-shape arguments become one batched call.

Calls of ``op_name`` sharing their first argument, with arguments of the same shapes and dtypes, become one call of
``batch_op_name`` on the arguments stacked along a new axis 0; element-wise or broadcast ops following every branch
alike are applied to the batch (their other arguments stacked too, a vector first given a leading axis of 1 so it
broadcasts against one batch entry), and the result is split back and squeezed (TVM's
``combine_parallel_op_batch.cc``). ``CombineParallelDense(to_batch=True)`` is this with ``nn.dense`` ->
``nn.batch_matmul``.
"""

from dataclasses import dataclass

from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from .. import op as _op
from ..expr import Call, TupleGetItem
from .combine_parallel_op import ParallelOpCombiner, shapes_equal, tensor_type
from .function_pass import FunctionPass


class ParallelOpBatchCombiner(ParallelOpCombiner):
    """Combine parallel calls of ``op_name`` into one call of ``batch_op_name`` over stacked arguments."""

    def __init__(self, op_name: str, batch_op_name: str, min_num_branches: int):
        super().__init__(op_name, min_num_branches)
        self.batch_op_name = batch_op_name

    def is_supported_op(self, call) -> bool:
        return True

    def can_ops_be_combined(self, a, b) -> bool:
        if len(a.args) != len(b.args):
            return False
        for x, y in zip(a.args, b.args, strict=True):
            tx, ty = tensor_type(x), tensor_type(y)
            if tx.dtype != ty.dtype or not shapes_equal(tx.shape, ty.shape):
                return False
        return True

    def stacked_args(self, branches) -> list:
        """Each argument of the operator, stacked over the branches along a new axis 0."""
        return [_op.stack([branch[0].args[i] for branch in branches], axis=0)
                for i in range(len(branches[0][0].args))]

    def make_combined_op(self, branches):
        return Call(Op.get(self.batch_op_name), self.stacked_args(branches), None)

    def is_arg_compatible(self, a, b, index) -> bool:
        ta, tb = tensor_type(a.args[index]), tensor_type(b.args[index])
        return ta.dtype == tb.dtype and shapes_equal(ta.shape, tb.shape)

    def make_combined_call_from_following_ops(self, data, branches, depth, parent_index):
        call = branches[0][depth]
        args = []
        for i in range(len(call.args)):
            if i == parent_index:
                args.append(data)
                continue
            parts = []
            for branch in branches:
                arg = branch[depth].args[i]
                parts.append(_op.expand_dims(arg, 0, 1) if len(tensor_type(arg).shape) == 1 else arg)
            args.append(_op.stack(parts, axis=0))
        return Call(call.op, args, call.attrs)

    def update_group_output(self, data, branches, depth, subst) -> None:
        split = _op.split(data, len(branches), 0).astuple()
        for index, branch in enumerate(branches):
            subst[branch[depth]] = _op.squeeze(TupleGetItem(split, index), [0])


def combine_parallel_op_batch(expr, op_name: str, batch_op_name: str, min_num_branches: int = 3):
    """``expr`` with parallel calls of ``op_name`` (at least ``min_num_branches``) batched into ``batch_op_name``."""
    return ParallelOpBatchCombiner(op_name, batch_op_name, min_num_branches).combine(expr)


@register_pass("CombineParallelOpBatch")
@dataclass(frozen=True)
class CombineParallelOpBatch(FunctionPass):
    """Batch parallel calls of one operator into one call of its batched form (TVM's pass of that name).

    Parameters
    ----------
    op_name : str
        The operator whose parallel calls are combined.
    batch_op_name : str
        The operator computing all of them at once on arguments stacked along axis 0.
    min_num_branches : int
        The smallest number of parallel calls that is combined.
    """

    op_name: str = ""
    batch_op_name: str = ""
    min_num_branches: int = 3
    info = PassInfo(4, "CombineParallelOpBatch", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return combine_parallel_op_batch(func, self.op_name, self.batch_op_name, self.min_num_branches)
