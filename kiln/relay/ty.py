"""Relay's types at TVM's module path ``relay.ty``: tensor, tuple, function and primitive types, and
``scalar_type``. They are IR nodes of :mod:`kiln.ir.type`; this module names them as Relay programs do."""

from ..ir.type import FuncType, IncompleteType, PrimType, TensorType, TupleType, Type, scalar_type

__all__ = ["Type", "TensorType", "TupleType", "FuncType", "IncompleteType", "PrimType", "scalar_type"]
