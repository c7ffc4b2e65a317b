"""TensorIR blocks (TVM's ``tir.Block``, ``tir.BlockRealize``, ``tir.BufferRegion``, ``tir.MatchBufferRegion``).

A block is a unit of computation with its own iteration variables (``iter_vars``, each an IterVar whose domain is
the block's iteration space), the buffer regions it reads and writes, an optional ``init`` statement (run on the first
iteration of its reduction variables), buffers it allocates and buffers it views (``match_buffers``). A
``BlockRealize`` places a block in a loop nest: it binds the iteration variables to ``iter_values`` (expressions of
the enclosing loop variables) and runs the block only where ``predicate`` holds. ``tir.transform.LowerOpaqueBlock``
turns blocks into plain loops, lets and allocations before the rest of the pipeline runs.
"""

from dataclasses import dataclass, field

from ..error import TIRError
from ..ir.attrs import DictAttrs
from ..ir.node import DEF, IGNORE, Node
from .expr import PrimExpr, convert
from .expr_reduce import IterVar, Range
from .stmt import Stmt, _check_stmt

__all__ = ["Block", "BlockRealize", "BufferRegion", "MatchBufferRegion"]


def _set(node, name, value):
    object.__setattr__(node, name, value)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class BufferRegion(Node):
    """The region ``buffer[min_0:min_0+extent_0, ...]``: one Range per dimension."""

    buffer: object
    region: tuple
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    def __post_init__(self):
        region = tuple(self.region)
        for r in region:
            if not isinstance(r, Range):
                raise TIRError(f"tir.BufferRegion of {self.buffer.name}: region entries must be Ranges")
        if len(region) != len(self.buffer.shape):
            raise TIRError(f"tir.BufferRegion: buffer {self.buffer.name} has {len(self.buffer.shape)} dimensions, "
                           f"the region {len(region)}")
        _set(self, "region", region)

    @staticmethod
    def full_region(buffer) -> "BufferRegion":
        """The whole of ``buffer``."""
        return BufferRegion(buffer, tuple(Range.from_min_extent(convert(0, d.dtype), d) for d in buffer.shape))

    @staticmethod
    def from_point(buffer, indices) -> "BufferRegion":
        """The single element ``buffer[indices]``."""
        return BufferRegion(buffer, tuple(Range.from_min_extent(i, convert(1, convert(i).dtype)) for i in indices))

    def __str__(self):
        from .printer import TIRPrinter

        return TIRPrinter().region(self)

    __repr__ = __str__


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class MatchBufferRegion(Node):
    """``buffer = T.match_buffer(source[...])``: ``buffer`` views the region ``source`` of another buffer."""

    buffer: object = field(metadata=DEF)
    source: BufferRegion
    span: object = field(default=None, kw_only=True, metadata=IGNORE)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Block(Stmt):
    """A block (fields in TVM's constructor order: ``iter_vars, reads, writes, name_hint, body, init,
    alloc_buffers, match_buffers, annotations``)."""

    iter_vars: tuple = field(metadata=DEF)
    reads: tuple
    writes: tuple
    name_hint: str = field(metadata=IGNORE)  # TVM compares blocks without their names
    body: Stmt
    init: Stmt | None = None
    alloc_buffers: tuple = field(default=(), metadata=DEF)
    match_buffers: tuple = ()
    annotations: DictAttrs = field(default_factory=DictAttrs)

    def __post_init__(self):
        iter_vars = tuple(self.iter_vars)
        for iv in iter_vars:
            if not isinstance(iv, IterVar):
                raise TIRError(f"tir.Block {self.name_hint}: iter_vars must be IterVars")
        _set(self, "iter_vars", iter_vars)
        for name in ("reads", "writes"):
            regions = tuple(getattr(self, name))
            if any(not isinstance(r, BufferRegion) for r in regions):
                raise TIRError(f"tir.Block {self.name_hint}: {name} must be BufferRegions")
            _set(self, name, regions)
        _set(self, "alloc_buffers", tuple(self.alloc_buffers))
        _set(self, "match_buffers", tuple(self.match_buffers))
        _set(self, "annotations", DictAttrs.make(self.annotations))
        _check_stmt(self.body, f"tir.Block {self.name_hint} body")
        if self.init is not None:
            _check_stmt(self.init, f"tir.Block {self.name_hint} init")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class BlockRealize(Stmt):
    """Run ``block`` with its iteration variables bound to ``iter_values`` where ``predicate`` holds."""

    iter_values: tuple
    predicate: PrimExpr
    block: Block

    def __post_init__(self):
        if not isinstance(self.block, Block):
            raise TIRError("tir.BlockRealize: block must be a Block")
        values = tuple(convert(v) for v in self.iter_values)
        if len(values) != len(self.block.iter_vars):
            raise TIRError(f"tir.BlockRealize of {self.block.name_hint}: {len(values)} values for "
                           f"{len(self.block.iter_vars)} iteration variables")
        _set(self, "iter_values", values)
        _set(self, "predicate", convert(True if self.predicate is None else self.predicate))
