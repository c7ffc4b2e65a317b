"""kiln.te: tensor expressions and schedules (TVM's ``tvm.te``), lowered to TIR by :func:`kiln.lower`.

A computation is declared with :func:`placeholder` and :func:`compute` (reductions with :func:`reduce_axis` and
``te.sum``/``te.max``/``te.min``), arranged with a schedule (``s = te.create_schedule(C.op)``, ``s[C].split(...)``),
and lowered: ``kiln.lower(s, [A, B, C], name="f")`` gives an IRModule whose PrimFunc is the loop nest.
"""

# ruff: noqa: F401, I001  (re-exports, grouped as in TVM)

from ..tir.expr_reduce import IterVar
from ..tir.intrin import (
    ceil, cos, erf, exp, fabs, floor, fma, if_then_else, isfinite, isinf, isnan, log, log2, log10, log1p, popcount,
    power, round, rsqrt, sigmoid, sin, sqrt, tan, tanh, trunc,
)
from ..tir.op import (
    abs, all, any, const, div, floordiv, floormod, indexdiv, indexmod, max_value, min_value, truncdiv, truncmod,
)
from .lower import get_binds, lower, schedule_to_prim_func
from .create_primfunc import create_prim_func
from .extern import extern, extern_primfunc
from .scan import ScanOp, scan
from .tensor_intrin import TensorIntrin, decl_tensor_intrin
from .tensor_compute import TensorComputeOp, TensorIntrinCall
from . import schedule, tag
from .operation import (
    comm_reducer, compute, max, min, placeholder, reduce_axis, size_var, sum, thread_axis, var,
)
from .schedule import Fuse, IterVarAttr, Schedule, Singleton, Split, Stage, create_schedule
from .tag import TagScope, tag_scope
from .tensor import ComputeOp, ExternOp, Operation, PlaceholderOp, Tensor, TensorSlice
from ..tir.index_map import IndexMap as _IndexMap

AXIS_SEPARATOR = _IndexMap.AXIS_SEPARATOR  # a layout map returns it between groups of physical axes
