"""Finding the tunable kernels of a Relay program (TVM's ``autotvm/task/relay_integration.py``).

:func:`extract_from_program` compiles the program as ``relay.build`` would, up to the lowering of its fused groups
(the standard pipeline, with AlterOpLayout's blocked layouts, then LowerTE), under a dispatch context that records
every workload a schedule template asks a config for. Each distinct workload becomes one :class:`~.task.Task`: the
kernels are those ``relay.build`` will compile, after fusion and layout alteration, keyed by template, shapes,
attributes and target.
"""

from ...ir.module import IRModule
from ...ir.pass_context import PassContext
from ...relay.backend.lower_te import lower_te
from ...relay.build import normalize_params, resolve_build_target
from ...relay.function import Function
from ...relay.optimize import optimize
from .dispatcher import DispatchContext, workload_key
from .task import create

__all__ = ["extract_from_program", "extract_from_multiple_program", "TaskExtractor"]

# the Relay operators whose kernels each template tunes (for the ``ops`` filter)
TEMPLATE_OPS = {
    "conv2d_NCHWc.x86": ("nn.conv2d",),
    "depthwise_conv2d_NCHWc.x86": ("nn.conv2d", "nn.depthwise_conv2d"),
    "dense_pack.x86": ("nn.dense", "nn.contrib_dense_pack", "nn.matmul"),
    "dense_nopack.x86": ("nn.dense", "nn.matmul"),
    "group_conv2d_NCHWc.x86": ("nn.conv2d",),
    "batch_matmul_pack.x86": ("nn.batch_matmul",),
    "pool2d.x86": ("nn.max_pool2d", "nn.avg_pool2d"),
    "global_pool.x86": ("nn.global_avg_pool2d", "nn.global_max_pool2d"),
    "reduce.x86": ("sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin"),
}


class TaskExtractor(DispatchContext):
    """A dispatch context recording each workload queried (in first-query order) and deferring the answer to the
    enclosing context."""

    def __init__(self):
        super().__init__()
        self.workloads = {}

    def _query_inside(self, target, workload):
        self.workloads.setdefault(workload_key(workload), (target, workload))
        return None


def _op_names(ops):
    names = set()
    for op in ops or ():
        names.add(op if isinstance(op, str) else op.name)
    return names


def extract_from_program(mod, params, target, target_host=None, ops=None, opt_level=3):
    """The tuning tasks of ``mod``: one per distinct tunable kernel ``relay.build`` would compile.

    Parameters
    ----------
    mod : IRModule or relay.Function
        The program (``mod`` or ``mod["main"]``).
    params : dict of str to array, or None
        Values of ``@main``'s parameters by name (bound as constants, as ``relay.build`` does, so weights are
        packed into the blocked layouts and the kernels are the ones a build compiles).
    target : str or Target
    target_host : optional
        Accepted for TVM compatibility.
    ops : list of Op or str, optional
        Keep only the tasks of these Relay operators (``[relay.op.get("nn.conv2d")]``).
    opt_level : int
        The optimization level of the compilation (3, as ``relay.build`` is usually run, alters layouts).

    Returns
    -------
    tasks : list of Task
        With ``name``, ``args``, ``target``, ``config_space`` and ``flop``; kernels whose space has a single config
        are left out.
    """
    if isinstance(mod, Function):
        mod = IRModule.from_expr(mod)
    target = resolve_build_target(target, target_host, what="autotvm.task.extract_from_program")
    params = normalize_params(params, what="autotvm.task.extract_from_program")
    wanted = _op_names(ops)
    with PassContext(opt_level=opt_level), target, TaskExtractor() as extractor:
        optimized, _ = optimize(mod, target, params)
        lower_te(optimized, target=target)
    tasks = []
    for _, workload in extractor.workloads.values():
        if wanted and not wanted & set(TEMPLATE_OPS.get(workload[0], ())):
            continue
        task = create(workload[0], workload[1:], target)
        if len(task.config_space) > 1:  # a kernel whose template leaves it no choice is not worth a task
            tasks.append(task)
    return tasks


def extract_from_multiple_program(mods, params, target, target_host=None, ops=None):
    """:func:`extract_from_program` over several programs (``params`` one dict per program), without repeats."""
    tasks, seen = [], set()
    for mod, param in zip(mods, params, strict=True):
        for task in extract_from_program(mod, param, target, target_host, ops):
            key = workload_key(task.workload)
            if key not in seen:
                seen.add(key)
                tasks.append(task)
    return tasks
