"""Compiling a module in parts on several cores (kiln/target/parallel.py and the LLVM backend's split): the parts
link into one library that computes what a one-part build computes, and a part whose child process fails is
compiled again in the parent, raising its error there."""

import multiprocessing
import os

import numpy as np
import pytest

import kiln
from kiln import te
from kiln.error import KilnError
from kiln.ir.module import IRModule
from kiln.target import build as target_build
from kiln.target import parallel
from kiln.target.parallel import fork_map, idle_cores, usable_cores

from .conftest import HAVE_LLVM


def _square(x):
    return x * x


def _fail_on_three(x):
    if x == 3:
        raise KilnError(f"item {x} is bad")
    return x


PARENT = os.getpid()


def _die_in_children(x):
    if os.getpid() != PARENT:
        os._exit(3)  # a child that crashes: the parent computes the item itself
    return -x


def test_idle_cores_is_at_least_one_and_at_most_the_usable_ones():
    assert 1 <= idle_cores() <= usable_cores()


def _square_and_pid(x):
    return x * x, os.getpid()


@pytest.mark.parametrize("first_here", [True, False])
def test_fork_map_keeps_the_order_of_the_items(first_here):
    results = fork_map(_square_and_pid, range(5), first_here=first_here)
    assert [r for r, _ in results] == [0, 1, 4, 9, 16]
    pids = [pid for _, pid in results]
    assert (pids[0] == PARENT) == first_here and PARENT not in pids[1:] and len(set(pids[1:])) == 4
    assert fork_map(_square, [7], first_here=first_here) == [49]
    assert fork_map(_square, [], first_here=first_here) == []


@pytest.mark.parametrize("first_here", [True, False])
def test_fork_map_redoes_failed_items_in_this_process(first_here):
    assert fork_map(_die_in_children, [1, 2, 3], first_here=first_here) == [-1, -2, -3]
    with pytest.raises(KilnError, match="item 3 is bad"):
        fork_map(_fail_on_three, [1, 2, 3], first_here=first_here)


def _fork_map_of_squares(items):
    return fork_map(_square, items)


def test_fork_map_in_a_pool_worker_runs_in_the_worker():
    with multiprocessing.get_context("fork").Pool(1) as pool:  # its workers are daemonic: no children allowed
        assert pool.apply(_fork_map_of_squares, ([1, 2, 3],)) == [1, 4, 9]


def _module_of_functions(count):
    """``count`` functions ``add_k`` (B = A + k) in one IRModule."""
    functions = {}
    for k in range(count):
        functions.update(_add_constant(k).functions)
    return IRModule(functions)


def _add_constant(k):
    a = te.placeholder((64,), name="A")
    b = te.compute((64,), lambda i: a[i] + float(k), name="B")
    return kiln.lower(te.create_schedule(b.op), [a, b], name=f"add_{k}")


@pytest.mark.skipif(not HAVE_LLVM, reason="needs llvmlite and a C compiler to link")
@pytest.mark.parametrize("cores", [1, 2, 3])
def test_a_module_split_into_parts_links_into_one_library(cores, monkeypatch):
    monkeypatch.setattr(parallel, "idle_cores", lambda: cores)
    count = 4 * target_build.FUNCTIONS_PER_PART + 1
    parts = parallel.deal([(str(k), None) for k in range(count)], target_build.FUNCTIONS_PER_PART)
    assert len(parts) == cores and sorted(sum(parts, [])) == sorted((str(k), None) for k in range(count))
    lib = kiln.build(_module_of_functions(count), target="llvm")
    assert len(lib.objects) == cores
    a = np.random.default_rng(0).standard_normal(64).astype("float32")
    for k in range(count):
        b = kiln.nd.empty((64,))
        lib[f"add_{k}"](kiln.nd.array(a), b)
        np.testing.assert_allclose(b.numpy(), a + k)
    assert all(f"@add_{k}(" in lib.get_source() for k in range(count))
