"""Running measurement jobs in child processes, so that a candidate that crashes (a segmentation fault in its
kernel), hangs or raises costs only its own trial: the tuner gets an outcome for every job and goes on.

Children are forked (the task, its template and the compiled state are inherited, nothing is pickled on the way
in); each sends one small picklable result back through a pipe. At most ``n_parallel`` run at once; one that
outlives ``timeout`` seconds is killed.
"""

import faulthandler
import multiprocessing
import os
import signal
import time
import traceback
from multiprocessing.connection import wait

__all__ = ["run_isolated", "Outcome"]


class Outcome(tuple):
    """``(status, value)``: status ``"ok"`` (value: what the job returned), ``"error"`` (the exception's text),
    ``"crash"`` (how the process died) or ``"timeout"``."""

    @property
    def status(self):
        return self[0]

    @property
    def value(self):
        return self[1]


def _child(conn, fn, args):
    faulthandler.disable()  # a crashing candidate is expected: its outcome says so, no traceback dump on stderr
    try:
        result = Outcome(("ok", fn(*args)))
    except BaseException as exc:  # noqa: BLE001  (everything a candidate raises becomes its error record)
        lines = traceback.format_exception_only(type(exc), exc)
        result = Outcome(("error", "".join(lines).strip()))
    try:
        conn.send(result)
    finally:
        conn.close()
        os._exit(0)  # skip the parent's atexit handlers and finalizers, which belong to the parent


def _death(exitcode) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with status {exitcode} without a result"


def run_isolated(jobs, n_parallel=1, timeout=10.0) -> list:
    """Run each ``(fn, args)`` of ``jobs`` in a forked child; returns one :class:`Outcome` per job, in order."""
    ctx = multiprocessing.get_context("fork")
    results = [None] * len(jobs)
    pending = list(range(len(jobs)))
    running = {}  # job index -> (process, parent end of the pipe, deadline)
    while pending or running:
        while pending and len(running) < max(1, n_parallel):
            index = pending.pop(0)
            parent, child = ctx.Pipe(duplex=False)
            fn, args = jobs[index]
            proc = ctx.Process(target=_child, args=(child, fn, args), daemon=True)
            proc.start()
            child.close()
            running[index] = (proc, parent, time.monotonic() + timeout)
        soonest = min(deadline for _, _, deadline in running.values())
        wait([c for _, c, _ in running.values()] + [p.sentinel for p, _, _ in running.values()],
             timeout=max(0.0, soonest - time.monotonic()))
        for index, (proc, conn, deadline) in list(running.items()):
            outcome = None
            if conn.poll():
                try:
                    outcome = conn.recv()
                except (EOFError, OSError):
                    outcome = None
            if outcome is None and proc.is_alive() and time.monotonic() < deadline:
                continue
            if outcome is None:
                if proc.is_alive():
                    proc.kill()
                    outcome = Outcome(("timeout", f"did not finish within {timeout:g} s"))
                else:
                    proc.join()
                    outcome = Outcome(("crash", _death(proc.exitcode)))
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join()
            conn.close()
            results[index] = outcome
            del running[index]
    return results
