"""Numpy semantics of the memory and VM dialects, so the reference interpreter runs a program after ManifestAlloc and
MemoryPlan and checks them.

A storage block is a numpy byte array filled with ``0xFF`` (a float read from it before being written is NaN), a
tensor a view of its bytes, and ``vm.invoke_tvm_op`` evaluates a primitive Relay function and writes the result
into its output views. Tensors the memory planner placed in one block really share bytes here, so a plan that lets
two live tensors overlap changes the interpreter's result: the interpreter is an oracle for the planner.
"""

import numpy as np

from ...error import KilnError
from .common import np_dtype, register


@register("memory.alloc_storage")
def alloc_storage(attrs, size):
    nbytes = int(size)
    if nbytes < 0:
        raise KilnError(f"memory.alloc_storage: negative size {nbytes}")
    return np.full(nbytes, 0xFF, np.uint8)


@register("memory.alloc_tensor")
def alloc_tensor(attrs, storage, offset, shape):
    shape = tuple(int(d) for d in shape)
    dtype = np_dtype(attrs.dtype)
    start = int(offset)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if start < 0 or start + nbytes > storage.size:
        raise KilnError(f"memory.alloc_tensor: {nbytes} bytes at offset {start} do not fit a storage of "
                        f"{storage.size} bytes")
    return storage[start:start + nbytes].view(dtype).reshape(shape)


@register("memory.kill")
def kill(attrs, value):
    return ()


@register("vm.invoke_tvm_op")
def invoke_tvm_op(attrs, func, inputs, outputs):
    from ..interpreter import evaluate_expr  # the interpreter imports this package

    function = getattr(func, "func", None)
    if function is None or not function.is_primitive():
        raise KilnError("vm.invoke_tvm_op: the interpreter runs primitive Relay functions, not lowered kernels")
    result = evaluate_expr(function.body, dict(zip(function.params, inputs, strict=True)))
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(outputs):
        raise KilnError(f"vm.invoke_tvm_op: the function gives {len(results)} results for {len(outputs)} outputs")
    for out, value in zip(outputs, results, strict=True):
        np.copyto(out, value)
    return ()


@register("vm.shape_of")
def shape_of(attrs, tensor):
    return np.array(tensor.shape, dtype="int64")


@register("vm.reshape_tensor")
def reshape_tensor(attrs, data, shape):
    return data.reshape(tuple(int(d) for d in shape))
