"""kiln.runtime.vm: the Relay virtual machine (TVM's ``tvm.runtime.vm``).

* :mod:`.instruction`: the instruction set; :mod:`.function`: a bytecode function and its parameter types;
* :mod:`.executable`: :class:`Executable` (bytecode, constants, kernel library) and :mod:`.serialize`, its format;
* :mod:`.vm`: :class:`VirtualMachine`, over :mod:`.interpreter` (the loop), :mod:`.memory` (storage and its pool),
  :mod:`.kernel_call` (calling compiled kernels) and :mod:`.objects` (ADTs and closures).

``relay.vm.compile`` (in ``kiln.relay.backend.vm``) produces executables.
"""

from .executable import Executable
from .function import VMFunction
from .objects import ADT, VMClosure
from .vm import VirtualMachine

__all__ = ["ADT", "Executable", "VMClosure", "VMFunction", "VirtualMachine"]
