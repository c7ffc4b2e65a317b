"""AlterOpLayout: let the target choose operators' layouts (TVM's ``relay.transform.AlterOpLayout``).

An operator opts in with the op attribute ``FTVMAlterOpLayout``: a function ``(attrs, inputs, tinfos, out_type) ->
Expr or None`` (TVM's ``register_alter_op_layout``), typically installed by a target's schedule code. It receives
the call's attributes, its inputs (in their original layouts), the inputs' types and the call's type, and returns
None to keep the call, or a replacement. A replacement that is the same kind of layout-declaring operator with other
layouts (``conv2d(data, weight, data_layout="NCHW16c", kernel_layout="OIHW16i16o")`` over the given inputs) gets
its inputs transformed and its result carried through layout-agnostic consumers exactly as in ConvertLayout (the
same :mod:`.layout_rewriter`); any other replacement must compute the original value in the original layout.

kiln registers one alteration: the x86 one of ``nn.conv2d`` (:mod:`kiln.relay.op.strategy.x86`), which acts only
while an ``llvm`` or ``c`` target is current; without a current target the pass changes nothing.
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from ..op.op import register_alter_op_layout
from .fold_scale_util import retype_function, typed_function
from .function_pass import FunctionPass
from .layout_rewriter import rewrite_layouts

__all__ = ["AlterOpLayout", "register_alter_op_layout"]




def _alter(call):
    falter = call.op.get_attr("FTVMAlterOpLayout")
    if falter is None:
        return None
    tinfos = [a.checked_type for a in call.args]
    return lambda inputs: falter(call.attrs, inputs, tinfos, call.checked_type)


def alter_op_layout(func):
    """Apply every registered ``FTVMAlterOpLayout`` in the typed function ``func``.

    Returns ``func`` when nothing changed, else an untyped rebuilt function.
    """
    return rewrite_layouts(func, _alter)


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
