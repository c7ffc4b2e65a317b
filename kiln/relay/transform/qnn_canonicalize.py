"""QnnCanonicalize: every quantized operator (``qnn.*``) rewritten in plain Relay operators by its
``FTVMQnnCanonicalize`` hook (:mod:`kiln.relay.qnn.op.canonicalize`), so the program can be lowered and built.

TVM's ``relay.qnn.transform.CanonicalizeOps`` (which its build runs inside ``relay.qnn.transform.Legalize``). Here it
is a pass of its own at opt_level 0 in ``relay.build``'s pipeline: lowering needs it at every optimization level.
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, register_pass
from .function_pass import FunctionPass
from .legalize import legalize


@register_pass("QnnCanonicalize")
@dataclass(frozen=True)
class QnnCanonicalize(FunctionPass):
    """Rewrite quantized operators in plain Relay operators (see the module docstring)."""

    info = PassInfo(0, "QnnCanonicalize", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return legalize(func, mod, "FTVMQnnCanonicalize")
