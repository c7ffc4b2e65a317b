"""AlterOpLayout: let the target choose operators' layouts (TVM's ``relay.transform.AlterOpLayout``).

An operator opts in with the op attribute ``FTVMAlterOpLayout``: a function ``(attrs, inputs, tinfos, out_type) ->
Call or None`` (TVM's ``register_alter_op_layout``), typically installed by a target's schedule code. It receives the
call's attributes, its inputs -- in the layouts the rewritten producers compute them in, as in TVM --, the original
input types (TVM passes placeholders of them: both have ``shape`` and ``dtype``) and the call's type, and returns
None to keep the call, or the call to compute it with: typically the same operator with other layouts
(``conv2d(data, weight, data_layout="NCHW16c", kernel_layout="OIHW16i16o")``) or its blocked form
(``nn.contrib_conv2d_NCHWc``). The layout rewriter (:mod:`.layout_rewriter`, shared with ConvertLayout) transforms
the inputs to the layouts the new call declares and carries its result through the operators that have a layout
rule, transforming back only where needed.

kiln's own alterations: the x86 ones of ``nn.conv2d`` and ``nn.dense`` (:mod:`kiln.relay.op.strategy.x86`), which
act only while an ``llvm`` or ``c`` target is current; without a current target the pass changes nothing.
"""

from dataclasses import dataclass

from ...error import KilnError
from ...ir.transform import PassInfo, register_pass
from ..expr import Call
from ..op.op import register_alter_op_layout
from .fold_scale_util import retype_function, typed_function
from .function_pass import FunctionPass
from .layout_rewriter import rewrite_layouts

__all__ = ["AlterOpLayout", "register_alter_op_layout"]


def call_with_altered_layouts(ref_call, attrs, args):
    """The call computing ``ref_call``: its operator's ``FTVMAlterOpLayout`` answer, or the operator over ``args``
    with ``attrs`` (TVM's ``AlterTransformMemorizerNode::CallWithNewLayouts``)."""
    falter = ref_call.op.get_attr("FTVMAlterOpLayout")
    if falter is not None:
        tinfos = [a.checked_type for a in ref_call.args]  # TVM passes placeholders; a type has the same shape
        altered = falter(attrs, list(args), tinfos, ref_call.checked_type)
        if altered is not None:
            if not isinstance(altered, Call):
                raise KilnError(f"FTVMAlterOpLayout of {ref_call.op.name} returned a {type(altered).__name__}: it "
                                f"can only replace the call with another call")
            return altered
    return ref_call.with_fields(args=tuple(args), attrs=attrs)


def alter_op_layout(func):
    """Apply every registered ``FTVMAlterOpLayout`` in the typed function ``func``.

    Returns ``func`` when nothing changed, else an untyped rebuilt function.
    """
    return rewrite_layouts(func, call_with_altered_layouts)


@register_pass("AlterOpLayout")
@dataclass(frozen=True)
class AlterOpLayout(FunctionPass):
    """Replace operators by the target's preferred form, inserting layout transforms at the boundaries.

    Examples
    --------
    >>> def alter_conv2d(attrs, inputs, tinfos, out_type):   # doctest: +SKIP
    ...     new_attrs = dict(attrs, data_layout="NCHW16c", kernel_layout="OIHW16i")
    ...     return relay.nn.conv2d(*inputs, **new_attrs)
    >>> kiln.ir.register_op_attr("nn.conv2d", "FTVMAlterOpLayout", alter_conv2d, level=11)
    >>> with tvm.transform.PassContext(opt_level=3):
    ...     mod = relay.transform.AlterOpLayout()(mod)
    """

    info = PassInfo(3, "AlterOpLayout", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        typed = typed_function(func, mod)
        out = alter_op_layout(typed)
        return func if out is typed else retype_function(out, mod)
