"""Storage for the VM (kiln/runtime/vm/memory.py): tensors carved from blocks, and the pool recycling a block only
once nothing refers to it."""

import numpy as np
import pytest

from kiln.error import KilnError
from kiln.runtime.vm.memory import Storage, StoragePool, nbytes_of, tensor_in


def test_tensors_share_their_storage_at_offsets():
    pool = StoragePool()
    storage = pool.alloc(256, 64)
    assert storage.nbytes == 256 and storage.buffer.ctypes.data % 64 == 0
    f32 = np.dtype("float32")
    a = tensor_in(storage, 0, (4, 4), f32, nbytes_of((4, 4), f32))
    row = tensor_in(storage, 16, (4,), f32, 16)
    a[1, 0] = 5.0
    assert row[0] == 5.0
    assert tensor_in(storage, 64, (4,), f32, 16).ctypes.data % 64 == 0
    empty = tensor_in(storage, 256, (0, 3), f32, 0)
    assert empty.shape == (0, 3) and empty.ctypes.data % 64 == 0
    with pytest.raises(KilnError, match=r"shape \(8,\).*at offset 240 does not fit its storage of 256 bytes"):
        tensor_in(storage, 240, (8,), f32, 32)
    with pytest.raises(KilnError, match="not a storage block"):
        tensor_in(np.zeros(4), 0, (1,), f32, 4)


def test_pool_reuses_a_block_only_when_nothing_refers_to_it():
    pool = StoragePool()
    first = pool.alloc(1024, 64)
    address = first.buffer.ctypes.data
    view = tensor_in(first, 0, (16,), np.dtype("float32"), 64)
    del first
    second = pool.alloc(1024, 64)  # the view still holds the first block
    assert second.buffer.ctypes.data != address
    del second
    third = pool.alloc(1024, 64)  # the second block is idle again
    assert pool.allocated_bytes == 2048
    del view
    fourth = pool.alloc(1024, 64)  # and now the first one too
    assert {third.buffer.ctypes.data, fourth.buffer.ctypes.data} >= {address}
    assert pool.allocated_bytes == 2048
    del third, fourth
    pool.release_idle()
    assert pool.allocated_bytes == 0


def test_pool_refuses_impossible_sizes():
    pool = StoragePool()
    with pytest.raises(KilnError, match="negative size"):
        pool.alloc(-1, 64)
    with pytest.raises(KilnError, match="more than this machine's memory"):
        pool.alloc(1 << 60, 64)
    assert isinstance(pool.alloc(0, 64), Storage)
