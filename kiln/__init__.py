"""kiln: a deep-learning compiler built on Apache TVM's Relay/TIR architecture (``import kiln as tvm``)."""

from . import (
    _ffi,  # noqa: F401  (tvm._ffi.base.TVMError)
    arith,
    contrib,  # noqa: E402  (tvm.contrib.graph_executor)
    error,
    ir,
    relay,  # noqa: E402  (relay registers its hooks into the layers above on import)
    rpc,  # noqa: E402  (tvm.rpc)
    runtime,
    script,  # noqa: E402  (tvm.script: TVMScript for TIR)
    support,  # noqa: E402  (tvm.support.libinfo)
    target,  # noqa: E402  (tvm.target; registers the code generators)
    te,  # noqa: E402  (tvm.te)
    tir,
    topi,  # noqa: E402  (tvm.topi; registers FTVMCompute/FTVMSchedule/FTVMStrategy by op name)
    transform,  # noqa: E402  (tvm.transform)
)
from .error import TVMError  # noqa: E402  (tvm.TVMError)
from .ir import (
    IRModule,
    container,  # noqa: E402  (tvm.container)
    instrument,  # noqa: E402  (tvm.instrument)
)
from .runtime import Device, NDArray, cpu, device, get_global_func, register_func
from .runtime import ndarray as nd
from .target.build import build  # noqa: E402  (tvm.build)
from .te import lower  # noqa: E402  (tvm.lower)
from .tir import buffer_offset as _buffer_offset  # noqa: F401,E402  (registers tir.BufferOffsetOf, above arith)
from .tir import transform as _tir_transform  # noqa: F401,E402  (makes kiln.tir.transform available)
from .tir.dtype import DataType  # noqa: E402  (tvm.DataType)

# TVM keeps Range, PrimExpr and PointerType in tvm.ir; kiln defines them with the TIR expressions they hold, above
# kiln.ir, so the package root (the one module above both) lends them to kiln.ir.
ir.Range = ir.expr.Range = tir.Range  # type: ignore[attr-defined]
ir.PrimExpr = ir.expr.PrimExpr = tir.PrimExpr  # type: ignore[attr-defined]
ir.PointerType = tir.PointerType  # type: ignore[attr-defined]

__version__ = "0.1.0"
