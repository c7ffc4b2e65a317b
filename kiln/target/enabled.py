"""Which code generators can compile and run on this machine: what ``tvm.testing.enabled_targets`` (and TVM's
``relay.testing``, which re-exports it) answers. Kept at the target layer so both testing modules share it."""

from ..runtime.device import cpu
from .compiler import have_cc
from .llvm_compile import have_llvmlite

__all__ = ["available_target_kinds", "enabled_targets"]


def available_target_kinds() -> list:
    """The target kinds this machine can compile and run: ``llvm`` (llvmlite, linked by the C compiler) and ``c``."""
    targets = []
    if have_llvmlite() and have_cc():
        targets.append("llvm")
    if have_cc():
        targets.append("c")
    return targets


def enabled_targets():
    """``[(target, device)]`` for every target this machine can compile and run (``llvm``, ``c``)."""
    return [(target, cpu(0)) for target in available_target_kinds()]
