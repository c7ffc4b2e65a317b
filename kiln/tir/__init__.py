"""kiln.tir: the loop-level IR (TVM's ``tvm.tir``): expressions, statements, buffers, ``PrimFunc``, builders of
expressions and intrinsics, visitors, a printer, a numpy evaluator, and (in ``kiln.tir.transform``) its passes."""

from .buffer import Buffer, decl_buffer
from .dtype import DataType
from .expr import (
    EQ, GE, GT, LE, LT, NE, Add, And, Broadcast, BufferLoad, Call, CallEffectKind, Cast, CommReducer, Div, EqualOp,
    FloatImm, FloorDiv, FloorMod, IntImm, IterVar, IterVarType, Let, Max, Min, Mod, Mul, Not, NotEqualOp, Or,
    PointerType, PrimExpr, ProducerLoad, Ramp, Range, Reduce, Select, SizeVar, StringImm, Sub, Var, convert,
)
from .function import CallingConv, PrimFunc
from .intrin import (
    acos, acosh, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, call_extern,
    call_intrin, call_packed, call_pure_extern, ceil, clz, comm_reducer, copysign, cos, cosh, erf, exp, exp2, exp10,
    fabs, floor, fma, fmod, hypot, if_then_else, isfinite, isinf, isnan, isnullptr, ldexp, likely, log, log1p, log2,
    log10, max, min, nearbyint, nextafter, popcount, power, ret, round, rsqrt, shift_left, shift_right, sigmoid, sin,
    sinh, sqrt, sum, tan, tanh, trunc,
)
from .intrin import pow  # noqa: A004  (TVM's name)
from .op import (
    abs, all, any, cast, const, div, floordiv, floormod, indexdiv, indexmod, infinity, max_value, min_value,
    reinterpret, truncdiv, truncmod,
)
from .stmt import (
    Allocate, AssertStmt, AttrStmt, BufferStore, DeclBuffer, Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt,
    Stmt, While, stmt_list, stmt_seq,
)
from .layout import Layout, layout
from . import analysis, stmt_functor
from .functor import ExprFunctor, ExprMutator, ExprVisitor, StmtExprMutator, StmtExprVisitor, StmtFunctor
from .stmt_functor import ir_transform, post_order_visit, pre_order_visit, renew_defs, substitute
