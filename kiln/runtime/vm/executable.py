"""The VM executable (TVM's ``runtime.vm.Executable``): bytecode functions, constants, kernel names and the library.

An :class:`Executable` is a runtime :class:`~kiln.runtime.Module` of type ``"VMExecutable"`` whose one import is the
library of compiled kernels, so ``exe.mod.export_library(path)`` writes one shared library (the kernels linked, the
executable serialized into the library's blob) and ``kiln.runtime.load_module(path)`` gives the executable back
(through the loader ``runtime.module.loadbinary_VMExecutable``), ready for
:class:`~kiln.runtime.vm.VirtualMachine`. :meth:`Executable.save` and :meth:`Executable.load_exec` do the same with the
bytecode as bytes beside the library; the format is :mod:`~kiln.runtime.vm.serialize`'s.
"""

from ...error import KilnError
from ..module import Module
from ..ndarray import NDArray
from ..ndarray import array as nd_array
from ..packed_func import PackedFunc, register_func
from . import serialize
from .function import VMFunction, describe_type

__all__ = ["Executable"]


class Executable(Module):
    """A compiled VM program.

    Parameters
    ----------
    functions : sequence of VMFunction
        The functions; ``InvokeFunc``/``AllocClosure`` refer to them by position.
    constants : sequence of NDArray or numpy array
        What ``LoadConst`` loads, by position.
    primitives : sequence of str
        The kernel names ``InvokePacked`` refers to by position, looked up in ``lib``.
    lib : Module, optional
        The library holding the kernels.
    """

    type_key = "VMExecutable"

    def __init__(self, functions, constants, primitives, lib=None):
        super().__init__()
        for func in functions:
            if not isinstance(func, VMFunction):
                raise KilnError(f"Executable: functions must be VMFunctions, got {type(func).__name__}")
        self.constants = tuple(c if isinstance(c, NDArray) else nd_array(c) for c in constants)
        self.primitive_ops = list(primitives)
        # the checks a loaded executable gets: whatever the VM runs has every index in range
        self.functions = serialize.check(functions, len(self.constants), self.primitive_ops)
        self.func_index = {f.name: i for i, f in enumerate(self.functions)}
        if lib is not None:
            self.import_module(lib)

    # ---- TVM's Executable API
    @property
    def mod(self):
        """The executable as a runtime Module (itself): ``exe.mod.export_library(path)``."""
        return self

    @property
    def lib(self):
        """The library of kernels (None when the program calls none)."""
        return self.imported_modules[0] if self.imported_modules else None

    def get_lib(self):
        """The library of kernels."""
        return self.lib

    def save(self) -> tuple:
        """``(bytecode, lib)``: the serialized executable (bytes) and the library of kernels.

        Examples
        --------
        >>> code, lib = exe.save()                                   # doctest: +SKIP
        >>> lib.export_library("kernels.so")                         # doctest: +SKIP
        >>> exe2 = Executable.load_exec(code, kiln.runtime.load_module("kernels.so"))   # doctest: +SKIP
        """
        return self.save_to_bytes(), self.lib

    @staticmethod
    def load_exec(bytecode, lib) -> "Executable":
        """The executable serialized in ``bytecode`` (from :meth:`save`), with the kernels of ``lib``.

        Raises
        ------
        KilnError
            Naming what is wrong with damaged or malformed bytecode.
        """
        if lib is not None and not isinstance(lib, Module):
            raise KilnError(f"load_exec: lib must be a runtime Module, got {type(lib).__name__}")
        functions, constants, primitives = serialize.load(bytecode)
        return Executable(functions, constants, primitives, lib)

    def save_to_bytes(self) -> bytes:
        return serialize.dump(self.functions, self.constants, self.primitive_ops)

    @property
    def globals(self) -> list:
        """The names of the functions."""
        return [f.name for f in self.functions]

    @property
    def bytecode(self) -> str:
        """The instructions of every function, as text."""
        return "\n\n".join(str(f) for f in self.functions) + "\n"

    @property
    def stats(self) -> str:
        """Counts of functions, instructions, constants and kernels, and the constants' shapes."""
        lines = ["Relay VM executable statistics:",
                 f"  Functions ({len(self.functions)}): " + ", ".join(
                     f"{f.name} ({len(f.instructions)} instructions)" for f in self.functions),
                 f"  Constants ({len(self.constants)}): " + ", ".join(
                     f"{c.shape} {c.dtype}" for c in self.constants[:32]) + (" ..." if len(self.constants) > 32
                                                                             else ""),
                 f"  Kernels ({len(self.primitive_ops)}): " + ", ".join(self.primitive_ops)]
        return "\n".join(lines)

    def function(self, name) -> VMFunction:
        """The function named ``name`` (KilnError listing the functions when there is none)."""
        index = self.func_index.get(name)
        if index is None:
            raise KilnError(f"the executable has no function {name!r}; functions: {', '.join(self.globals)}")
        return self.functions[index]

    def get_function_arity(self, func_name) -> int:
        """The number of parameters of ``func_name``."""
        return len(self.function(func_name).params)

    def get_function_param_name(self, func_name, index) -> str:
        """The name of parameter ``index`` of ``func_name``."""
        params = self.function(func_name).params
        if not 0 <= index < len(params):
            raise KilnError(f"{func_name} has {len(params)} parameters, no parameter {index}")
        return params[index]

    def get_function_param_type(self, func_name, index) -> str:
        """The type parameter ``index`` of ``func_name`` must have, as text."""
        func = self.function(func_name)
        self.get_function_param_name(func_name, index)
        return describe_type(func.param_types[index])

    def get_function_params(self, func_name) -> list:
        """The parameter names of ``func_name``."""
        return list(self.function(func_name).params)

    def vm_load_executable(self):
        """A VirtualMachine module over this executable (on the CPU until its ``init`` says otherwise): what TVM's
        Python ``VirtualMachine`` asks an executable module for, here or in an RPC server."""
        from ..device import cpu
        from .vm import VirtualMachine

        return VirtualMachine(self, cpu(0))

    # ---- runtime Module interface
    _FUNCTIONS = ("get_bytecode", "get_stats", "get_lib", "save", "get_function_arity", "get_function_param_name",
                  "get_function_params", "vm_load_executable")

    def get_own_function(self, name):
        table = {"get_bytecode": lambda: self.bytecode, "get_stats": lambda: self.stats}
        if name not in self._FUNCTIONS:
            return None
        return PackedFunc(table.get(name) or getattr(self, name), name)

    def own_function_names(self) -> list:
        return list(self._FUNCTIONS)

    def __repr__(self):
        return (f"Executable(functions={self.globals}, {len(self.constants)} constants, "
                f"{len(self.primitive_ops)} kernels)")


@register_func("runtime.module.loadbinary_VMExecutable")
def _load_executable(data: bytes) -> Executable:
    """Rebuild an executable exported inside a library (load_module attaches the library as its import)."""
    functions, constants, primitives = serialize.load(data)
    return Executable(functions, constants, primitives)
