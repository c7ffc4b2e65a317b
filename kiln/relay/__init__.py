"""kiln.relay: the high-level IR (TVM's Relay): expressions, operators, type inference, analyses and passes."""

from ..ir import (
    Any,
    Constructor,
    FuncType,
    GlobalTypeVar,
    GlobalVar,
    IncompleteType,
    IRModule,
    RelayRefType,
    SourceName,
    Span,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeConstraint,
    TypeData,
    TypeKind,
    TypeRelation,
    TypeVar,
)
from ..ir.expr import RelayExpr as Expr  # TVM's relay.Expr, for isinstance checks
from ..ir.op import Op
from ..runtime.packed_func import register_func
from . import (
    analysis,
    backend,
    build_module,  # noqa: E402  (TVM's relay.build_module; its build registers relay.executor.graph)
    data_dep_optimization,
    dataflow_pattern,
    frontend,
    loops,
    op,
    prelude,
    qnn,
    quantize,
    testing,
    transform,
    ty,
)
from . import printer as _printer  # noqa: F401  (registers "relay.ir.astext": what str(mod) prints)
from .adt import Clause, Match, Pattern, PatternConstructor, PatternTuple, PatternVar, PatternWildcard
from .backend import vm  # noqa: E402  (TVM's relay.vm; registers relay.executor.vm)
from .build import build, load_param_dict, save_param_dict  # noqa: E402
from .build_module import build_config
from .expr import (
    Call,
    Constant,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    TupleWrapper,
    Var,
    bind,
    const,
    var,
)
from .expr_functor import ExprFunctor, ExprMutator, ExprVisitor, post_order_visit
from .function import Function
from .interpreter import create_executor
from .op import *  # noqa: F403  (relay.add, relay.reshape, ... as in TVM)
from .op import annotation, image, nn, random, vision
from .op.op import OpPattern
from .optimize import bind_params_by_name, optimize
from .parser import fromtext, parse, parse_expr
from .scope_builder import ScopeBuilder
from .transform.annotate_spans import SpanCheck
from .transform.infer_type import infer_type
from .ty import scalar_type
from .type_functor import TypeFunctor, TypeMutator, TypeVisitor

RefType = RelayRefType  # TVM's relay.RefType


@register_func("relay.ir.as_function")
def _as_function(expr):
    """Wrap a non-function expression in a function over its free variables (for IRModule.from_expr)."""
    if isinstance(expr, Function):
        return expr
    return Function(analysis.free_vars(expr), expr)


@register_func("relay.Call")
def _make_call(callee, args):
    return Call(callee, tuple(args))
