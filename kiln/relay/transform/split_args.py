"""SplitArgs: a ``concatenate`` of more tensors than a kernel may take parameters becomes a chain of smaller ones
(TVM's pass, for targets whose kernels have a parameter limit: ``Target.max_function_args``).

Each tensor costs one kernel parameter, plus, when its shape has dimensions known only at run time, one per
dimension for its shape; the output's parameters come off the limit first. The inputs are taken in order into
chunks that fit; each chunk's ``concatenate`` reads its tuple through ``stop_fusion``, so FuseOps keeps it a kernel
of its own, and feeds the next chunk as its first input.
"""

from dataclasses import dataclass

from ...error import KilnError
from ...ir.transform import PassInfo, register_pass
from ...ir.type import TensorType, TupleType
from .. import op as _op
from ..expr import Tuple
from ..op.annotation import stop_fusion
from .function_pass import FunctionPass
from .rewrite import RuleTable, rewrite


def _extra_params(ttype, output=False) -> int:
    """Shape parameters of a tensor with run-time dimensions (TVM's count: its rank, plus, for an input, the number
    of run-time dimensions)."""
    if not isinstance(ttype, TensorType) or not ttype.is_dynamic:
        return 0
    dynamic = sum(1 for d in ttype.shape if not isinstance(d, int))
    return len(ttype.shape) if output else dynamic + len(ttype.shape)


def _rules(max_function_args):
    rules = RuleTable()

    @rules.register("concatenate")
    def split_concatenate(call):
        """concatenate(t1..tn) -> concatenate(stop_fusion((concatenate(stop_fusion((t1..tk))), tk+1..)))..."""
        fields = call.args[0]
        if not isinstance(fields, Tuple):
            return None
        out = call.checked_type
        outputs = sum(1 + _extra_params(t, True) for t in (out.fields if isinstance(out, TupleType) else (out,)))
        if max_function_args <= outputs:
            raise KilnError(f"SplitArgs: max_function_args={max_function_args} leaves no parameter for the inputs "
                            f"of a concatenate with {outputs} output parameters")
        limit = max_function_args - outputs
        costs = [1 + _extra_params(f.checked_type) for f in fields.fields]
        if sum(costs) < limit:
            return None
        chunk: list = []
        used = 0
        for field, cost in zip(fields.fields, costs, strict=True):
            if used + cost > limit:
                chunk, used = [_op.concatenate(stop_fusion(Tuple(tuple(chunk))), call.attrs.axis)], cost
            used += cost
            chunk.append(field)
        return _op.concatenate(stop_fusion(Tuple(tuple(chunk))), call.attrs.axis)

    return rules


@register_pass("SplitArgs")
@dataclass(frozen=True)
class SplitArgs(FunctionPass):
    """Split concatenates whose kernels would exceed ``max_function_args`` parameters (0: no limit).

    Parameters
    ----------
    max_function_args : int
        The target's kernel parameter limit (``Target.max_function_args``).
    """

    max_function_args: int = 0
    info = PassInfo(1, "SplitArgs", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        if not self.max_function_args:
            return func
        return rewrite(func, _rules(int(self.max_function_args)), mod=mod)
