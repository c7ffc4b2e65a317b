"""The tuning loop every tuner shares (TVM's ``autotvm/tuner/tuner.py``).

``tune(n_trial, measure_option, early_stopping=None, callbacks=())`` repeats: ask the tuner for a batch of configs
it has not measured (:meth:`Tuner.next_batch`), measure them, tell it the results (:meth:`Tuner.update`), call the
callbacks. The first candidate of every run is the task's default config (today's hand-chosen schedule), so the
best record is never slower than an untuned build. The loop stops after ``n_trial`` measurements, when the space is
exhausted, ``early_stopping`` trials after the last improvement, or when a callback calls :meth:`Tuner.stop`.
"""

import logging
import os

from ..measure.measure import MeasureInput
from ..measure.option import create_measure_batch

__all__ = ["Tuner", "throughput"]


def throughput(flop, result) -> float:
    """FLOP/s of a measured candidate of ``flop`` operations; 0 for one that failed (its error is the record's)."""
    return flop / result.mean_cost if result.error_no == 0 and result.costs else 0.0

logger = logging.getLogger("kiln.autotvm")


class Tuner:
    """Base of the tuners (see the module docstring).

    Attributes
    ----------
    task : Task
    space : ConfigSpace
    best_config : ConfigEntity or None
    best_flops : float
        FLOP/s of the best candidate so far.
    best_measure_pair : (MeasureInput, MeasureResult) or None
    best_iter : int
        The trial that found it.
    visited : set of int
        Indices measured (or being measured).
    """

    def __init__(self, task, **kwargs):
        self.task = task
        self.space = task.config_space
        self.best_config = None
        self.best_flops = 0.0
        self.best_measure_pair = None
        self.best_iter = 0
        self.visited = set()
        self.trials = 0
        self._default_tried = False
        self._stop = False

    # ---- what subclasses provide
    def has_next(self) -> bool:
        """Whether configs remain to be tried."""
        return len(self.visited) < len(self.space)

    def next_batch(self, batch_size) -> list:
        """Up to ``batch_size`` configs not yet visited (subclasses add their indices to ``visited``)."""
        raise NotImplementedError

    def update(self, inputs, results):
        """Learn from measured ``inputs`` and their ``results`` (the search strategies that learn override it)."""

    def _in_range(self, index) -> bool:
        """Whether this tuner may measure ``index`` (a tuner confined to part of the space says no outside it)."""
        return True

    def stop(self):
        """End the running ``tune`` after the current batch (a callback may call it: a time budget)."""
        self._stop = True

    # ---- the loop
    def _first_batch(self, batch_size) -> list:
        self._default_tried = True
        try:
            index = self.task.default_index
        except Exception:  # noqa: BLE001  (a template whose default is outside its space still tunes)
            index = None
        configs = []
        if index is not None and index not in self.visited and self._in_range(index):
            self.visited.add(index)
            configs.append(self.space.get(index))
        if batch_size > len(configs):
            configs += self.next_batch(batch_size - len(configs))
        return configs

    def tune(self, n_trial, measure_option, early_stopping=None, callbacks=(), si_prefix="G"):
        """Measure up to ``n_trial`` configs of the task (see the module docstring).

        Parameters
        ----------
        n_trial : int
            Measurements at most.
        measure_option : dict
            From ``autotvm.measure_option``.
        early_stopping : int, optional
            Stop after this many trials without a better config.
        callbacks : sequence of callable
            Each called as ``callback(tuner, inputs, results)`` after every batch (``autotvm.callback``).
        si_prefix : str
            The unit prefix of the FLOP/s in the log messages.
        """
        measure_batch = create_measure_batch(self.task, measure_option)
        builder = measure_option["builder"]
        parallel = getattr(builder, "n_parallel", None) or os.cpu_count() or 1
        scale = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}.get(si_prefix, 1e9)
        start = self.trials
        self._stop = False
        while self.trials - start < n_trial and self.has_next() and not self._stop:
            size = min(parallel, n_trial - (self.trials - start))
            configs = self.next_batch(size) if self._default_tried else self._first_batch(size)
            if not configs:
                break
            inputs = [MeasureInput(self.task.target, self.task, c) for c in configs]
            results = measure_batch(inputs)
            for inp, res in zip(inputs, results, strict=True):
                self.trials += 1
                # a task without reductions counts no FLOPs: rate it by runs per second
                flops = throughput(self.task.flop or 1, res)
                if flops > self.best_flops:
                    self.best_flops, self.best_config = flops, inp.config
                    self.best_measure_pair, self.best_iter = (inp, res), self.trials
                logger.debug("trial %d: %s %.2f %sFLOP/s (best %.2f), error %d", self.trials, inp.config,
                             flops / scale, si_prefix, self.best_flops / scale, res.error_no)
            self.update(inputs, results)
            for callback in callbacks:
                callback(self, inputs, results)
            if early_stopping is not None and self.trials - max(self.best_iter, start) >= early_stopping:
                logger.info("early stopping %s after %d trials without progress", self.task.name, early_stopping)
                break
        return self
