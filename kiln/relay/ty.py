"""Relay's types at TVM's module path ``relay.ty``: tensor, tuple, function and primitive types, type variables,
type calls, reference types, and ``scalar_type``. They are IR nodes of :mod:`kiln.ir.type` and
:mod:`kiln.ir.type_poly`; this module names them as Relay programs do."""

from ..ir.adt import TypeData
from ..ir.type import PrimType, TensorType, TupleType, Type, scalar_type
from ..ir.type_poly import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RelayRefType,
    TypeCall,
    TypeConstraint,
    TypeKind,
    TypeRelation,
    TypeVar,
)

RefType = RelayRefType

__all__ = ["Type", "TensorType", "TupleType", "FuncType", "PrimType", "scalar_type", "TypeVar", "GlobalTypeVar",
           "IncompleteType", "TypeCall", "TypeKind", "TypeConstraint", "TypeRelation", "RelayRefType", "RefType",
           "TypeData"]
