"""``VirtualMachine`` over a VM module it reaches only through functions (TVM's Python ``VirtualMachine``): what
``VirtualMachine(rexec, remote.cpu())`` makes for an executable loaded in an RPC server.

The executable module's ``vm_load_executable`` makes the VM module (in the server), ``init`` puts it on the device,
and each method calls the VM module's function of the same name (``set_input``, ``invoke``, ``set_outputs``...).
Arguments are passed by position, as functions take them; parameter names are resolved here with the executable's
``get_function_params``.
"""

from ...error import KilnError
from ..device import Device
from ..device import device as make_device

__all__ = ["PackedVirtualMachine"]


class PackedVirtualMachine:
    """Runs the executable module ``exe`` (a module providing ``vm_load_executable``) on ``device``.

    Parameters
    ----------
    exe : Module
        The executable, typically ``remote.load_module("vm_library.so")``.
    device : Device
        Where it runs (``remote.cpu(0)``).
    memory_cfg : str, optional
        Passed to the VM ("naive" or "pooled").
    """

    def __init__(self, exe, device, memory_cfg=None):
        if "vm_load_executable" not in exe:
            raise KilnError(f"VirtualMachine takes an Executable; the module {exe!r} is not one (it has no "
                            f"vm_load_executable)")
        devices = list(device) if isinstance(device, list | tuple) else [device]
        if not devices or devices[0] is None:
            raise KilnError("VirtualMachine: give the device to run on (remote.cpu(0))")
        dev = devices[0] if isinstance(devices[0], Device) else make_device(devices[0])
        self._exec = exe
        self.device = dev
        self.module = exe["vm_load_executable"]()
        self.module["init"](dev, memory_cfg)
        self._funcs: dict = {}

    def _f(self, name):
        if name not in self._funcs:
            self._funcs[name] = self.module[name]
        return self._funcs[name]

    def _positional(self, func_name, args, kwargs) -> list:
        if not kwargs:
            return list(args)
        names = list(self._exec["get_function_params"](func_name))
        values = list(args) + [None] * (len(names) - len(args))
        for key, value in kwargs.items():
            if key not in names:
                raise KilnError(f"{func_name} has no parameter named {key!r}; parameters: {names}")
            values[names.index(key)] = value
        missing = [n for n, v in zip(names, values, strict=False) if v is None]
        if missing:
            raise KilnError(f"{func_name}: missing arguments for parameters {', '.join(missing)}")
        return values

    def set_input(self, func_name, *args, **kwargs):
        """Set the arguments of ``func_name`` (by position or parameter name)."""
        self._f("set_input")(func_name, *self._positional(func_name, args, kwargs))

    def set_one_input(self, func_name, *args, **kwargs):
        """Set one argument: ``(name_or_index, value)`` or ``name=value``."""
        if kwargs:
            if args or len(kwargs) != 1:
                raise KilnError("set_one_input: give one argument, as (key, value) or key=value")
            (key, value), = kwargs.items()
        elif len(args) == 2:
            key, value = args
        else:
            raise KilnError("set_one_input: give one argument, as (key, value) or key=value")
        self._f("set_one_input")(func_name, key, value)

    def invoke(self, func_name="main", *args, **kwargs):
        """Run ``func_name`` (on ``args`` when given); returns the result (arrays stay in the server)."""
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        return self._f("invoke")(func_name)

    def run(self, *args, **kwargs):
        """``invoke("main", *args, **kwargs)``."""
        return self.invoke("main", *args, **kwargs)

    def invoke_stateful(self, func_name, *args, **kwargs):
        """Run ``func_name`` and keep its outputs for :meth:`get_outputs`."""
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        self._f("invoke_stateful")(func_name)

    def invoke_with_outputs(self, func_name, input_args, output_args):
        """Run ``func_name`` on ``input_args`` (by name) writing its results into ``output_args``."""
        if input_args:
            self.set_input(func_name, **input_args)
        self._f("set_outputs")(func_name, *output_args)
        self._f("invoke")(func_name)

    def get_outputs(self) -> list:
        return list(self._f("get_outputs")())

    def get_output(self, index):
        return self._f("get_output")(index)

    def get_num_outputs(self) -> int:
        return self._f("get_num_outputs")()

    def get_input_index(self, input_name, func_name="main") -> int:
        return self._f("get_input_index")(input_name, func_name)

    def benchmark(self, device, *args, func_name="main", repeat=5, number=5, min_repeat_ms=None, end_to_end=False,
                  **kwargs):
        """Time ``func_name`` where the VM runs (TVM's ``VirtualMachine.benchmark``)."""
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        timer = self.module.time_evaluator("invoke", device, number=number, repeat=repeat,
                                           min_repeat_ms=min_repeat_ms or 0)
        return timer(func_name)

    def __repr__(self):
        return f"VirtualMachine({self.module!r} on {self.device})"
