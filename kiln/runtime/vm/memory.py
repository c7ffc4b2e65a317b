"""Storage for the VM: blocks of bytes that tensors are carved from, and the pool that recycles them.

``AllocStorage`` makes a :class:`Storage` of a byte size; ``AllocTensor`` views part of it as a tensor of a shape and
dtype (:func:`tensor_in`), so tensors the memory planner placed in one storage share its bytes, as in TVM.

:class:`StoragePool` plays TVM's ``PooledAllocator``: a block goes back to the pool when nothing uses it any more and
is handed out again for a request of the same size, so a model run repeatedly stops allocating after its first run
(fresh blocks of megabytes would cost page faults on every run). "Nothing uses it" is read from CPython's reference
counts: the pool keeps each block's owning array and its aligned view, and a tensor carved from the block holds a
reference to the owner (numpy points a view's ``base`` at the array that owns the memory). When both counts are back
to what they were when the pool made the block, no Storage, tensor or user-held result refers to it. Results handed
to the user keep their block out of the pool for as long as the user keeps them.
"""

import math
import sys

import numpy as np

from ...error import KilnError
from ..host import physical_memory
from ..ndarray import _aligned_empty

__all__ = ["Storage", "StoragePool", "tensor_in"]


class Storage:
    """A block of ``nbytes`` bytes aligned to ``alignment`` (TVM's ``runtime::vm::Storage``)."""

    __slots__ = ("buffer", "nbytes", "alignment", "dtype_hint")

    def __init__(self, buffer, nbytes, alignment, dtype_hint):
        self.buffer = buffer
        self.nbytes = nbytes
        self.alignment = alignment
        self.dtype_hint = dtype_hint

    def __repr__(self):
        return f"Storage({self.nbytes} bytes, alignment {self.alignment}, {self.dtype_hint})"


def tensor_in(storage, offset, shape, dtype, nbytes) -> np.ndarray:
    """The tensor of ``shape`` and ``dtype`` (``nbytes`` bytes) at byte ``offset`` of ``storage``.

    Raises
    ------
    KilnError
        When the storage is not a Storage or the tensor does not fit in it.
    """
    if type(storage) is not Storage:
        raise KilnError(f"the storage operand is a {type(storage).__name__}, not a storage block")
    if offset + nbytes > storage.nbytes:
        raise KilnError(f"a tensor of shape {tuple(shape)} and dtype {dtype} ({nbytes} bytes) at offset {offset} does "
                        f"not fit its storage of {storage.nbytes} bytes")
    if nbytes == 0:
        return _aligned_empty(shape, dtype)  # an empty slice would not keep the storage's alignment
    return np.ndarray(shape, dtype, storage.buffer, offset)


def _new_block(nbytes, alignment) -> list:
    """``[owner, aligned view, owner's reference count, view's reference count]`` of a new block."""
    try:
        owner = np.empty(nbytes + alignment, np.uint8)
    except MemoryError:
        raise KilnError(f"AllocStorage: out of memory allocating {nbytes:,} bytes") from None
    start = (-owner.ctypes.data) % alignment
    block: list = [owner, owner[start:start + nbytes]]
    del owner
    # the counts when only the pool's list (and the view's base) refer to the arrays: the "idle" state
    block.append(sys.getrefcount(block[0]))
    block.append(sys.getrefcount(block[1]))
    return block


class StoragePool:
    """Storage blocks by ``(nbytes, alignment)``; a block is reused once idle (see the module docstring)."""

    def __init__(self):
        self._blocks: dict = {}
        self.allocated_bytes = 0
        self.limit = physical_memory()

    def alloc(self, nbytes, alignment, dtype_hint="uint8") -> Storage:
        """A Storage of ``nbytes`` bytes: an idle block of that size, else a new one.

        Raises
        ------
        KilnError
            For a negative size, or one larger than the machine's memory.
        """
        nbytes = int(nbytes)
        if nbytes < 0:
            raise KilnError(f"AllocStorage: negative size {nbytes}")
        if nbytes > self.limit:
            raise KilnError(f"AllocStorage: {nbytes / 2**30:,.1f} GiB is more than this machine's memory "
                            f"({self.limit / 2**30:,.1f} GiB)")
        bucket = self._blocks.setdefault((nbytes, alignment), [])
        for block in bucket:
            if sys.getrefcount(block[0]) == block[2] and sys.getrefcount(block[1]) == block[3]:
                return Storage(block[1], nbytes, alignment, dtype_hint)
        block = _new_block(nbytes, alignment)
        bucket.append(block)
        self.allocated_bytes += nbytes
        return Storage(block[1], nbytes, alignment, dtype_hint)

    def release_idle(self):
        """Give the idle blocks back to the system (the pool keeps blocks it made until then)."""
        for key, bucket in list(self._blocks.items()):
            kept = [b for b in bucket if not (sys.getrefcount(b[0]) == b[2] and sys.getrefcount(b[1]) == b[3])]
            self.allocated_bytes -= sum(len(b[1]) for b in bucket) - sum(len(b[1]) for b in kept)
            self._blocks[key] = kept


def nbytes_of(shape, dtype) -> int:
    """The size in bytes of a tensor of ``shape`` and numpy ``dtype``."""
    return math.prod(shape) * dtype.itemsize
