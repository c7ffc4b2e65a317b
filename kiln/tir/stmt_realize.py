"""Statements of TVM's pre-flattening TIR: ``BufferRealize`` (a buffer's region comes into existence for a body)
and ``Prefetch`` (a hint to bring a buffer region into cache).

TVM's schedule lowering produced them before buffers were flattened; kiln's TE lowering allocates buffers directly,
so they reach kiln only from users' code (``ir_builder``, hand-built IR). The visitors and mutators walk them, the
printer prints them; ``tir.transform.LowerOpaqueBlock``'s successors do not need to see them: a ``Prefetch`` is only
a hint and code generators emit nothing for it.
"""

from dataclasses import dataclass

from ..error import TIRError
from .expr import convert
from .expr_reduce import Range
from .stmt import Stmt, _check_stmt

__all__ = ["BufferRealize", "Prefetch"]


def _bounds(bounds, buffer, what):
    bounds = tuple(bounds)
    for r in bounds:
        if not isinstance(r, Range):
            raise TIRError(f"{what} of {buffer.name}: bounds must be Ranges, got {type(r).__name__}")
    return bounds


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class BufferRealize(Stmt):
    """``buffer`` exists over ``bounds`` (one Range per dimension) while ``body`` runs, if ``condition`` holds."""

    buffer: object
    bounds: tuple
    condition: object
    body: Stmt

    def __post_init__(self):
        object.__setattr__(self, "bounds", _bounds(self.bounds, self.buffer, "tir.BufferRealize"))
        object.__setattr__(self, "condition", convert(self.condition))
        _check_stmt(self.body, "tir.BufferRealize body")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Prefetch(Stmt):
    """A hint to prefetch the region ``bounds`` of ``buffer``."""

    buffer: object
    bounds: tuple

    def __post_init__(self):
        object.__setattr__(self, "bounds", _bounds(self.bounds, self.buffer, "tir.Prefetch"))
