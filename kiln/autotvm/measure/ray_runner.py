"""Measuring candidates on a Ray cluster (issue 17): :class:`RayRunner` builds and times each candidate on a
cluster node, as ``LocalBuilder`` + ``LocalRunner`` do on this machine.

Each candidate is one Ray task (carrying the task's template, so templates defined in a user's script work on the
workers too) that builds it, runs the task's default config once per worker process for the
correctness reference, and runs and times the candidate, the build and the run each in a forked child of the worker
(:func:`~.isolation.run_isolated`), so a crashing kernel costs its trial and not the worker. A task asks for
``cpus_per_measurement`` CPUs (default: all of a node's), so measurements on one node do not overlap and disturb
each other; nodes measure in parallel. A node that dies mid-measurement loses only the trials it was running: their
Ray tasks fail and are recorded as errors. Costs from several nodes are comparable when the nodes are the same CPU
model (the records are keyed by the target's CPU, not by node).

``ray`` is an optional dependency (``pip install kiln[tune]``); ``RayRunner(address=None)`` starts a local Ray
instance, as ``ray.init()`` does.
"""

import os
import tempfile
import time
from dataclasses import dataclass, field

from ...error import KilnError
from ..task.task import TASK_TABLE, lookup_template
from .isolation import run_isolated
from .local import _task_seed, build_candidate, outcome_to_result, run_candidate
from .measure import MeasureErrorNo, MeasureResult, Runner

__all__ = ["RayRunner"]

_REFERENCES: dict = {}  # per worker process: task key -> the default config's outputs


def _measure_remote(task, template, config, number, repeat, min_repeat_ms, timeout, check):
    """Build, check and time one candidate (runs in a Ray worker); returns a MeasureResult. ``template`` is the
    task's template, registered in the worker if its module did not register it there (a template defined in the
    user's script)."""
    TASK_TABLE.setdefault(task.name, template)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kiln-ray-") as directory:
        key = repr(task.workload) + str(task.target)
        if check and key not in _REFERENCES:
            (ref,) = run_isolated([(_reference, (task, directory))], 1, timeout * 4)
            _REFERENCES[key] = ref.value if ref.status == "ok" else None
        (built,) = run_isolated([(build_candidate, (task, config, directory))], 1, timeout)
        if built.status != "ok":
            code = MeasureErrorNo.BUILD_TIMEOUT if built.status == "timeout" else MeasureErrorNo.COMPILE_HOST
            return MeasureResult((), int(code), time.perf_counter() - start, time.time(), f"build: {built.value}")
        job = (run_candidate, (built.value, _task_seed(task), number, repeat, min_repeat_ms,
                               _REFERENCES.get(key) if check else None))
        (outcome,) = run_isolated([job], 1, timeout)
        return outcome_to_result(outcome, time.perf_counter() - start)


def _reference(task, directory):
    from ..task.space import FallbackConfigEntity

    built = build_candidate(task, FallbackConfigEntity(), directory)
    return run_candidate(built, _task_seed(task), 1, 1, 0)["outputs"]


@dataclass
class RayRunner(Runner):
    """Build and measure candidates on a Ray cluster (see the module docstring).

    Parameters
    ----------
    address : str, optional
        The cluster (``"ray://host:10001"``, ``"auto"``); None starts a local Ray instance.
    number, repeat, min_repeat_ms, timeout : as for LocalRunner
    cpus_per_measurement : float, optional
        CPUs a measurement reserves on its node (default: every CPU of this machine, one measurement per node).
    check_correctness : bool
        Compare every candidate with the task's default config.
    """

    address: str | None = None
    timeout: float = 10
    number: int = 4
    repeat: int = 3
    min_repeat_ms: float = 0
    cpus_per_measurement: float | None = None
    check_correctness: bool = True
    _remote: object = field(default=None, repr=False)

    builds_remotely = True

    def _connect(self):
        if self._remote is not None:
            return self._remote
        try:
            import ray
        except ImportError:
            raise KilnError("autotvm.RayRunner needs the ray package: pip install 'kiln[tune]'") from None
        if not ray.is_initialized():
            ray.init(address=self.address, include_dashboard=False, log_to_driver=False,
                     num_cpus=None if self.address else os.cpu_count())
        cpus = self.cpus_per_measurement or os.cpu_count() or 1
        self._remote = ray.remote(num_cpus=cpus, max_retries=0)(_measure_remote)
        return self._remote

    def run(self, measure_inputs, build_results=None):
        """One MeasureResult per input, in order; a Ray task that fails (its node died) gives an error result."""
        import ray

        remote = self._connect()
        refs = [remote.remote(inp.task, lookup_template(inp.task.name), inp.config, self.number, self.repeat,
                              self.min_repeat_ms, self.timeout, self.check_correctness) for inp in measure_inputs]
        results = []
        for ref in refs:
            try:
                results.append(ray.get(ref, timeout=self.timeout * 6 + 60))
            except Exception as exc:  # noqa: BLE001  (a lost node or worker costs only its trials)
                results.append(MeasureResult((), int(MeasureErrorNo.RUNTIME_DEVICE), 0.0, time.time(),
                                             f"ray: {type(exc).__name__}: {exc}"))
        return results

    def shutdown(self):
        """Disconnect from Ray (and stop the local instance this runner started)."""
        import ray

        if ray.is_initialized():
            ray.shutdown()
        self._remote = None
