"""kiln.relay.backend.vm (also ``kiln.relay.vm``): the Relay VM compiler (TVM's ``relay.backend.vm``).

* :mod:`.compiler`: ``compile(mod, target, params) -> Executable`` and ``VMCompiler``: the standard optimizations,
  the VM pipeline (A-normal form, lambda lifting, LowerTE, ManifestAlloc, MemoryPlan), the kernel library;
* :mod:`.function_compiler`: bytecode for one Relay function;
* :mod:`.executor`: ``VMExecutor``, what ``relay.create_executor("vm", ...)`` returns.

The executable and the interpreter live in :mod:`kiln.runtime.vm`.
"""

from ....runtime.vm import Executable, VirtualMachine
from .compiler import VM_PIPELINE, VMCompiler, compile
from .executor import VMExecutor

__all__ = ["Executable", "VirtualMachine", "VMCompiler", "VMExecutor", "VM_PIPELINE", "compile"]
