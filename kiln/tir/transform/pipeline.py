"""The TIR pipeline: every pass a PrimFunc goes through between ``kiln.lower`` and a code generator, in one list.

Two phases, both defined here and nowhere else:

* **lower** (what ``kiln.lower`` runs, target-independent): ``LowerOpaqueBlock`` (TensorIR blocks of scripted
  functions to loops), ``FlattenBuffer`` (multi-dimensional buffers to flat
  ones), ``Simplify``, ``LoopPartition`` (tiles whose conditions can be false peeled off hinted loops),
  ``VectorizeLoop`` (off with the config ``tir.disable_vectorize``), ``StorageRewrite``,
  ``UnrollLoop``, ``HoistIfThenElse`` (one branch per tile instead of one per unrolled statement), ``Simplify``,
  ``RemoveNoOp``;
* **build** (what ``kiln.build`` runs for a target): for LLVM on an x86 CPU with 8-bit dot products
  ``InjectInt8DotProduct`` (the int8 reduction loops that spell ``vpdpbusd`` or ``pmaddubsw``), ``LowerIntrin``
  (intrinsics to what both backends emit; before MakePackedAPI, so it does not walk the argument checks),
  ``MakePackedAPI`` (argument unpacking and checks), ``LowerAllocation`` (stack or heap); for the C target also
  ``FP16ComputeLegalize`` (C compilers keep ``_Float16`` expressions in float or fuse them) and
  ``LegalizeVectorWidth`` (GCC keeps vectors wider than a register in memory).

After the build phase, a code generator has nothing left to decide. :func:`tir_pipeline` is the whole list as one
``Sequential``; ``kiln.lower`` and ``kiln.build`` run its phases (:func:`lower_passes`, :func:`build_passes`).
"""

from ...ir.pass_context import register_config
from ...ir.transform import PassContext, Sequential
from .flatten_buffer import FlattenBuffer
from .fp16_compute_legalize import FP16ComputeLegalize
from .hoist_if_then_else import HoistIfThenElse
from .inject_int8_dot import InjectInt8DotProduct, int8_dot_instruction
from .legalize_vector_width import LegalizeVectorWidth
from .loop_partition import LoopPartition
from .lower_allocation import LowerAllocation
from .lower_intrin import LowerIntrin
from .lower_opaque_block import LowerOpaqueBlock
from .make_packed_api import MakePackedAPI
from .remove_no_op import RemoveNoOp
from .simplify import Simplify
from .storage_rewrite import StorageRewrite
from .unroll_loop import UnrollLoop
from .vectorize_loop import VectorizeLoop

__all__ = ["lower_passes", "build_passes", "tir_pipeline"]

register_config("tir.disable_vectorize", bool, False)


def lower_passes() -> list:
    """The lower phase (see the module docstring), under the current PassContext's config."""
    vectorize = not bool(PassContext.current().config.get("tir.disable_vectorize", False))
    return [LowerOpaqueBlock(), FlattenBuffer(), Simplify(), LoopPartition(), VectorizeLoop(vectorize),
            StorageRewrite(), UnrollLoop(), HoistIfThenElse(), Simplify(), RemoveNoOp()]


def build_passes(target) -> list:
    """The build phase for ``target`` (a :class:`~kiln.target.target.Target`; see the module docstring)."""
    passes = [LowerIntrin(), MakePackedAPI(), LowerAllocation()]
    instruction = int8_dot_instruction(target.cpu_info.features) if _is_x86_llvm(target) else None
    if instruction is not None:
        passes.insert(0, InjectInt8DotProduct(instruction))
    if target.kind.name == "c":
        passes += [FP16ComputeLegalize(), LegalizeVectorWidth(target.vector_width)]
    return passes


def _is_x86_llvm(target) -> bool:
    return target.kind.name == "llvm" and (not target.mtriple or target.mtriple.startswith(("x86_64", "i686")))


def tir_pipeline(target=None) -> Sequential:
    """The TIR pipeline: the lower phase, then, given a ``target``, its build phase."""
    passes = lower_passes() + (build_passes(target) if target is not None else [])
    return Sequential(passes, name="tir.pipeline")
