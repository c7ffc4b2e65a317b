"""Conv2dToSparse and Conv2dToSparse2: ``nn.conv2d`` with a sparse weight becomes ``nn.sparse_conv2d`` (TVM's
``convert_sparse_conv2d.cc``), for ``relay.data_dep_optimization.bsr_conv2d``.

``Conv2dToSparse(weight_name, weight_shape, layout, kernel_size)`` rewrites each convolution whose weight is a
variable named in ``weight_name`` (what :func:`kiln.relay.analysis.sparse_conv2d.process_params` replaced in the
parameters): the weight becomes three new parameters ``<name>.data``, ``<name>.indices``, ``<name>.indptr`` of the
shapes in ``weight_shape``, appended to the function's parameters (the unused dense weight is dropped).
``Conv2dToSparse2(layout, kernel_size, blocksize, sparsity_threshold)`` rewrites each convolution whose weight is a
float32 constant with enough zeros outside its kept ``blocksize`` blocks, the BSR arrays becoming constants.

Only convolutions ``nn.sparse_conv2d`` computes are rewritten: ``layout`` data with the matching weight layout
(HWIO for NHWC, OIHW for NCHW), a square ``kernel_size`` kernel, stride and dilation 1, one group, and the padding
that keeps the size (none for 1x1, 1 for 3x3). TVM's passes check less (Conv2dToSparse nothing but the weight's
name) and would give another convolution's result; kiln keeps such a call dense.
"""

from dataclasses import dataclass

import numpy as np

from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ...ir.type import TensorType
from ..analysis.free_vars import free_vars
from ..analysis.sparse_conv2d import bsr_from_dense, conv2d_weight_matrix
from ..expr import Constant, Var, const
from ..expr_functor import ExprMutator
from ..op.sparse import sparse_conv2d
from .function_pass import FunctionPass

__all__ = ["Conv2dToSparse", "Conv2dToSparse2", "WeightRewriter", "bsr_params", "with_sparse_params"]

_KERNEL_LAYOUT = {"NHWC": "HWIO", "NCHW": "OIHW"}


def computes_as_sparse(call, layout, kernel_size) -> bool:
    """Whether the ``nn.conv2d`` ``call`` is one ``nn.sparse_conv2d`` of ``layout`` and ``kernel_size`` computes."""
    a = call.attrs
    pad = kernel_size // 2
    return (a.data_layout == layout and a.kernel_layout == _KERNEL_LAYOUT.get(layout) and a.groups == 1
            and tuple(a.kernel_size or ()) in ((kernel_size, kernel_size), ()) and tuple(a.strides) == (1, 1)
            and tuple(a.dilation) == (1, 1) and tuple(a.padding) == (pad,) * 4 and a.out_layout in ("", layout))


class WeightRewriter(ExprMutator):
    """Replaces each call of ``op_name`` by ``replace(call) -> Expr | None`` (None: keep it)."""

    def __init__(self, replace, op_name):
        super().__init__()
        self.op = Op.get(op_name)
        self.replace = replace

    def visit_call(self, call):
        new = super().visit_call(call)
        if call.op == self.op:
            replaced = self.replace(new)
            if replaced is not None:
                return replaced
        return new


def with_sparse_params(func, body, made):
    """``func`` with ``body``, its parameters those of the old ones still used followed by the new BSR parameters
    ``made`` (weight name -> its three variables), as TVM's Conv2dToSparse and DenseToSparse order them."""
    if not made:
        return func
    used = set(free_vars(body))
    new_params = tuple(v for params in made.values() for v in params)
    return func.with_fields(params=tuple(p for p in func.params if p in used) + new_params, body=body, ret_type=None)


def bsr_params(weight, shape):
    """The ``<name>.data``, ``.indices``, ``.indptr`` variables replacing the weight variable ``weight``, of the
    shapes ``shape`` (the data's, then one entry each for indices and indptr), the data in the weight's dtype."""
    name, dtype = weight.name_hint, getattr(weight.type_annotation, "dtype", None) or "float32"
    return [Var(f"{name}.data", TensorType(tuple(shape[:-2]), dtype)),
            Var(f"{name}.indices", TensorType(tuple(shape[-2:-1]), "int32")),
            Var(f"{name}.indptr", TensorType(tuple(shape[-1:]), "int32"))]


@register_pass("Conv2dToSparse")
@dataclass(frozen=True)
class Conv2dToSparse(FunctionPass):
    """Rewrite the ``nn.conv2d`` of the weights named in ``weight_name`` to ``nn.sparse_conv2d`` of new BSR
    parameters (see the module docstring)."""

    weight_name: tuple = ()
    weight_shape: tuple = ()
    layout: str = "NHWC"
    kernel_size: int = 1
    info = PassInfo(4, "Conv2dToSparse", required=("DeadCodeElimination",))

    def __post_init__(self):
        object.__setattr__(self, "weight_name", tuple(str(n) for n in self.weight_name))
        object.__setattr__(self, "weight_shape", tuple(tuple(int(d) for d in s) for s in self.weight_shape))

    def transform_function(self, func, mod, ctx):
        shapes = dict(zip(self.weight_name, self.weight_shape, strict=True))
        made: dict = {}  # weight name -> its three parameters, shared by every convolution of that weight

        def replace(call):
            weight = call.args[1]
            if not isinstance(weight, Var) or weight.name_hint not in shapes:
                return None
            if not computes_as_sparse(call, self.layout, self.kernel_size):
                return None
            name = weight.name_hint
            if name not in made:
                made[name] = bsr_params(weight, shapes[name])
            data, indices, indptr = made[name]
            return sparse_conv2d(call.args[0], data, indices, indptr, self.layout, self.kernel_size)

        return with_sparse_params(func, WeightRewriter(replace, "nn.conv2d").visit(func.body), made)


@register_pass("Conv2dToSparse2")
@dataclass(frozen=True)
class Conv2dToSparse2(FunctionPass):
    """Rewrite each ``nn.conv2d`` of a float32 constant weight sparse enough into ``nn.sparse_conv2d`` of constant
    BSR arrays (see the module docstring)."""

    layout: str = "NHWC"
    kernel_size: int = 1
    blocksize: tuple = (1, 1)
    sparsity_threshold: float = 0.0
    info = PassInfo(5, "Conv2dToSparse2", required=("DeadCodeElimination",))

    def __post_init__(self):
        object.__setattr__(self, "blocksize", tuple(int(b) for b in self.blocksize))

    def transform_function(self, func, mod, ctx):
        def replace(call):
            weight = call.args[1]
            if not isinstance(weight, Constant) or str(weight.data.dtype) != "float32":
                return None
            if not computes_as_sparse(call, self.layout, self.kernel_size):
                return None
            matrix = conv2d_weight_matrix(weight.data.numpy(), self.layout)
            if matrix.shape[0] % self.blocksize[0] or matrix.shape[1] % self.blocksize[1]:
                return None
            data, indices, indptr = bsr_from_dense(matrix, self.blocksize)
            if 1.0 - data.size / matrix.size < self.sparsity_threshold:
                return None
            return sparse_conv2d(call.args[0], const(np.ascontiguousarray(data)), const(indices), const(indptr),
                                 self.layout, self.kernel_size)

        body = WeightRewriter(replace, "nn.conv2d").visit(func.body)
        return func if body is func.body else func.with_fields(body=body)
