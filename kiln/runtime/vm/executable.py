"""The VM executable (TVM's ``runtime.vm.Executable``): bytecode functions, constants, kernel names and the library.

An :class:`Executable` is a runtime :class:`~kiln.runtime.Module` of type ``"VMExecutable"`` whose one import is the
library of compiled kernels, so ``exe.mod.export_library(path)`` writes one shared library (the kernels linked, the
executable serialized into the library's blob) and ``kiln.runtime.load_module(path)`` gives the executable back
(through the loader ``runtime.module.loadbinary_VMExecutable``), ready for
:class:`~kiln.runtime.vm.VirtualMachine`. :meth:`Executable.save` and :meth:`Executable.load_exec` do the same with the
bytecode as bytes beside the library; the format is :mod:`~kiln.runtime.vm.serialize`'s.
"""

from ...error import KilnError
from ..container import Map
from ..module import Module
from ..ndarray import NDArray
from ..ndarray import array as nd_array
from ..packed_func import PackedFunc, register_func
from ..params import load_param_dict, save_param_dict
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

    def __new__(cls, functions=None, constants=None, primitives=None, lib=None):
        if isinstance(functions, Module) and constants is None:
            # TVM's Executable(mod): the executable module itself (kiln's module is the executable)
            if not isinstance(functions, Executable):
                raise KilnError(f"Executable(mod): {functions!r} is not a VM executable module (load_module of a "
                                f"library exported from relay.vm.compile gives one)")
            return functions
        return super().__new__(cls)

    def __init__(self, functions, constants=None, primitives=None, lib=None):
        if functions is self:  # Executable(mod) of an executable: nothing to build
            return
        super().__init__()
        for func in functions:
            if not isinstance(func, VMFunction):
                raise KilnError(f"Executable: functions must be VMFunctions, got {type(func).__name__}")
        self.constants = tuple(c if isinstance(c, NDArray | serialize.LateBound) else nd_array(c)
                               for c in constants)
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

    # ---- late-bound constants (TVM's: large constants kept apart from the executable, loaded before it runs)
    def get_late_bound_consts(self, byte_limit):
        """Take the constants of at least ``byte_limit`` bytes out of the executable; returns them by name
        (``const_<index>``, a ``Map``). The executable then needs them loaded back before a VM runs it."""
        if any(isinstance(c, serialize.LateBound) for c in self.constants):
            raise KilnError("get_late_bound_consts: the executable's late-bound constants were already taken out")
        taken = Map()
        constants = list(self.constants)
        for index, const in enumerate(constants):
            if isinstance(const, NDArray) and const.handle.nbytes >= int(byte_limit):
                name = f"const_{index}"
                taken[name] = const
                constants[index] = serialize.LateBound(name, const.shape, const.dtype)
        self.constants = tuple(constants)
        return taken

    def move_late_bound_consts(self, path, byte_limit):
        """Write the constants of at least ``byte_limit`` bytes to the file ``path`` (a parameter dictionary) and
        take them out of the executable."""
        with open(path, "wb") as file:
            file.write(save_param_dict(self.get_late_bound_consts(byte_limit)))

    def load_late_bound_consts(self, path):
        """Load the late-bound constants from the file ``move_late_bound_consts`` wrote."""
        with open(path, "rb") as file:
            self.load_late_bound_consts_from_map(load_param_dict(file.read()))

    def load_late_bound_consts_from_map(self, consts):
        """Put the late-bound constants back from ``consts`` (by name; each must have its shape and dtype)."""
        constants = list(self.constants)
        for index, const in enumerate(constants):
            if not isinstance(const, serialize.LateBound):
                continue
            if const.name not in consts:
                raise KilnError(f"load_late_bound_consts: no constant named {const.name!r} was given (names: "
                                f"{', '.join(sorted(consts)) or 'none'})")
            value = consts[const.name]
            value = value if isinstance(value, NDArray) else nd_array(value)
            if tuple(value.shape) != const.shape or value.dtype != const.dtype:
                raise KilnError(f"load_late_bound_consts: {const.name} must be {const.dtype}{list(const.shape)}, "
                                f"got {value.dtype}{list(value.shape)}")
            constants[index] = value
        self.constants = tuple(constants)

    def late_bound_missing(self) -> list:
        """The names of the late-bound constants not loaded yet."""
        return [c.name for c in self.constants if isinstance(c, serialize.LateBound)]

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
                  "get_function_params", "vm_load_executable", "get_late_bound_consts", "move_late_bound_consts",
                  "load_late_bound_consts", "load_late_bound_consts_from_map")

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
