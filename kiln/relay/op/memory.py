"""The memory dialect (TVM's ``relay.op.memory``): explicit storage and tensor allocation for the VM.

After ``ManifestAlloc`` a Relay function allocates every intermediate itself::

    let %s = memory.alloc_storage(64i64, alignment=64, dtype_hint="float32");     /* ty=Storage[] */
    let %t = memory.alloc_tensor(%s, 0i64, meta[relay.Constant][0], const_shape=[4, 4]);
    let %_ = vm.invoke_tvm_op(@kernel, (%x,), (%t,));
    %t

* ``memory.alloc_storage(size, alignment, device, dtype_hint)``: a block of ``size`` bytes (an int64 scalar
  expression, so sizes computed at run time fit the same op), of type :class:`StorageType`;
* ``memory.alloc_tensor(storage, offset, shape, dtype, assert_shape)``: a tensor at byte ``offset`` (int64 scalar)
  of ``storage``, its shape an int64 1-D tensor; its type comes from ``const_shape`` (set when ``shape`` is a
  constant) or from ``assert_shape`` (the type a computed shape must have);
* ``memory.kill(value)``: the value is dead from here on (the VM drops its register).

The ops are ``TNonComputational`` (FuseOps and LowerTE leave them alone) and ``TOpIsStateful`` (FoldConstant,
EliminateCommonSubexpr and DeadCodeElimination never fold, merge or drop an allocation). Their numpy semantics for
the reference interpreter live in :mod:`kiln.relay.reference.memory`.
"""

from dataclasses import dataclass

import numpy as np

from ...error import TypeInferenceError
from ...ir.attrs import Attrs
from ...ir.op import register_op_attr
from ...ir.type import TensorType, TupleType, Type, is_any, static_or_any
from ..expr import Constant, const
from .op import OpPattern, make_call, register_relay_op

__all__ = ["StorageType", "AllocStorageAttrs", "AllocTensorAttrs", "alloc_storage", "alloc_tensor", "kill",
           "register_dialect_op"]


@dataclass(frozen=True, slots=True)
class StorageType(Type):
    """The type of a storage block (TVM's ``Storage`` ADT type), printed ``Storage[]``."""

    def __str__(self):
        return "Storage[]"


@dataclass(frozen=True, slots=True)
class AllocStorageAttrs(Attrs):
    """``alignment`` in bytes (a power of two), the device (``device_type``, ``device_id``; the CPU is 1, 0) and
    the dtype the block will mostly hold (``dtype_hint``)."""

    alignment: int = 64
    device_type: int = 1
    device_id: int = 0
    dtype_hint: str = "float32"

    def __post_init__(self):
        object.__setattr__(self, "alignment", int(self.alignment))
        object.__setattr__(self, "dtype_hint", str(self.dtype_hint))
        self._require(self.alignment > 0 and self.alignment & (self.alignment - 1) == 0, "alignment",
                      "must be a power of two")


@dataclass(frozen=True, slots=True)
class AllocTensorAttrs(Attrs):
    """The tensor's ``dtype``; ``const_shape`` when the shape operand is a constant; ``assert_shape``, the shape a
    computed shape operand must give."""

    dtype: str = "float32"
    const_shape: tuple | None = None
    assert_shape: tuple | None = None

    def __post_init__(self):
        object.__setattr__(self, "dtype", str(self.dtype))
        for name in ("const_shape", "assert_shape"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, static_or_any(value))
                self._require(all(is_any(d) or d >= 0 for d in getattr(self, name)), name, "must be non-negative")


def register_dialect_op(name, num_inputs, type_rel, attrs_type, description):
    """Register an op of the memory/VM dialect: opaque, non-computational and stateful (see the module docstring)."""
    op = register_relay_op(name, num_inputs, type_rel, OpPattern.OPAQUE, attrs_type, description)
    register_op_attr(name, "TNonComputational", True)
    register_op_attr(name, "TOpIsStateful", True)
    return op


def _int64_scalar(ttype, what):
    if ttype != TensorType((), "int64"):
        raise TypeInferenceError(f"{what} must be an int64 scalar, got {ttype}")


def _alloc_storage_rel(arg_types, attrs):
    _int64_scalar(arg_types[0], "the size")
    return StorageType()


def _alloc_tensor_rel(arg_types, attrs):
    storage, offset, shape = arg_types
    if not isinstance(storage, StorageType):
        raise TypeInferenceError(f"the first argument must be a storage block, got {storage}")
    _int64_scalar(offset, "the offset")
    if not (isinstance(shape, TensorType) and shape.ndim == 1 and shape.dtype == "int64"):
        raise TypeInferenceError(f"the shape must be a 1-D int64 tensor, got {shape}")
    out = attrs.const_shape if attrs.const_shape is not None else attrs.assert_shape
    if out is None:
        raise TypeInferenceError("a shape computed at run time needs assert_shape (the type of the result)")
    if len(out) != shape.shape[0]:
        raise TypeInferenceError(f"the shape operand has {shape.shape[0]} dimensions, the result type {len(out)}")
    return TensorType(out, attrs.dtype)


def _kill_rel(arg_types, attrs):
    return TupleType(())


register_dialect_op("memory.alloc_storage", 1, _alloc_storage_rel, AllocStorageAttrs,
                    "Allocate a block of size bytes (an int64 scalar).")
register_dialect_op("memory.alloc_tensor", 3, _alloc_tensor_rel, AllocTensorAttrs,
                    "A tensor at a byte offset of a storage block, of a shape given as an int64 1-D tensor.")
register_dialect_op("memory.kill", 1, _kill_rel, None, "Mark a value dead: its register is dropped.")


def _int64_operand(value):
    return value if not isinstance(value, int | np.integer) else const(int(value), "int64")


def alloc_storage(size, alignment=64, device=None, dtype_hint="float32"):
    """``memory.alloc_storage``: a storage block of ``size`` bytes (an int or an int64 scalar expression).

    Parameters
    ----------
    size : int or RelayExpr
        The size in bytes.
    alignment : int
        The alignment in bytes (a power of two).
    device : Device, optional
        Where the block lives (the CPU).
    dtype_hint : str
        The dtype the block will mostly hold.
    """
    device_type, device_id = (device.device_type, device.device_id) if device is not None else (1, 0)
    return make_call("memory.alloc_storage", [_int64_operand(size)],
                     AllocStorageAttrs(alignment, device_type, device_id, dtype_hint))


def alloc_tensor(storage, offset, shape, dtype="float32", assert_shape=None):
    """``memory.alloc_tensor``: a tensor at byte ``offset`` of ``storage``.

    Parameters
    ----------
    storage : RelayExpr
        The storage block.
    offset : int or RelayExpr
        The byte offset (an int64 scalar).
    shape : tuple of int or RelayExpr
        The shape: a constant (the result type follows from it) or an int64 1-D tensor computed at run time.
    dtype : str
        The element type.
    assert_shape : tuple of int, optional
        The result's shape when ``shape`` is computed.
    """
    if isinstance(shape, tuple | list):
        shape = const(np.array(shape, dtype="int64"), "int64")
    const_shape = tuple(int(d) for d in shape.data.handle) if isinstance(shape, Constant) else None
    return make_call("memory.alloc_tensor", [storage, _int64_operand(offset), shape],
                     AllocTensorAttrs(dtype, const_shape, assert_shape))


def kill(value):
    """``memory.kill``: ``value`` is not used after this point."""
    return make_call("memory.kill", [value])
