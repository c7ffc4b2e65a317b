"""SimplifyFCTranspose: ``nn.dense(x, transpose(w))`` becomes ``nn.dense(x, w.T)`` of a new parameter ``<w>.T``
holding the transposed weight, for each ``w`` named in ``target_weights`` (TVM's pass, used by
``relay.data_dep_optimization.simplify_fc_transpose``, which stores the transposed arrays). The new parameters are
appended to the function's; the unused originals are dropped."""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from ...ir.type import TensorType
from ..analysis.fc_transpose import is_transposed_weight
from ..expr import Call, Var
from .convert_sparse_conv2d import WeightRewriter, with_sparse_params
from .function_pass import FunctionPass

__all__ = ["SimplifyFCTranspose"]


@register_pass("SimplifyFCTranspose")
@dataclass(frozen=True)
class SimplifyFCTranspose(FunctionPass):
    """Replace ``transpose(w)`` as a dense layer's weight by a parameter ``<w>.T`` (see the module docstring)."""

    target_weights: tuple = ()
    info = PassInfo(4, "SimplifyFCTranspose", required=("DeadCodeElimination",))

    def __post_init__(self):
        object.__setattr__(self, "target_weights", tuple(str(n) for n in self.target_weights))

    def transform_function(self, func, mod, ctx):
        made: dict = {}

        def replace(call):
            weight = call.args[1]
            if not is_transposed_weight(weight) or weight.args[0].name_hint not in self.target_weights:
                return None
            var = weight.args[0]
            ttype = var.type_annotation
            if not isinstance(ttype, TensorType) or ttype.ndim != 2:
                return None
            if var.name_hint not in made:
                made[var.name_hint] = [Var(var.name_hint + ".T", TensorType(ttype.shape[::-1], ttype.dtype))]
            return Call(call.op, (call.args[0], made[var.name_hint][0]), call.attrs)

        return with_sparse_params(func, WeightRewriter(replace, "nn.dense").visit(func.body), made)
