"""Calling a compiled kernel from an ``InvokePacked`` instruction with the arrays held in registers.

A packed function of a compiled library takes arrays as ``DLTensor`` structures (see :mod:`kiln.runtime.library`).
Building them for every call costs about 15 us per call; the graph executor builds them once because its arrays
never move. The VM's arrays are new objects on every run, so each ``InvokePacked`` site keeps its argument
structures and, per call, only stores each array's data address, rewriting a slot's shape and dtype when they
differ from the previous call's (a dynamic shape); slots that always receive the same constant are filled once.
Any other callable is called with the arrays as they are.
"""

import ctypes

import numpy as np

from ...error import KilnError, RuntimeArgumentError
from ..library import TYPE_CODE_DLTENSOR, DLTensor, LibraryFunction, TVMValue, _dl_dtype

__all__ = ["KernelCall"]

_CPU = (1, 0)


class KernelCall:
    """Calls kernel ``func`` (named ``name``) with the values of registers ``arg_registers``.

    ``constants`` maps the registers that always hold the same array (loaded by ``LoadConst`` alone) to it: their
    argument structures are filled once, here, and never touched again (most of a model's arguments are weights).
    """

    __slots__ = ("name", "registers", "_call")

    def __init__(self, func, name, arg_registers, constants=None):
        self.name = name
        self.registers = tuple(arg_registers)
        target = getattr(func, "_func", func)
        if isinstance(target, LibraryFunction) and target.packed:
            self._call = self._packed(target, constants or {})
        else:
            registers = self.registers
            self._call = lambda regs: func(*[regs[r] for r in registers])

    def __call__(self, regs):
        self._call(regs)

    def _packed(self, target, constants):
        count = len(self.registers)
        values = (TVMValue * max(count, 1))()
        codes = (ctypes.c_int32 * max(count, 1))(*([TYPE_CODE_DLTENSOR] * count))
        tensors = [DLTensor() for _ in range(count)]
        shape_arrays: list = [None] * count  # keeps each slot's shape array alive
        seen: list = [None] * count  # (shape, dtype) each slot was last described with
        for i, tensor in enumerate(tensors):
            values[i].v_handle = ctypes.addressof(tensor)
            tensor.device.device_type, tensor.device.device_id = _CPU
        ret, ret_code = TVMValue(), ctypes.c_int32(0)
        ret_ref, code_ref = ctypes.byref(ret), ctypes.byref(ret_code)
        native, library, name = target._fn, target.library, self.name

        def describe(i, arr):
            if type(arr) is not np.ndarray:
                raise RuntimeArgumentError(f"{name}: argument {i} is a {type(arr).__name__}, not a tensor")
            if not arr.flags.c_contiguous:
                raise RuntimeArgumentError(f"{name}: argument {i} is not contiguous")
            tensor = tensors[i]
            shape_arrays[i] = shape = (ctypes.c_int64 * max(arr.ndim, 1))(*arr.shape)
            tensor.ndim = arr.ndim
            tensor.shape = ctypes.addressof(shape)
            tensor.dtype = _dl_dtype(arr.dtype)
            seen[i] = (arr.shape, arr.dtype)

        for i, r in enumerate(self.registers):
            if r in constants:
                describe(i, constants[r])
                tensors[i].data = constants[r].ctypes.data
        slots = tuple((i, r) for i, r in enumerate(self.registers) if r not in constants)

        def call(regs):
            for i, r in slots:
                arr = regs[r]
                key = seen[i]
                # dtypes of the built-in types are singletons: identity is the fast check, equality the exact one
                if key is None or type(arr) is not np.ndarray or arr.shape != key[0] or (
                        arr.dtype is not key[1] and arr.dtype != key[1]):
                    describe(i, arr)
                tensors[i].data = arr.ctypes.data
            if native(values, codes, count, ret_ref, code_ref, None) != 0:
                message = library.last_error()
                raise RuntimeArgumentError(message if name in message else f"{name}: {message}")

        return call


def check_kernel(lib, name):
    """The function ``name`` of ``lib``, or a KilnError saying the executable's library lacks it."""
    if lib is None:
        raise KilnError(f"VirtualMachine: the executable calls kernel {name!r} but has no library")
    try:
        return lib.get_function(name)
    except KilnError:
        raise KilnError(f"VirtualMachine: the executable's library has no kernel {name!r}") from None
