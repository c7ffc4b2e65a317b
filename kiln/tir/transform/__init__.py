"""kiln.tir.transform: passes over PrimFuncs (TVM's ``tvm.tir.transform``), each a registered ``PrimFuncPass``.

Registered names: ``tir.Simplify``, ``tir.FlattenBuffer``, ``tir.UnrollLoop`` (config ``tir.UnrollLoop``),
``tir.VectorizeLoop``, ``tir.HoistIfThenElse``, ``tir.RemoveNoOp``, ``tir.LowerIntrin``, ``tir.StorageRewrite``,
``tir.MakePackedAPI``, ``tir.LowerOpaqueBlock``, ``tir.FP16ComputeLegalize``, ``tir.LegalizeVectorWidth``,
``tir.LowerAllocation``, ``tir.LoopPartition`` (config ``tir.LoopPartition``);
:mod:`.pipeline` lists them in the order ``kiln.lower`` and ``kiln.build`` run them. Each module also exposes the
plain function over a PrimFunc (``simplify_prim_func``, ``flatten_buffer`` ...).
"""

# ruff: noqa: F401  (re-exports)

from .apply import Apply
from .flatten_buffer import FlattenBuffer, flatten_buffer
from .fp16_compute_legalize import FP16ComputeLegalize, fp16_compute_legalize
from .function_pass import PrimFuncPass, prim_func_pass
from .hoist_if_then_else import HoistIfThenElse, hoist_if_then_else
from .inject_int8_dot import InjectInt8DotProduct, inject_int8_dot
from .legalize_vector_width import LegalizeVectorWidth, legalize_vector_width
from .loop_partition import LoopPartition, loop_partition
from .lower_allocation import LowerAllocation, lower_allocation
from .lower_intrin import LowerIntrin, lower_intrin
from .lower_opaque_block import LowerOpaqueBlock, lower_opaque_block
from .make_packed_api import MakePackedAPI, make_packed_api
from .pipeline import build_passes, lower_passes, tir_pipeline  # noqa: E402,I001  (after every pass it lists)
from .remove_no_op import RemoveNoOp, remove_no_op
from .simplify import Simplify, simplify_prim_func
from .storage_rewrite import StorageRewrite, storage_rewrite
from .unroll_loop import UnrollLoop, unroll_loop
from .vectorize_loop import VectorizeLoop, vectorize_loop
