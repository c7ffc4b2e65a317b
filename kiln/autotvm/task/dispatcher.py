"""Which config a schedule template uses (TVM's ``autotvm/task/dispatcher.py``).

A template asks ``DispatchContext.current.query(target, workload)`` for its config. The contexts stack: ``with
ApplyConfig(cfg):`` or ``with apply_history_best(log):`` pushes one, leaving the ``with`` pops it. At the bottom is
the :class:`FallbackContext`, which answers with a :class:`FallbackConfigEntity` (today's hand-chosen schedule), so
an untuned build is exactly the build kiln made before tuning existed.

This module sits at topi's layer (topi templates import it), as do the tasks and the record format it reads logs
with (:mod:`kiln.autotvm.record`); measuring and tuning sit above relay.

Each context has a ``cache_key``: the lowering cache (``relay/backend/te_compiler.py``) adds it to its key, so a
kernel lowered under one set of configs is not reused under another.
"""

import hashlib
import itertools
import threading
import warnings

from ...error import KilnError
from ...target.target import Target
from .space import FallbackConfigEntity

__all__ = ["DispatchContext", "ApplyConfig", "ApplyFixedConfig", "ApplyHistoryBest", "FallbackContext",
           "target_key", "workload_key", "clear_fallback_cache"]


def target_key(target) -> str:
    """What records of ``target`` are keyed by: the kind and the CPU the code is for (``native`` resolved to the
    host's CPU), so records measured on one CPU model apply to builds for it whatever the target string's other
    options are."""
    if target is None:
        return ""
    if isinstance(target, str):
        target = Target(target)
    return f"{target.kind.name} -mcpu={target.cpu_name}"


def workload_key(workload) -> str:
    """A hashable, printable key of a workload tuple (task name and arguments); ``None`` (a template asking for its
    config outside any task, as ``autotvm.get_config()`` does) has a key of its own."""
    if workload is None:
        return "None"
    return repr(tuple(_as_tuple(x) for x in workload))


def _as_tuple(value):
    if isinstance(value, list | tuple):
        return tuple(_as_tuple(v) for v in value)
    return value


class DispatchContext:
    """Base of the config-dispatch contexts (see the module docstring). ``DispatchContext.current`` is the
    innermost one (per thread)."""

    _local = threading.local()
    _serials = itertools.count()
    #: Whether the context keeps something of each query besides answering it (a task extractor records the
    #: workloads). Lowering forks only when no context in the stack does (``relay/backend/te_compiler.py``), since a
    #: child's records would not reach this process; a subclass that only answers sets it to False.
    records_queries = True

    def __init__(self):
        self._old = None
        self._serial = next(DispatchContext._serials)  # unlike id(), never reused by a later context

    @classmethod
    def _current(cls):
        return getattr(cls._local, "current", None) or _FALLBACK

    @classmethod
    def stack_records_queries(cls) -> bool:
        """Whether a context of the current stack records its queries (:attr:`records_queries`)."""
        context = cls._current()
        while context is not None:
            if context.records_queries:
                return True
            context = context._old
        return False

    def query(self, target, workload):
        """The config for ``workload`` on ``target``: this context's answer, else the enclosing context's."""
        cfg = self._query_inside(target, workload)
        if cfg is None:
            cfg = (self._old or _FALLBACK).query(target, workload)
        return cfg

    def _query_inside(self, target, workload):
        raise NotImplementedError

    @property
    def cache_key(self) -> str:
        """Identifies the configs this context (and those it encloses) hands out."""
        inner = self._own_key()
        outer = self._old.cache_key if self._old is not None else ""
        return f"{inner}|{outer}" if outer else inner

    def _own_key(self) -> str:
        return f"{type(self).__name__}#{self._serial}"

    def __enter__(self):
        self._old = getattr(DispatchContext._local, "current", None)
        DispatchContext._local.current = self
        return self

    def __exit__(self, *exc):
        DispatchContext._local.current = self._old
        self._old = None


class _CurrentDescriptor:
    """``DispatchContext.current``: a class attribute in TVM, per thread here."""

    def __get__(self, obj, owner):
        return owner._current()


DispatchContext.current = _CurrentDescriptor()  # type: ignore[assignment]


class FallbackContext(DispatchContext):
    """The bottom context: a :class:`FallbackConfigEntity` per workload (cached, so the knobs a template assigns
    stay assigned)."""

    records_queries = False

    def __init__(self):
        super().__init__()
        self.memory = {}

    def _query_inside(self, target, workload):
        key = (target_key(target), workload_key(workload))
        if key not in self.memory:
            self.memory[key] = FallbackConfigEntity()
        return self.memory[key]

    def query(self, target, workload):
        return self._query_inside(target, workload)

    def clear_cache(self, target, workload):
        """Forget the fallback config of ``workload`` on ``target``."""
        self.memory.pop((target_key(target), workload_key(workload)), None)

    @property
    def cache_key(self) -> str:
        return ""


_FALLBACK = FallbackContext()


def clear_fallback_cache(target=None, workload=None):
    """Forget the fallback configs (all of them, or the one of ``workload`` on ``target``)."""
    if workload is None:
        _FALLBACK.memory.clear()
    else:
        _FALLBACK.clear_cache(target, workload)


class ApplyConfig(DispatchContext):
    """Use ``config`` for every workload queried inside the ``with`` (how a task is instantiated for one
    candidate). The workload queried is remembered in ``workload``."""

    def __init__(self, config):
        super().__init__()
        self._config = config
        self.workload = None

    def _query_inside(self, target, workload):
        self.workload = workload
        return self._config

    def _own_key(self) -> str:
        return f"ApplyConfig({self._config})"


class ApplyFixedConfig(DispatchContext):
    """Use ``config`` for the workloads of the tasks named in ``task_names``; others go to the enclosing context."""

    records_queries = False

    def __init__(self, tasks, config):
        super().__init__()
        self._names = {t if isinstance(t, str) else t.name for t in tasks}
        self._config = config

    def _query_inside(self, target, workload):
        return self._config if workload[0] in self._names else None

    def _own_key(self) -> str:
        return f"ApplyFixedConfig({sorted(self._names)}, {self._config})"


class ApplyHistoryBest(DispatchContext):
    """Use the best measured config of each workload for the target being built (TVM's ``ApplyHistoryBest``).

    Parameters
    ----------
    records : str, path, open file, or iterable of them or of (MeasureInput, MeasureResult)
        Log files (JSON lines, :mod:`kiln.autotvm.record`), or decoded records. Failed measurements are
        ignored; the fastest of the others per ``(target, workload)`` wins.

    A workload without a record uses the default config. Records whose target (kind and CPU) is not the one being
    built are ignored, with one warning per target naming it.
    """

    records_queries = False

    def __init__(self, records):
        super().__init__()
        self.best_by_targetkey = {}
        self._warned = set()
        self._digest = hashlib.sha256()
        if records is not None:
            self.load(records)

    @staticmethod
    def _pairs(records):
        """``(MeasureInput, MeasureResult)`` pairs of a log path, an open log, or an iterable of paths and pairs."""
        from ..record import load_from_file, load_from_stream  # on use: record imports the tasks, which import this

        if isinstance(records, str) or hasattr(records, "__fspath__"):
            yield from load_from_file(records)
        elif hasattr(records, "read"):
            yield from load_from_stream(records)
        else:
            for item in records:
                if isinstance(item, str) or hasattr(item, "__fspath__") or hasattr(item, "read"):
                    yield from ApplyHistoryBest._pairs(item)
                elif isinstance(item, tuple) and len(item) == 2 and hasattr(item[0], "task"):
                    yield item  # (MeasureInput, MeasureResult)
                else:  # a nested iterable: zip([path, ...]) gives 1-tuples, batches are iterables of pairs
                    yield from ApplyHistoryBest._pairs(item)

    def load(self, records):
        """Add ``records`` (see the class docstring) to the best-config table."""
        for inp, res in self._pairs(records):
            if res.error_no != 0 or not res.costs:
                continue
            cost = sum(res.costs) / len(res.costs)
            key = (target_key(inp.target), workload_key(inp.task.workload))
            best = self.best_by_targetkey.get(key)
            if best is None or cost < best[1]:
                self.best_by_targetkey[key] = (inp.config, cost)
        for key in sorted(self.best_by_targetkey):
            self._digest.update(repr((key, str(self.best_by_targetkey[key][0]))).encode())

    def _query_inside(self, target, workload):
        tkey = target_key(target)
        found = self.best_by_targetkey.get((tkey, workload_key(workload)))
        if found is not None:
            return found[0]
        others = {t for t, w in self.best_by_targetkey if t != tkey and w == workload_key(workload)}
        for other in sorted(others - self._warned):
            self._warned.add(other)
            warnings.warn(f"autotvm: ignoring the tuning records for target {other!r}: building for {tkey!r}",
                          stacklevel=4)
        return None

    def _own_key(self) -> str:
        return f"ApplyHistoryBest({self._digest.hexdigest()[:16]})"


def check_workload(workload):
    """Raise KilnError unless ``workload`` is a tuple whose first item is a task name."""
    if not isinstance(workload, tuple) or not workload or not isinstance(workload[0], str):
        raise KilnError(f"autotvm: a workload is a tuple (task name, args...), got {workload!r}")
