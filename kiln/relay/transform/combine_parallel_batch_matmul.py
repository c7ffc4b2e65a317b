"""CombineParallelBatchMatmul: batch matmuls of one left operand become one over the concatenated right operands.

``batch_matmul(x, w_i)`` (TVM's legacy form, ``transpose_b=True``: each ``w_i`` is (B, N_i, K)) for several ``w_i``
is one ``batch_matmul(x, concatenate(w_i, axis=1))`` sliced back along the last axis; element-wise or broadcast ops
following every branch alike are applied once, their other arguments concatenated along the last axis (TVM's
``combine_parallel_batch_matmul.cc``, over the shared combiner of ``combine_parallel_op.py``).
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from .. import op as _op
from ..expr import Call
from .combine_parallel_op import ParallelOpCombiner, dim_equal, tensor_type
from .function_pass import FunctionPass


class ParallelBatchMatmulCombiner(ParallelOpCombiner):
    """The batch_matmul instance of the parallel-op combiner."""

    def __init__(self, min_num_branches: int):
        super().__init__("nn.batch_matmul", min_num_branches)

    def is_supported_op(self, call) -> bool:
        return True

    def can_ops_be_combined(self, a, b) -> bool:
        attrs_a, attrs_b = a.attrs, b.attrs
        # as TVM's, only the legacy (transpose_a=False, transpose_b=True) form is combined
        if any(attrs.transpose_a or not attrs.transpose_b for attrs in (attrs_a, attrs_b)):
            return False
        rhs_a, rhs_b = tensor_type(a.args[1]), tensor_type(b.args[1])
        return (rhs_a.dtype == rhs_b.dtype and tensor_type(a).dtype == tensor_type(b).dtype
                and len(rhs_a.shape) == 3 and len(rhs_b.shape) == 3 and dim_equal(rhs_a.shape[0], rhs_b.shape[0])
                and attrs_a.out_dtype == attrs_b.out_dtype)

    def make_combined_op(self, branches):
        weight = _op.concatenate([branch[0].args[1] for branch in branches], axis=1)
        attrs = branches[0][0].attrs
        return _op.nn.batch_matmul(branches[0][0].args[0], weight, attrs.out_dtype, attrs.transpose_a,
                                   attrs.transpose_b)

    def is_arg_compatible(self, a, b, index) -> bool:
        return True

    def make_combined_call_from_following_ops(self, data, branches, depth, parent_index):
        call = branches[0][depth]
        args = [data if i == parent_index else _op.concatenate([branch[depth].args[i] for branch in branches], -1)
                for i in range(len(call.args))]
        return Call(call.op, args, call.attrs)

    def update_group_output(self, data, branches, depth, subst) -> None:
        index = 0
        for branch in branches:
            features = int(tensor_type(branch[0].args[1]).shape[1])
            subst[branch[depth]] = _op.strided_slice(data, [0, 0, index], [-1, -1, features], strides=[1, 1, 1],
                                                     slice_mode="size")
            index += features


def combine_parallel_batch_matmul(expr, min_num_branches: int = 3):
    """``expr`` with parallel ``nn.batch_matmul`` calls (at least ``min_num_branches``) combined."""
    return ParallelBatchMatmulCombiner(min_num_branches).combine(expr)


@register_pass("CombineParallelBatchMatmul")
@dataclass(frozen=True)
class CombineParallelBatchMatmul(FunctionPass):
    """Combine parallel batch matmuls sharing their left operand (TVM's pass of that name).

    Parameters
    ----------
    min_num_branches : int
        The smallest number of parallel batch matmuls that is combined.
    """

    min_num_branches: int = 3
    info = PassInfo(4, "CombineParallelBatchMatmul", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return combine_parallel_batch_matmul(func, self.min_num_branches)
