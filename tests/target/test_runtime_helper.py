"""The runtime helper's thread pool (kiln/target/runtime_helper.py) behind the LLVM backend's parallel loops: every
task runs once, errors carry the failing library's message, nested and concurrent launches are safe, and all
libraries of a process share one set of worker threads."""

import os
import threading

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.error import RuntimeArgumentError
from kiln.tir import expr as E
from kiln.tir import stmt as S

from .conftest import HAVE_LLVM

pytestmark = pytest.mark.skipif(not HAVE_LLVM, reason="needs llvmlite and a C compiler")


def _parallel_scale(n, factor, name, target="llvm"):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * float(factor), name="B")
    s = te.create_schedule(B.op)
    s[B].parallel(B.op.axis[0])
    return kiln.build(s, [A, B], target=target, name=name)


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.parametrize("n", [1, 3, 7, 64, 1001])
def test_every_iteration_runs_once(n):
    m = _parallel_scale(n, 3, "scale3")
    a = np.arange(n, dtype="float32")
    b = kiln.nd.empty((n,))
    m(a, b)
    np.testing.assert_array_equal(b.numpy(), 3 * a)


def test_libraries_share_one_pool():
    _parallel_scale(256, 2, "warm")(np.ones(256, "float32"), kiln.nd.empty((256,)))
    before = _threads()
    for k in range(6):
        m = _parallel_scale(256 + k, k + 2, f"lib{k}")
        a = np.arange(256 + k, dtype="float32")
        b = kiln.nd.empty((256 + k,))
        m(a, b)
        np.testing.assert_array_equal(b.numpy(), (k + 2) * a)
    assert _threads() == before  # no library started workers of its own


def test_concurrent_callers_and_nested_loops():
    """Several Python threads launch at once (one gets the pool, the others run inline); a parallel loop inside a
    parallel loop runs its inner launch on the outer task's thread."""
    m = _parallel_scale(4096, 5, "shared")
    errors = []

    def call(seed):
        try:
            a = np.random.default_rng(seed).standard_normal(4096).astype("float32")
            for _ in range(50):
                b = kiln.nd.empty((4096,))
                m(a, b)
                np.testing.assert_array_equal(b.numpy(), 5 * a)
        except Exception as exc:  # noqa: BLE001  (reported by the main thread)
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]

    A = tir.decl_buffer((16, 32), "float32", "A")
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    inner = S.For(j, 0, 32, S.ForKind.PARALLEL, S.BufferStore(
        A, E.Add(E.BufferLoad(A, [i, j]), E.FloatImm("float32", 1.0)), [i, j]))
    a = tir.Var("a", "handle")
    nested = kiln.build(tir.PrimFunc([a], S.For(i, 0, 16, S.ForKind.PARALLEL, inner), buffer_map={a: A},
                                     attrs={"global_symbol": "nested"}), target="llvm")
    data = kiln.nd.array(np.zeros((16, 32), "float32"))
    nested(data)
    np.testing.assert_array_equal(data.numpy(), np.ones((16, 32)))


def test_a_task_error_names_its_own_library():
    """The message of a failed task comes from the library whose code failed, also when that library runs on a pool
    another library made."""
    _parallel_scale(64, 2, "owner")(np.ones(64, "float32"), kiln.nd.empty((64,)))
    A = tir.decl_buffer((100,), "float32", "A")
    i = tir.Var("i", "int32")
    body = S.For(i, 0, 100, S.ForKind.PARALLEL, S.AssertStmt(
        E.GE(E.BufferLoad(A, [i]), E.FloatImm("float32", 0.0)), "element must not be negative",
        S.BufferStore(A, E.Mul(E.BufferLoad(A, [i]), E.FloatImm("float32", 2.0)), [i])))
    a = tir.Var("a", "handle")
    m = kiln.build(tir.PrimFunc([a], body, buffer_map={a: A}, attrs={"global_symbol": "checked"}), target="llvm")
    bad = np.ones(100, "float32")
    bad[77] = -1
    with pytest.raises(RuntimeArgumentError, match="element must not be negative"):
        m(kiln.nd.array(bad))


def test_one_core_target_runs_inline():
    m = _parallel_scale(300, 4, "serial", target="llvm -num-cores=1")
    a = np.arange(300, dtype="float32")
    b = kiln.nd.empty((300,))
    m(a, b)
    np.testing.assert_array_equal(b.numpy(), 4 * a)
