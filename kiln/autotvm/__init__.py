"""kiln.autotvm: search-based tuning of schedule templates, with AutoTVM's API (TVM's ``tvm.autotvm``; SPEC 10).

The pieces, bottom up:

* :mod:`.task`: knob spaces (``cfg.define_split`` ...), the template registry topi fills, tasks, and the dispatch
  contexts that hand a template its config (the default one, ``ApplyConfig``, ``apply_history_best``);
  ``task.extract_from_program`` finds a model's tunable kernels;
* :mod:`.measure`: ``measure_option``, ``LocalBuilder`` (candidates compiled in parallel processes),
  ``LocalRunner`` (each candidate run and timed in a child process, checked against the default config's output),
  ``RayRunner`` (the same over a Ray cluster);
* :mod:`.tuner`: ``RandomTuner``, ``GridSearchTuner``, ``GATuner``, ``XGBTuner`` (a ranking model over features of
  the lowered loops, explored by simulated annealing), all with ``tune(n_trial, measure_option, early_stopping,
  callbacks)``;
* :mod:`.record` (JSON-lines logs, ``load_from_file``, ``pick_best``) and :mod:`.callback` (``progress_bar``,
  ``log_to_file``).

Only :mod:`.task` is imported eagerly: topi imports it while Relay is still loading, and the measuring and tuning
modules need Relay and the code generators. The others load on first use of their names.

Examples
--------
>>> tasks = autotvm.task.extract_from_program(mod["main"], params, target="llvm")      # doctest: +SKIP
>>> option = autotvm.measure_option(autotvm.LocalBuilder(), autotvm.LocalRunner(number=4))
>>> for task in tasks:                                                                 # doctest: +SKIP
...     autotvm.tuner.XGBTuner(task).tune(200, option, callbacks=[autotvm.callback.log_to_file("log.json")])
>>> with autotvm.apply_history_best("log.json"):                                       # doctest: +SKIP
...     lib = relay.build(mod, target="llvm", params=params)
"""

import importlib

from . import task
from .task import (
    ApplyConfig,
    ApplyFixedConfig,
    ApplyHistoryBest,
    DispatchContext,
    FallbackContext,
    get_config,
    template,
)
from .task.space import ConfigEntity, ConfigSpace, FallbackConfigEntity

apply_history_best = ApplyHistoryBest
"""``with autotvm.apply_history_best(log):`` builds with the best record per workload (TVM's name)."""

_LAZY = {
    "measure": ("measure", None), "tuner": ("tuner", None), "record": ("record", None),
    "callback": ("callback", None), "feature": ("tuner.feature", None), "tophub": ("tophub", None),
    "measure_option": ("measure", "measure_option"), "LocalBuilder": ("measure", "LocalBuilder"),
    "LocalRunner": ("measure", "LocalRunner"), "RayRunner": ("measure", "RayRunner"),
    "MeasureInput": ("measure", "MeasureInput"), "MeasureResult": ("measure", "MeasureResult"),
    "MeasureErrorNo": ("measure", "MeasureErrorNo"),
}


def __getattr__(name):
    """The measuring, tuning and record modules and their main names, imported on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name, attr = _LAZY[name]
    module = importlib.import_module(f"{__name__}.{module_name}")
    return module if attr is None else getattr(module, attr)


__all__ = ["task", "ApplyConfig", "ApplyFixedConfig", "ApplyHistoryBest", "DispatchContext", "FallbackContext",
           "ConfigEntity", "ConfigSpace", "FallbackConfigEntity", "apply_history_best", "template", "get_config",
           *_LAZY]
