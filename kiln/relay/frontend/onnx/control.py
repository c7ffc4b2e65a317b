"""Converter of ONNX control flow that shapes decide: ``If`` with a condition known while converting.

Exporters emit ``If`` nodes whose condition is computed from shapes (``Shape -> Equal -> If``); with static shapes
that condition folds to a constant, and the node becomes the nodes of the branch it takes, converted in place
(branch nodes may read any value of the enclosing graph). A condition that depends on graph input values cannot be
converted (kiln has no Relay ``If`` lowering to compiled code yet), and the error names those inputs.
"""

from .common import OnnxOpConverter, register


@register("If")
class If(OnnxOpConverter):
    """The taken branch of an If with a compile-time condition."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        cond = ctx.value(inputs[0], "the condition of If")
        if cond.size != 1:
            raise ctx.error(f"the condition must hold one value, got shape {cond.shape}")
        taken = "then_branch" if bool(cond.reshape(-1)[0]) else "else_branch"
        return ctx.graph.convert_subgraph(attr[taken], f"{ctx.name}/{taken}", ctx)
