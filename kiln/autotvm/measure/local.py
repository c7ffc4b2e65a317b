"""Measuring candidates on this machine (TVM's ``autotvm/measure/measure_methods.py``): :class:`LocalBuilder`
compiles them in parallel child processes, :class:`LocalRunner` runs and times them one at a time, each in a child
process.

Correctness: before the first candidate of a task, the runner builds the task's default config (the hand-chosen
schedule) and runs it on fixed random inputs; every candidate then runs on the same inputs and its outputs must
match (``rtol``/``atol``), else it is recorded as ``WRONG_ANSWER``. A candidate whose build or run raises, crashes
or times out is recorded with its error code; the tuner never stops for it.
"""

import hashlib
import os
import tempfile
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ...runtime.module import load_module
from ...runtime.ndarray import array as nd_array
from ...target.build import build as kiln_build
from ..task.space import FallbackConfigEntity
from .isolation import run_isolated
from .measure import Builder, BuildResult, MeasureErrorNo, MeasureResult, Runner

__all__ = ["LocalBuilder", "LocalRunner", "build_candidate", "run_candidate", "random_arguments"]

FUNC_NAME = "default_function"


def build_candidate(task, config, directory) -> dict:
    """Compile ``config`` of ``task`` into a library under ``directory``; returns its path and the arguments'
    ``(shape, dtype)`` (inputs first) with how many are inputs. Raises what instantiation or compilation raises
    (the ``stage`` attribute of the exception says which)."""
    try:
        s, tensors = task.instantiate(config)
    except Exception as exc:
        exc.stage = "instantiate"
        raise
    n_inputs = len([t for t in tensors if not hasattr(t.op, "body")])
    module = kiln_build(s, tensors, task.target, name=FUNC_NAME)
    fd, path = tempfile.mkstemp(suffix=".so", dir=directory)
    os.close(fd)
    module.export_library(path)
    specs = [(tuple(int(d.value) for d in t.shape), t.dtype) for t in tensors]
    return {"path": path, "specs": specs, "n_inputs": n_inputs}


def random_arguments(specs, n_inputs, seed) -> list:
    """Numpy arrays for a kernel's arguments: inputs uniform in [-1, 1] (small integers for integer dtypes) drawn
    from ``seed``, outputs zero."""
    rng = np.random.default_rng(seed)
    arrays = []
    for i, (shape, dtype) in enumerate(specs):
        if i >= n_inputs:
            arrays.append(np.zeros(shape, dtype))
        elif np.issubdtype(np.dtype(dtype), np.integer):
            arrays.append(rng.integers(0, 4, size=shape).astype(dtype))
        else:
            arrays.append(rng.uniform(-1, 1, size=shape).astype(dtype))
    return arrays


def run_candidate(built, seed, number, repeat, min_repeat_ms, reference=None, rtol=1e-3, atol=1e-3) -> dict:
    """Load the library ``built`` describes, run it once on the seeded arguments and compare its outputs with
    ``reference`` (a list of arrays; None: no check), then time it. Returns ``{"costs": [...], "outputs": [...],
    "wrong": message or None}``."""
    module = load_module(built["path"])
    host = random_arguments(built["specs"], built["n_inputs"], seed)
    args = [nd_array(a) for a in host]
    module[FUNC_NAME](*args)
    outputs = [a.numpy() for a in args[built["n_inputs"]:]]
    wrong = None
    if reference is not None:
        for k, (out, ref) in enumerate(zip(outputs, reference, strict=True)):
            scale = max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0)
            if out.shape != ref.shape or not np.allclose(out, ref, rtol=rtol, atol=atol * scale, equal_nan=True):
                worst = float(np.max(np.abs(out - ref))) if out.shape == ref.shape else float("nan")
                wrong = f"output {k} differs from the default config's (max abs difference {worst:.3g})"
                break
    timer = module.time_evaluator(FUNC_NAME, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms)
    costs = list(timer(*args).results) if wrong is None else []
    return {"costs": costs, "outputs": outputs if reference is None else None, "wrong": wrong}


def _task_seed(task) -> int:
    return int(hashlib.sha256(repr(task.workload).encode()).hexdigest()[:8], 16)


_OUTCOME_ERRORS = {"timeout": MeasureErrorNo.BUILD_TIMEOUT, "crash": MeasureErrorNo.COMPILE_HOST,
                   "error": MeasureErrorNo.COMPILE_HOST}


@dataclass
class LocalBuilder(Builder):
    """Compile candidates in up to ``n_parallel`` child processes (default: one per core), each within
    ``timeout`` seconds (TVM's ``LocalBuilder``; ``build_kwargs``, ``build_func``, ``do_fork`` and ``runtime``
    are accepted for TVM compatibility: kiln always forks and builds with ``kiln.build``)."""

    timeout: float = 10
    n_parallel: int | None = None
    build_kwargs: dict | None = None
    build_func: object = "default"
    do_fork: bool = True
    runtime: object = None
    _dir: object = field(default=None, repr=False)

    def build(self, measure_inputs):
        """One :class:`BuildResult` per input, in order."""
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="kiln-autotvm-")
        jobs = [(_build_job, (inp.task, inp.config, self._dir.name)) for inp in measure_inputs]
        n_parallel = self.n_parallel or os.cpu_count() or 1
        out = []
        for outcome in run_isolated(jobs, n_parallel, self.timeout):
            status, value = outcome
            if status == "ok" and value["built"]:
                out.append(BuildResult(value["built"]["path"], 0, "", value["time"], value["built"]))
            elif status == "ok":
                out.append(BuildResult(None, value["error_no"], value["error_msg"], value["time"]))
            else:
                out.append(BuildResult(None, int(_OUTCOME_ERRORS[status]), f"build {status}: {value}", self.timeout))
        return out


def _build_job(task, config, directory):
    start = time.perf_counter()
    try:
        built = build_candidate(task, config, directory)
    except Exception as exc:  # noqa: BLE001  (recorded as the candidate's error)
        code = MeasureErrorNo.INSTANTIATION_ERROR if getattr(exc, "stage", "") == "instantiate" else \
            MeasureErrorNo.COMPILE_HOST
        return {"built": None, "error_no": int(code), "error_msg": f"{type(exc).__name__}: {exc}",
                "time": time.perf_counter() - start}
    return {"built": built, "time": time.perf_counter() - start}


@dataclass
class LocalRunner(Runner):
    """Run and time built candidates on this machine, one at a time, each in a child process (TVM's
    ``LocalRunner``).

    Parameters
    ----------
    timeout : float
        Seconds a candidate may take (its runs included).
    number : int
        Runs per measurement (their mean is one cost).
    repeat : int
        Measurements per candidate (the costs recorded).
    min_repeat_ms : float
        Least duration of a measurement: ``number`` grows until one takes this long.
    cooldown_interval : float
        Seconds to rest between two candidates (TVM's default, 0.1), so one does not run in the other's heat.
    enable_cpu_cache_flush : bool
        Accepted for TVM compatibility (the caches are not flushed between runs).
    check_correctness : bool
        Compare every candidate's outputs with the default config's (module docstring).
    rtol, atol : float
        The tolerance of that comparison (``atol`` relative to the reference's largest magnitude).
    """

    timeout: float = 10
    number: int = 4
    repeat: int = 3
    min_repeat_ms: float = 0
    cooldown_interval: float = 0.1
    enable_cpu_cache_flush: bool = False
    module_loader: object = None
    check_correctness: bool = True
    rtol: float = 1e-3
    atol: float = 1e-3
    _references: dict = field(default_factory=dict, repr=False)

    def set_task(self, task):
        """Compute the default config's outputs of ``task`` (once per task), the reference of every candidate."""
        super().set_task(task)
        key = repr(task.workload) + str(task.target)
        if not self.check_correctness or key in self._references:
            return
        with tempfile.TemporaryDirectory(prefix="kiln-autotvm-ref-") as directory:
            (outcome,) = run_isolated([(_reference_job, (task, directory))], 1, self.timeout * 4)
        if outcome.status != "ok":
            warnings.warn(f"autotvm: the default config of {task.name} could not be built and run ({outcome.value}); "
                          "its candidates are measured without a correctness check", stacklevel=2)
            self._references[key] = None
        else:
            self._references[key] = outcome.value

    def reference(self, task):
        """The default config's outputs of ``task`` (None when unchecked)."""
        return self._references.get(repr(task.workload) + str(task.target))

    def run(self, measure_inputs, build_results):
        """One :class:`MeasureResult` per input, in order."""
        results = []
        for k, (inp, built) in enumerate(zip(measure_inputs, build_results, strict=True)):
            if k and self.cooldown_interval > 0:
                time.sleep(self.cooldown_interval)
            if built.error_no:
                results.append(MeasureResult((), built.error_no, built.time_cost, time.time(), built.error_msg))
                continue
            reference = self.reference(inp.task) if self.check_correctness else None
            job = (run_candidate, (built.built, _task_seed(inp.task), self.number, self.repeat, self.min_repeat_ms,
                                   reference, self.rtol, self.atol))
            start = time.perf_counter()
            (outcome,) = run_isolated([job], 1, self.timeout)
            results.append(outcome_to_result(outcome, built.time_cost + time.perf_counter() - start))
            try:
                os.unlink(built.filename)
            except OSError:
                pass
        return results


def outcome_to_result(outcome, all_cost) -> MeasureResult:
    """The :class:`MeasureResult` of running a candidate (an :class:`~.isolation.Outcome` of
    :func:`run_candidate`)."""
    status, value = outcome
    now = time.time()
    if status == "ok" and value["wrong"]:
        return MeasureResult((), int(MeasureErrorNo.WRONG_ANSWER), all_cost, now, value["wrong"])
    if status == "ok":
        return MeasureResult(tuple(value["costs"]), 0, all_cost, now, "")
    code = MeasureErrorNo.RUN_TIMEOUT if status == "timeout" else MeasureErrorNo.RUNTIME_DEVICE
    return MeasureResult((), int(code), all_cost, now, f"run {status}: {value}")


def _reference_job(task, directory):
    built = build_candidate(task, FallbackConfigEntity(), directory)
    return run_candidate(built, _task_seed(task), 1, 1, 0)["outputs"]
