"""DenseToSparse: ``nn.dense`` of a weight named in ``weight_name`` becomes ``nn.sparse_dense`` of new BSR
parameters ``<name>.data``, ``<name>.indices``, ``<name>.indptr`` of the shapes in ``weight_shape`` (TVM's
``convert_sparse_dense.cc``, for ``relay.data_dep_optimization.bsr_dense``; the parameters are appended to the
function's, the unused dense weight dropped). A dense layer with an ``out_dtype`` other than its input's stays:
``nn.sparse_dense`` computes in the input's dtype."""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from ..expr import Var
from ..op.array_more import sparse_dense
from .convert_sparse_conv2d import WeightRewriter, bsr_params, with_sparse_params
from .function_pass import FunctionPass

__all__ = ["DenseToSparse"]


@register_pass("DenseToSparse")
@dataclass(frozen=True)
class DenseToSparse(FunctionPass):
    """Rewrite the ``nn.dense`` of the weights named in ``weight_name`` to ``nn.sparse_dense`` (see the module
    docstring)."""

    weight_name: tuple = ()
    weight_shape: tuple = ()
    info = PassInfo(4, "DenseToSparse", required=("DeadCodeElimination",))

    def __post_init__(self):
        object.__setattr__(self, "weight_name", tuple(str(n) for n in self.weight_name))
        object.__setattr__(self, "weight_shape", tuple(tuple(int(d) for d in s) for s in self.weight_shape))

    def transform_function(self, func, mod, ctx):
        shapes = dict(zip(self.weight_name, self.weight_shape, strict=True))
        made: dict = {}

        def replace(call):
            weight = call.args[1]
            if not isinstance(weight, Var) or weight.name_hint not in shapes:
                return None
            in_dtype = getattr(call.args[0], "checked_type_", None)
            if call.attrs.out_dtype and in_dtype is not None and call.attrs.out_dtype != in_dtype.dtype:
                return None
            if weight.name_hint not in made:
                made[weight.name_hint] = bsr_params(weight, shapes[weight.name_hint])
            return sparse_dense(call.args[0], made[weight.name_hint])

        return with_sparse_params(func, WeightRewriter(replace, "nn.dense").visit(func.body), made)
