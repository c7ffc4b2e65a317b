"""FoldConstant: evaluate, at compile time, every subexpression whose inputs are all constants.

Calls of operators on constant arguments are evaluated with the reference interpreter and replaced by the result
(a ``Constant``, or a ``Tuple`` of them); ``shape_of`` is replaced by the static shape even when its input is not
constant, and ``ndarray_size`` by the element count; a field of a literal tuple is replaced by the field; an ``if``
on a constant condition by the branch it takes; a let binding a constant is substituted into its body.
Quantized operators (``qnn.*``) are folded only with ``fold_qnn=True``, as in TVM.
Stateful operators (op attribute ``TOpIsStateful``) are left alone, and so are primitive (fused) functions. A call
whose evaluation fails on its constant values (a scatter index out of range) stays a call: compiling a program is
no reason to fail where running it would (TVM compiles such programs too).
"""

from dataclasses import dataclass

import numpy as np

from ...error import InternalError, KilnError
from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ...runtime.ndarray import array as nd_array
from ..expr import Constant, Tuple
from ..expr_functor import ExprMutator
from ..interpreter import evaluate_expr
from .function_pass import FunctionPass
from .infer_type import infer_type


def _is_constant(expr) -> bool:
    if isinstance(expr, Constant):
        return True
    return isinstance(expr, Tuple) and all(_is_constant(f) for f in expr.fields)


def _to_expr(value, ttype):
    if isinstance(value, tuple):
        return Tuple(tuple(_to_expr(v, t) for v, t in zip(value, ttype.fields, strict=True)))
    return Constant(nd_array(np.asarray(value, dtype=ttype.dtype)))


class _ConstantFolder(ExprMutator):
    def __init__(self, mod=None, fold_qnn=False):
        super().__init__()
        self.mod = mod
        self.fold_qnn = fold_qnn

    def visit_function(self, fn):
        return fn if fn.is_primitive() else super().visit_function(fn)

    def visit_call(self, call):
        new = super().visit_call(call)
        if not isinstance(new.op, Op) or new.op.get_attr("TOpIsStateful"):
            return new
        if new.op.name.startswith("qnn.") and not self.fold_qnn:
            return new  # quantized operators stay for the QNN passes unless asked (TVM's fold_qnn)
        if new.op in (Op.get("shape_of"), Op.get("ndarray_size")):
            ttype = call.args[0].checked_type
            if getattr(ttype, "is_dynamic", True):  # a dimension known only at run time: the VM reads it
                return new
            shape = np.array(ttype.shape, dtype=np.int64)
            value = shape if new.op is Op.get("shape_of") else np.prod(shape)
            return Constant(nd_array(np.asarray(value, dtype=new.attrs.dtype)))
        if all(_is_constant(a) for a in new.args):
            try:
                value = evaluate_expr(new, mod=self.mod)
            except InternalError:
                raise
            except KilnError:  # the values are bad (an index out of range): left for run time, which reports it
                return new
            return _to_expr(value, call.checked_type)
        return new

    def visit_if(self, node):
        cond = self.visit(node.cond)
        if isinstance(cond, Constant):  # the branch taken is known: the other one is never evaluated
            return self.visit(node.true_branch if cond.data.handle.item() else node.false_branch)
        return node.with_fields(cond=cond, true_branch=self.visit(node.true_branch),
                                false_branch=self.visit(node.false_branch))

    def visit_tuple_getitem(self, item):
        new = super().visit_tuple_getitem(item)
        if isinstance(new.tuple_value, Tuple):
            return new.tuple_value.fields[new.index]
        return new

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        kept = []
        for binding in chain:
            value = self.visit(binding.value)
            if _is_constant(value):
                self.memo_map[binding.var] = value
            else:
                kept.append((binding, value))
        result = self.visit(body)
        for binding, value in reversed(kept):
            result = binding.with_fields(var=self.visit(binding.var), value=value, body=result)
        return result


def fold_constant(expr, mod=None, fold_qnn=False):
    """Return ``expr`` with its constant subexpressions evaluated (typed on the way in); calls of quantized
    operators (``qnn.*``) only with ``fold_qnn``."""
    return _ConstantFolder(mod, fold_qnn).visit(infer_type(expr))


def FoldConstantExpr(expr, mod=None, fold_qnn=False):  # noqa: N802  (TVM's name)
    """``expr`` with its constant subexpressions folded, outside any pass (TVM's
    ``relay.transform.FoldConstantExpr``, which rewrite rules such as FakeQuantizationToInteger's call)."""
    return fold_constant(expr, mod, fold_qnn)


@register_pass("FoldConstant")
@dataclass(frozen=True)
class FoldConstant(FunctionPass):
    """Fold constant subexpressions of every function (TVM's ``relay.transform.FoldConstant``)."""

    fold_qnn: bool = False
    info = PassInfo(2, "FoldConstant")

    def transform_function(self, func, mod, ctx):
        return fold_constant(func, mod, self.fold_qnn)
