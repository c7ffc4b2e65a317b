"""kiln.relay.transform: Relay passes, one per file."""

from ...ir.transform import ModulePass, Pass, PassContext, PassInfo, Sequential, module_pass
from . import verify  # noqa: F401  (registers the Relay checks of the verification instruments)
from .function_pass import FunctionPass, function_pass
from .infer_type import InferType, infer_type
