"""kiln.autotvm.task: configuration spaces, tasks, templates and dispatch contexts (TVM's ``autotvm.task``).

This package sits at topi's layer: topi's templates import it. :mod:`.relay_integration`
(``extract_from_program``) needs Relay, which sits above topi, so it is loaded on first use (as TVM's imports Relay
inside its functions); importing it here would make every topi import pull in Relay.
"""

import importlib

from .dispatcher import (
    ApplyConfig,
    ApplyFixedConfig,
    ApplyHistoryBest,
    DispatchContext,
    FallbackContext,
    clear_fallback_cache,
    target_key,
    workload_key,
)
from .space import (
    AnnotateEntity,
    ConfigEntity,
    ConfigSpace,
    FallbackConfigEntity,
    KnobError,
    OtherOptionEntity,
    ReorderEntity,
    SplitEntity,
)
from .task import (
    TASK_TABLE,
    Task,
    UnknownTaskError,
    args_to_workload,
    compute_flop,
    create,
    get_config,
    register_topi_compute,
    register_topi_schedule,
    template,
    template_implementation,
)

_LAZY = {"extract_from_program": "relay_integration", "extract_from_multiple_program": "relay_integration",
         "relay_integration": "relay_integration"}


def __getattr__(name):
    """``extract_from_program`` and ``relay_integration``, imported on first use (see the module docstring)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_LAZY[name]}")
    return module if name == _LAZY[name] else getattr(module, name)
