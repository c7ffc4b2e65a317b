"""Compiling parts of one module on several cores: :func:`fork_map` runs a function over a few work items, the first
in this process (or in a child too) and the others in forked children. The LLVM backend compiles its parts this way,
LowerTE lowers a model's new primitive functions this way (``relay/backend/te_compiler.py``).

Code generation and LLVM's optimizer are pure CPU work that Python threads cannot share (llvmlite serializes every
call into LLVM behind one lock), so the LLVM backend splits a model's functions into one part per idle core and compiles
the parts in processes. Children are forked: they inherit the IR, the target and the compile cache's location, and
send back only a small picklable result. A part whose child fails in any way (an exception, a crash, a result
that does not pickle) is compiled again in this process, so its error is raised here exactly as a one-process
build would raise it.
"""

import multiprocessing
import os

__all__ = ["usable_cores", "idle_cores", "deal", "fork_map"]


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def idle_cores() -> int:
    """The usable cores not busy with another task right now, at least 1: the kernel's count of runnable tasks
    (``/proc/loadavg``), this process not counted. On a machine whose cores are all taken (a test run with one
    worker per core, a benchmark's load generator) splitting work only adds the cost of forking."""
    cores = usable_cores()
    try:
        with open("/proc/loadavg", encoding="ascii") as loadavg:
            running = int(loadavg.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):  # not Linux: assume the cores are free
        return cores
    return max(1, min(cores, cores - (running - 1)))


def deal(items, min_per_part) -> list:
    """``items`` dealt round-robin into one part per idle core, each part of at least ``min_per_part`` items (one
    part for a few items or a busy machine), so that parts of similar size run on those cores at once. The same
    items dealt into as many parts give the same parts (the LLVM backend finds each part's object in its cache)."""
    items = list(items)
    count = max(1, min(idle_cores(), len(items) // min_per_part))
    return [items[k::count] for k in range(count)]


def _child(fn, item, conn):
    try:
        conn.send(("ok", fn(item)))
    except BaseException:  # noqa: BLE001  (the parent redoes the item and raises there)
        conn.send(("failed", None))
    finally:
        conn.close()


def fork_map(fn, items, first_here=True):
    """``[fn(item) for item in items]``, the items after the first computed in forked children at the same time.

    With ``first_here=False`` the first item has a child too and this process only waits: for work that leaves
    much garbage behind, which a child's exit drops at once but this process would free object by object (the
    Python objects of a part's LLVM IR: about a second for half of DenseNet-121's kernels).

    Falls back to this process for any item whose child does not return a result (see the module docstring), and
    for all of them where ``fork`` is unavailable or this process may not have children.
    """
    items = list(items)
    if len(items) < 2 or "fork" not in multiprocessing.get_all_start_methods() or \
            multiprocessing.current_process().daemon:  # a daemonic process (a Pool's worker) may not have children
        return [fn(item) for item in items]
    context = multiprocessing.get_context("fork")
    forked = items[1:] if first_here else items
    children = []
    for item in forked:
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=_child, args=(fn, item, send), daemon=True)
        process.start()
        send.close()
        children.append((process, receive))
    try:
        results = [fn(items[0])] if first_here else []
        for (process, receive), item in zip(children, forked, strict=True):
            try:
                status, value = receive.recv()
            except (EOFError, OSError):  # the child died before answering
                status, value = "failed", None
            process.join()
            results.append(value if status == "ok" else fn(item))
        return results
    finally:
        for process, receive in children:
            receive.close()
            if process.is_alive():  # this process raised: the other parts are not needed
                process.kill()
                process.join()
