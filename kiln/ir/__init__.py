"""kiln.ir: the IR core shared by Relay and TIR (nodes, structural equality, JSON, modules, types, operators)."""

from . import base, container  # noqa: F401  (tvm.ir.base)
from .adt import Constructor, TypeData
from .affine_type import AffineType, TensorAffineType, TupleAffineType
from .attrs import Attrs, DictAttrs, make_node
from .env_func import EnvFunc
from .expr import BaseFunc, GlobalVar, RelayExpr
from .json import load_json, save_json
from .module import IRModule
from .node import Node
from .op import Op, list_op_names, register_op, register_op_attr
from .span import SourceName, Span
from .structural import assert_structural_equal, structural_equal, structural_hash
from .type import Any, PrimType, TensorType, TupleType, Type
from .type_poly import (
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
