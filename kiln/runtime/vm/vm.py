"""``VirtualMachine``: runs a VM :class:`~kiln.runtime.vm.Executable` on a device (TVM's ``runtime.vm.VirtualMachine``).

The VM checks each argument against the function's parameter type (count, dtype, rank and every static dimension),
copies a numpy array that is not contiguous or not 64-byte aligned (the kernels require both), and returns tensors
as NDArrays sharing the VM's storage (the storage pool never hands out a block a result still uses) and tuples as
Python tuples, as the reference interpreter does. The VM is a runtime Module too: ``vm["invoke"]("main")`` runs
``main`` on the inputs given to :meth:`set_input`, which is what :meth:`benchmark` times.
"""

import numpy as np

from ...error import KilnError, RuntimeArgumentError
from ..device import Device
from ..device import device as make_device
from ..module import Module
from ..ndarray import ALIGNMENT, NDArray, _aligned_empty
from ..packed_func import PackedFunc
from .executable import Executable
from .function import DATA, OBJECT, TUPLE, describe_type
from .interpreter import DEFAULT_MAX_CALL_DEPTH, prepare, run
from .kernel_call import check_kernel
from .memory import StoragePool
from .objects import ADT, VMClosure

__all__ = ["VirtualMachine"]

_MODULE_FUNCTIONS = ("init", "invoke", "set_input", "set_one_input", "set_outputs", "invoke_stateful", "get_outputs",
                     "get_output", "get_num_outputs", "get_input_index")



def _plain(value):
    """A data type value's fields as the VM holds them (NDArrays as numpy arrays, nested values alike)."""
    if isinstance(value, NDArray):
        return value.handle
    if isinstance(value, ADT):
        return ADT(value.tag, [_plain(v) for v in value.fields])
    if isinstance(value, tuple | list):
        return ADT(0, [_plain(v) for v in value])
    return value

class VirtualMachine(Module):
    """Runs ``exe`` on ``device``.

    Parameters
    ----------
    exe : Executable
        From ``relay.vm.compile``, ``Executable.load_exec`` or ``kiln.runtime.load_module``.
    device : Device or list of Device
        The CPU (``kiln.cpu(0)``).
    memory_cfg : str, optional
        Accepted for TVM compatibility ("naive" or "pooled"); kiln always pools storage.

    Examples
    --------
    >>> exe = relay.vm.compile(mod, target="llvm")              # doctest: +SKIP
    >>> vm = VirtualMachine(exe, kiln.cpu(0))                   # doctest: +SKIP
    >>> out = vm.invoke("main", x)                              # doctest: +SKIP
    """

    type_key = "VirtualMachine"

    def __new__(cls, exe=None, device=None, memory_cfg=None):
        if cls is VirtualMachine and isinstance(exe, Module) and not isinstance(exe, Executable):
            # an executable in another process (an RPC session's module): drive it through its functions
            from .packed_vm import PackedVirtualMachine

            return PackedVirtualMachine(exe, device, memory_cfg)
        return super().__new__(cls)

    def __init__(self, exe, device, memory_cfg=None):
        super().__init__()
        if not isinstance(exe, Executable):
            raise KilnError(f"VirtualMachine takes an Executable (relay.vm.compile, Executable.load_exec or "
                            f"runtime.load_module of an exported one), not a {type(exe).__name__}")
        self.device = _check_device(device)
        if memory_cfg not in (None, "naive", "pooled") and not isinstance(memory_cfg, dict):
            raise KilnError(f"VirtualMachine: unknown memory_cfg {memory_cfg!r} (naive or pooled)")
        self.exe = exe
        self.pool = StoragePool()
        self.max_call_depth = DEFAULT_MAX_CALL_DEPTH
        self._kernels = [check_kernel(exe.lib, name) for name in exe.primitive_ops]
        missing = exe.late_bound_missing()
        if missing:
            raise KilnError(f"VirtualMachine: the executable's late-bound constants {', '.join(missing)} were not "
                            f"loaded (load_late_bound_consts or load_late_bound_consts_from_map)")
        self._constants = [c.handle for c in exe.constants if isinstance(c, NDArray)]
        self._prepared: list | None = None
        self._inputs: dict = {}
        self._outputs: list = []
        self._given_outputs: dict = {}  # func_name -> arrays the next run writes its results into (set_outputs)
        self.import_module(exe)

    def init(self, device, memory_cfg=None):
        """Run on ``device`` (the ``"init"`` function a VM module gives TVM's Python wrapper)."""
        self.device = _check_device(device)

    # ---- what the interpreter reads
    def kernel(self, index):
        return self._kernels[index]

    def kernel_name(self, index) -> str:
        return self.exe.primitive_ops[index]

    def constant(self, index):
        return self._constants[index]

    def prepared_functions(self) -> list:
        if self._prepared is None:
            self._prepared = [prepare(f, self) for f in self.exe.functions]
        return self._prepared

    # ---- inputs
    def _convert(self, value, ptype, where):
        kind = ptype[0]
        if kind == TUPLE:
            if isinstance(value, ADT):
                value = value.fields
            if not isinstance(value, tuple | list) or len(value) != len(ptype[1]):
                raise RuntimeArgumentError(f"{where}: expects a tuple of type {describe_type(ptype)}")
            return ADT(0, [self._convert(v, t, f"{where}[{i}]") for i, (v, t) in enumerate(zip(value, ptype[1],
                                                                                              strict=True))])
        if kind == DATA:  # a value of a data type: its fields are taken as they are
            if not isinstance(value, ADT) or value.tag == 0:
                raise RuntimeArgumentError(f"{where}: expects a data type value (an ADT of a constructor's tag), got "
                                           f"{type(value).__name__}")
            return _plain(value)
        if kind == OBJECT:  # a function value
            if not (isinstance(value, VMClosure) and value.executable is self.exe):
                raise RuntimeArgumentError(f"{where}: expects a closure this executable made (returned by one of its "
                                           f"functions), got {type(value).__name__}")
            return value
        dtype = ptype[2]
        if isinstance(value, NDArray):
            arr = value.handle
        elif isinstance(value, np.ndarray | np.generic):
            arr = np.asarray(value)
        elif isinstance(value, bool | int | float | list):
            try:
                arr = np.asarray(value, dtype=dtype)
                fits = np.array_equal(arr, np.asarray(value))
            except (ValueError, TypeError, OverflowError):  # a ragged list, a number out of the dtype's range
                fits = False
            if not fits:
                raise RuntimeArgumentError(f"{where}: the Python value {value!r:.60} does not fit dtype {dtype}")
        else:
            raise RuntimeArgumentError(f"{where}: expects a tensor (NDArray, numpy array or Python number), got "
                                       f"{type(value).__name__}")
        shape = ptype[1]
        if arr.dtype.name != dtype:
            raise RuntimeArgumentError(f"{where}: expects dtype {dtype}, got {arr.dtype.name} "
                                       f"(type {describe_type(ptype)})")
        if arr.ndim != len(shape) or any(want is not None and want != got for want, got in zip(shape, arr.shape,
                                                                                              strict=True)):
            raise RuntimeArgumentError(f"{where}: expects shape {describe_type(ptype)}, got {arr.shape}")
        if not arr.flags.c_contiguous or arr.ctypes.data % ALIGNMENT:
            aligned = _aligned_empty(arr.shape, arr.dtype)
            np.copyto(aligned, arr)
            arr = aligned
        return arr

    def _arguments(self, func_name, args, kwargs) -> list:
        func = self.exe.function(func_name)
        names = list(func.params)
        if len(args) > len(names):
            raise RuntimeArgumentError(f"{func_name} takes {len(names)} arguments ({', '.join(names)}), got "
                                       f"{len(args)}")
        values = list(args) + [None] * (len(names) - len(args))
        for key, value in kwargs.items():
            if key not in names:
                raise RuntimeArgumentError(f"{func_name} has no parameter named {key!r}; parameters: {names}")
            index = names.index(key)
            if values[index] is not None:
                raise RuntimeArgumentError(f"{func_name}: parameter {key!r} is given twice")
            values[index] = value
        missing = [n for n, v in zip(names, values, strict=True) if v is None]
        if missing:
            raise RuntimeArgumentError(f"{func_name}: missing arguments for parameters {', '.join(missing)}")
        return [self._convert(v, t, f"{func_name} argument {i} (%{n})")
                for i, (v, t, n) in enumerate(zip(values, func.param_types, names, strict=True))]

    def set_input(self, func_name, *args, **kwargs):
        """Set the arguments of ``func_name`` (positionally or by parameter name) for later runs.

        Raises
        ------
        RuntimeArgumentError
            A wrong number of arguments, an unknown name, or a value of the wrong dtype or shape.
        """
        self._inputs[func_name] = self._arguments(func_name, args, kwargs)

    def set_one_input(self, func_name, *args, **kwargs):
        """Set one argument of ``func_name``: ``(name_or_index, value)`` or ``name=value``; the others keep what
        they were set to."""
        if len(args) == 2 and not kwargs:
            key, value = args
        elif len(kwargs) == 1 and not args:
            (key, value), = kwargs.items()
        else:
            raise RuntimeArgumentError("set_one_input: give one argument, as (key, value) or key=value")
        func = self.exe.function(func_name)
        names = list(func.params)
        if isinstance(key, str):
            if key not in names:
                raise RuntimeArgumentError(f"{func_name} has no parameter named {key!r}; parameters: {names}")
            index = names.index(key)
        else:
            index = int(key)
            if not 0 <= index < len(names):
                raise RuntimeArgumentError(f"{func_name} has {len(names)} parameters, no parameter {index}")
        inputs = self._inputs.setdefault(func_name, [None] * len(names))
        inputs[index] = self._convert(value, func.param_types[index],
                                      f"{func_name} argument {index} (%{names[index]})")

    def set_outputs(self, func_name, *outputs):
        """Make the next run of ``func_name`` write its results (a tuple flattened) into ``outputs``."""
        self.exe.function(func_name)
        for k, out in enumerate(outputs):
            if not isinstance(out, NDArray):
                raise RuntimeArgumentError(f"set_outputs: output {k} must be an NDArray, got {type(out).__name__}")
        self._given_outputs[func_name] = list(outputs)

    def invoke_with_outputs(self, func_name, input_args, output_args):
        """Run ``func_name`` on ``input_args`` (a dict by parameter name) writing its results into
        ``output_args`` (TVM's ``invoke_with_outputs``)."""
        if input_args:
            self.set_input(func_name, **input_args)
        self.set_outputs(func_name, *output_args)
        self.invoke(func_name)

    def get_input_index(self, input_name, func_name="main") -> int:
        """The position of parameter ``input_name`` of ``func_name`` (-1 when there is none, as in TVM)."""
        params = self.exe.function(func_name).params
        return params.index(input_name) if input_name in params else -1

    # ---- running
    def _invoke(self, func_name):
        if func_name not in self._inputs:
            if self.exe.get_function_arity(func_name):
                raise KilnError(f"invoke: the inputs of {func_name!r} were never set (set_input, or pass them)")
            self._inputs[func_name] = []
        unset = [n for n, v in zip(self.exe.function(func_name).params, self._inputs[func_name], strict=True)
                 if v is None]
        if unset:
            raise KilnError(f"invoke: the inputs {', '.join(unset)} of {func_name!r} were never set (set_one_input)")
        with np.errstate(all="ignore"):
            result = run(self, self.exe.func_index[func_name], self._inputs[func_name])
        given = self._given_outputs.pop(func_name, None)
        if given is not None:
            _write_outputs(func_name, self._to_user(result), given)
        return result

    def invoke(self, func_name="main", *args, **kwargs):
        """Run ``func_name`` on ``args`` (or on the inputs given to :meth:`set_input`); returns an NDArray, an ADT
        (a tuple of its fields) for a tuple or constructor result, or a closure."""
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        return self._to_user(self._invoke(func_name))

    def run(self, *args, **kwargs):
        """``invoke("main", *args, **kwargs)``."""
        return self.invoke("main", *args, **kwargs)

    def invoke_stateful(self, func_name, *args, **kwargs):
        """Run ``func_name`` and keep its outputs for :meth:`get_outputs`."""
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        self._outputs = _flatten(self._to_user(self._invoke(func_name)))

    def get_outputs(self) -> list:
        """The outputs of the last :meth:`invoke_stateful`, a tuple result flattened, as NDArrays."""
        return list(self._outputs)

    def get_num_outputs(self) -> int:
        return len(self._outputs)

    def get_output(self, index):
        if not 0 <= index < len(self._outputs):
            raise KilnError(f"get_output: index {index} is out of range ({len(self._outputs)} outputs)")
        return self._outputs[index]

    def _to_user(self, value):
        if type(value) is np.ndarray:
            return NDArray(value, self.device)
        if type(value) is ADT:  # TVM hands out the ADT (a tuple of its fields, here)
            return ADT(value.tag, (self._to_user(v) for v in value))
        if type(value) is VMClosure or value is None:
            return value
        raise KilnError(f"the VM produced a value of unknown kind {type(value).__name__}")

    def benchmark(self, device, *args, func_name="main", repeat=5, number=5, min_repeat_ms=None, end_to_end=False,
                  **kwargs):
        """Time ``func_name`` (TVM's ``VirtualMachine.benchmark``): seconds per run as a ProfileResult.

        Parameters
        ----------
        device : Device
            The device (the CPU).
        args, kwargs
            The inputs (else those given to :meth:`set_input`).
        repeat, number, min_repeat_ms
            ``repeat`` measurements of ``number`` runs each (more runs until one takes ``min_repeat_ms``).
        end_to_end : bool
            Accepted for TVM compatibility (inputs already live on the CPU).
        """
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        timer = self.time_evaluator("invoke", device, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms or 0)
        return timer(func_name)

    # ---- runtime Module interface
    def get_own_function(self, name):
        return PackedFunc(getattr(self, name), name) if name in _MODULE_FUNCTIONS else None

    def own_function_names(self) -> list:
        return list(_MODULE_FUNCTIONS)

    def __repr__(self):
        return f"VirtualMachine({self.exe!r}, {self.device})"


def _check_device(device) -> Device:
    devices = list(device) if isinstance(device, list | tuple) else [device]
    if not devices or devices[0] is None:
        raise KilnError("VirtualMachine: give the device to run on (kiln.cpu(0))")
    devices = [d if isinstance(d, Device) else make_device(d) for d in devices]
    if any(d.is_remote for d in devices):
        raise KilnError(f"VirtualMachine: {devices[0]} is a device of an RPC session; run an executable loaded "
                        f"there (remote.load_module) on it")
    if any(not d.exist for d in devices):
        raise KilnError(f"VirtualMachine: kiln runs on the CPU only, got {', '.join(map(str, devices))}")
    return devices[0]


def _write_outputs(func_name, result, outputs):
    results = _flatten(result)
    if len(results) != len(outputs):
        raise RuntimeArgumentError(f"set_outputs: {func_name} returns {len(results)} tensors, {len(outputs)} "
                                   f"outputs were given")
    for k, (value, out) in enumerate(zip(results, outputs, strict=True)):
        if tuple(out.shape) != tuple(value.shape) or out.dtype != value.dtype:
            raise RuntimeArgumentError(f"set_outputs: output {k} of {func_name} is {value.dtype}{list(value.shape)}"
                                       f", the given array is {out.dtype}{list(out.shape)}")
        out.copyfrom(value)


def _flatten(value) -> list:
    """The tensors of a result, a tuple taken apart depth first."""
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]
