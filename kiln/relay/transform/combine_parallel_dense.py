"""CombineParallelDense: dense layers of one input become one batch_matmul, or one wider dense.

With ``to_batch=True`` (TVM's default) dense layers with weights of the same shape become one ``nn.batch_matmul`` of
the stacked inputs and weights (the batch combiner of ``combine_parallel_op_batch.py``). With ``to_batch=False``
dense layers with the same reduction size become one ``nn.dense`` over the weights concatenated along the units axis;
element-wise and broadcast ops following every branch alike are applied to the wide result, their other arguments
concatenated along their last axis (a scalar, or a last axis of 1 that broadcast against the branch's units, is
first repeated to that many units), and each branch's part is sliced back out (TVM's ``combine_parallel_dense.cc``).
"""

from dataclasses import dataclass

from ...error import KilnError
from ...ir.transform import PassInfo, register_pass
from .. import op as _op
from ..expr import Call
from .combine_parallel_op import ParallelOpCombiner, dim_equal, tensor_type
from .combine_parallel_op_batch import ParallelOpBatchCombiner
from .function_pass import FunctionPass


def _const_dim(dim, what: str) -> int:
    if not isinstance(dim, int):
        raise KilnError(f"CombineParallelDense: {what} must be a known size, got {dim}")
    return dim


class ParallelDenseToBatchCombiner(ParallelOpBatchCombiner):
    """Dense layers with same-shape weights -> one ``nn.batch_matmul`` of stacked inputs and weights."""

    def __init__(self, min_num_branches: int):
        super().__init__("nn.dense", "nn.batch_matmul", min_num_branches)

    def make_combined_op(self, branches):
        data, weight = self.stacked_args(branches)
        return _op.nn.batch_matmul(data, weight, branches[0][0].attrs.out_dtype, False, True)

    def can_ops_be_combined(self, a, b) -> bool:
        wa, wb = tensor_type(a.args[1]).shape, tensor_type(b.args[1]).shape
        return (a.attrs.out_dtype == b.attrs.out_dtype and dim_equal(wa[0], wb[0]) and dim_equal(wa[1], wb[1]))


class ParallelDenseToDenseCombiner(ParallelOpCombiner):
    """Dense layers with the same reduction size -> one ``nn.dense`` with all their units."""

    def __init__(self, min_num_branches: int):
        super().__init__("nn.dense", min_num_branches)

    def is_supported_op(self, call) -> bool:
        return True

    def can_ops_be_combined(self, a, b) -> bool:
        wa, wb = tensor_type(a.args[1]).shape, tensor_type(b.args[1]).shape
        return a.attrs.out_dtype == b.attrs.out_dtype and dim_equal(wa[1], wb[1])

    def make_combined_op(self, branches):
        weights = [branch[0].args[1] for branch in branches]
        units = sum(_const_dim(tensor_type(w).shape[0], "a weight's units") for w in weights)
        return _op.nn.dense(branches[0][0].args[0], _op.concatenate(weights, axis=0), units=units,
                            out_dtype=branches[0][0].attrs.out_dtype)

    def is_arg_compatible(self, a, b, index) -> bool:
        ta, tb = tensor_type(a.args[index]), tensor_type(b.args[index])
        out_a, out_b = tensor_type(a), tensor_type(b)
        if ta.dtype != tb.dtype or len(ta.shape) != len(tb.shape):
            return False
        if len(out_a.shape) < len(ta.shape) or len(out_b.shape) < len(tb.shape):
            return False  # the argument is not broadcast against the branch
        return all(dim_equal(x, y) for x, y in zip(ta.shape[:-1], tb.shape[:-1], strict=True))

    def make_combined_call_from_following_ops(self, data, branches, depth, parent_index):
        call = branches[0][depth]
        args = []
        for i, first_arg in enumerate(call.args):
            if i == parent_index:
                args.append(data)
                continue
            arg_ndim = len(tensor_type(first_arg).shape)
            axis = max(arg_ndim - 1, 0)
            parts = []
            for branch in branches:
                parent_shape = tensor_type(branch[depth].args[parent_index]).shape
                out_dim = _const_dim(parent_shape[-1], "a branch's last dimension")
                arg = branch[depth].args[i]
                if arg_ndim == 0:
                    arg = _op.repeat(_op.expand_dims(arg, -1, 1), out_dim, axis)
                elif out_dim > 1 and _const_dim(tensor_type(arg).shape[-1], "an operand's last dimension") == 1:
                    arg = _op.repeat(arg, out_dim, axis)
                parts.append(arg)
            args.append(_op.concatenate(parts, axis=axis))
        return Call(call.op, args, call.attrs)

    def update_group_output(self, data, branches, depth, subst) -> None:
        index = 0
        for branch in branches:
            out_shape = tensor_type(branch[depth]).shape
            units = _const_dim(tensor_type(branch[0]).shape[1], "a dense layer's units")
            # the last axis of the branch's output with the dense layer's units (expand_dims may have moved it)
            axes = [i for i, d in enumerate(out_shape) if _const_dim(d, "an output dimension") == units]
            if not axes:
                raise KilnError(f"CombineParallelDense: no axis of {branch[depth].op.name}'s output {out_shape} has "
                                f"the dense layer's {units} units")
            axis = axes[-1]
            begin, end = [0] * len(out_shape), [-1] * len(out_shape)
            begin[axis], end[axis] = index, units
            index += units
            subst[branch[depth]] = _op.strided_slice(data, begin, end, strides=[1] * len(out_shape), slice_mode="size")


def combine_parallel_dense(expr, min_num_branches: int = 3, to_batch: bool = True):
    """``expr`` with parallel ``nn.dense`` layers (at least ``min_num_branches``) combined."""
    combiner = ParallelDenseToBatchCombiner if to_batch else ParallelDenseToDenseCombiner
    return combiner(min_num_branches).combine(expr)


@register_pass("CombineParallelDense")
@dataclass(frozen=True)
class CombineParallelDense(FunctionPass):
    """Combine parallel dense layers of one input (TVM's pass of that name).

    Parameters
    ----------
    min_num_branches : int
        The smallest number of parallel dense layers that is combined.
    to_batch : bool
        Combine same-shape layers into one ``nn.batch_matmul`` (True), or layers of any number of units into one
        ``nn.dense`` (False).
    """

    min_num_branches: int = 3
    to_batch: bool = True
    info = PassInfo(4, "CombineParallelDense", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return combine_parallel_dense(func, self.min_num_branches, self.to_batch)
