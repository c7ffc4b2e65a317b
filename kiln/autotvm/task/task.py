"""Tuning tasks and the registry of schedule templates (TVM's ``autotvm/task/task.py`` and ``topi_integration.py``).

A *template* is a topi compute ``fcompute(cfg, *args) -> outs`` paired with a schedule
``fschedule(cfg, outs, target) -> Schedule`` under a name such as ``"conv2d_NCHWc.x86"``; topi registers them with
:func:`register_topi_compute` and :func:`register_topi_schedule`. Its arguments are tensors and plain values; a
*workload* is the same with every tensor replaced by ``("TENSOR", shape, dtype)`` and the name in front::

    ("conv2d_NCHWc.x86", ("TENSOR", (1, 1, 16, 16, 16), "float32"), ("TENSOR", (2, 1, 3, 3, 16, 16), "float32"),
     (1, 1), (1, 1, 1, 1), (1, 1), "float32")

It identifies a kernel: the operator, its shapes, dtypes and attributes. The operator strategy
(``relay/op/strategy/x86.py``) calls :func:`template_implementation`, which asks the current dispatch context
(:mod:`.dispatcher`) for the workload's config and hands it to both the compute and the schedule.

A :class:`Task` is a workload with its target: ``task.config_space`` (the knobs the template declares),
``task.instantiate(config) -> (schedule, tensors)`` to build one candidate, and ``task.flop``.
"""

import functools
import math
from dataclasses import dataclass, field

from ...error import KilnError
from ...target.target import Target
from ...te.operation import placeholder
from ...te.tensor import ComputeOp, Tensor
from ...tir import expr as E
from .dispatcher import ApplyConfig, DispatchContext
from .space import ConfigSpace, FallbackConfigEntity

__all__ = ["TASK_TABLE", "TaskTemplate", "Task", "create", "register_topi_compute", "register_topi_schedule",
           "args_to_workload", "template_implementation", "lookup_template", "compute_flop", "UnknownTaskError",
           "template", "get_config"]


class SymbolicShapeError(KilnError):
    """A template argument with a size known only at run time (such kernels are not tuned)."""


class UnknownTaskError(KilnError, KeyError):
    """A task name with no registered template (a record of another kiln, or a typo)."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


@dataclass
class TaskTemplate:
    """A compute and a schedule registered under one task name."""

    name: str
    fcompute: object = None
    fschedule: object = None
    fcustomized: object = None  # a whole template ``f(*args) -> (s, tensors)`` reading ``get_config()``

    def __call__(self, cfg, *args, target=None):
        """The schedule and the tensors (inputs, then outputs) of the template on ``args`` under ``cfg``."""
        if self.fcustomized is not None:
            with ApplyConfig(cfg):
                s, tensors = self.fcustomized(*args)
            return s, list(tensors)
        outs = _as_list(self.fcompute(cfg, *args))
        s = self.fschedule(cfg, outs, target)
        inputs = [a for a in args if isinstance(a, Tensor)]
        return s, inputs + outs


TASK_TABLE: dict = {}
"""Task name -> :class:`TaskTemplate`."""


def _template(name) -> TaskTemplate:
    return TASK_TABLE.setdefault(name, TaskTemplate(name))


def lookup_template(name) -> TaskTemplate:
    """The complete template registered as ``name`` (topi's templates are registered when topi is imported, which
    a process that only unpickled a task has not done yet); UnknownTaskError when there is none."""
    if name not in TASK_TABLE:
        from ... import topi  # noqa: F401  (registers the x86 templates)
    template = TASK_TABLE.get(name)
    if template is None or (template.fcustomized is None and (template.fcompute is None
                                                               or template.fschedule is None)):
        known = ", ".join(sorted(TASK_TABLE)) or "none"
        raise UnknownTaskError(f"autotvm: no schedule template is registered as {name!r} (known: {known})")
    return template


def register_topi_compute(task_name):
    """Register ``fcompute(cfg, *args) -> tensor or list`` as the compute of the template ``task_name``."""
    def register(fcompute):
        _template(task_name).fcompute = fcompute
        return fcompute

    return register


def register_topi_schedule(task_name):
    """Register ``fschedule(cfg, outs, target) -> Schedule`` as the schedule of the template ``task_name``."""
    def register(fschedule):
        _template(task_name).fschedule = fschedule
        return fschedule

    return register


def template(task_name, func=None):
    """Register ``func(*args) -> (schedule, tensors)`` as the whole template ``task_name`` (TVM's
    ``autotvm.template``): it declares and reads its knobs on :func:`get_config`. Called directly, it builds with
    the config the current dispatch context gives its workload (the fallback outside tuning); a task built by
    ``autotvm.task.create(task_name, args, target)`` instantiates it under each candidate's config."""
    def register(f):
        _template(task_name).fcustomized = f

        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            if kwargs:
                raise KilnError(f"autotvm template {task_name!r}: pass its arguments by position (they make the "
                                "workload)")
            workload = args_to_workload(args, task_name)
            with ApplyConfig(DispatchContext.current.query(Target.current(allow_none=True), workload)):
                return f(*args)

        return wrapper

    return register(func) if func is not None else register


def get_config():
    """The config the template being built reads its knobs from (TVM's ``autotvm.get_config``)."""
    return DispatchContext.current.query(Target.current(allow_none=True), None)


def _as_list(outs):
    return list(outs) if isinstance(outs, list | tuple) else [outs]


def _serialize(value):
    """A template argument as it appears in a workload (and in a JSON record)."""
    if isinstance(value, Tensor):
        return ("TENSOR", tuple(int(d) for d in _const_shape(value)), value.dtype)
    if isinstance(value, list | tuple):
        return tuple(_serialize(v) for v in value)
    if isinstance(value, E.IntImm):
        return int(value.value)
    if isinstance(value, E.FloatImm):
        return float(value.value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise KilnError(f"autotvm: a template argument must be a tensor, number, string or tuple of them, got "
                    f"{type(value).__name__}")


def _const_shape(tensor):
    dims = []
    for d in tensor.shape:
        if not isinstance(d, E.IntImm):
            raise SymbolicShapeError(f"autotvm: tensor {tensor.op.name} has a symbolic shape {tensor.shape}; only "
                                     "static shapes are tuned")
        dims.append(d.value)
    return dims


def args_to_workload(args, task_name) -> tuple:
    """The workload of calling the template ``task_name`` on ``args`` (see the module docstring)."""
    return (task_name, *(_serialize(a) for a in args))


def _deserialize(value, index):
    """Template arguments back from a workload: ``("TENSOR", shape, dtype)`` becomes a placeholder."""
    if isinstance(value, list | tuple):
        if len(value) == 3 and value[0] == "TENSOR":
            return placeholder(tuple(value[1]), str(value[2]), name=f"p{index}")
        return tuple(_deserialize(v, index) for v in value)
    return value


def template_implementation(task_name, args, target):
    """``(fcompute, fschedule)`` in the strategy's ``(attrs, inputs, out_type)`` / ``(attrs, outs, target)``
    forms, running the template ``task_name`` on ``args`` (the call's tensors and attributes) with the config the
    current dispatch context gives the workload."""
    template = lookup_template(task_name)
    try:
        workload = args_to_workload(args, task_name)
    except SymbolicShapeError:
        workload = None  # sizes known only at run time: not a task, the hand-chosen schedule
    fallback = FallbackConfigEntity()

    def config():
        return fallback if workload is None else DispatchContext.current.query(target, workload)

    def fcompute(attrs, inputs, out_type):
        with target:  # computes that size blocks by the vector width read the current target
            return _as_list(template.fcompute(config(), *args))

    def fschedule(attrs, outs, target_):
        return template.fschedule(config(), outs, target_)

    return fcompute, fschedule


def compute_flop(outs) -> int:
    """Floating-point operations of the reductions reachable from ``outs`` (tensors, or a Schedule): two per
    multiply-add (one per other combiner step) of each reduction, the work a tuned kernel is rated by (GFLOP/s)."""
    if hasattr(outs, "outputs"):  # a Schedule (TVM's argument): its output operations
        outs = [op.output(0) for op in outs.outputs]
    total, stack, seen = 0, [t.op for t in outs], set()
    while stack:
        op = stack.pop()
        if id(op) in seen or not isinstance(op, ComputeOp):
            continue
        seen.add(id(op))
        stack.extend(t.op for t in op.input_tensors)
        if not op.reduce_axis:
            continue
        out_size = math.prod(int(iv.dom.extent.value) for iv in op.axis)
        red_size = math.prod(int(iv.dom.extent.value) for iv in op.reduce_axis)
        source = op.body[0].source[0] if hasattr(op.body[0], "source") else None
        per_step = 2 if isinstance(source, E.Mul) or (isinstance(source, E.Cast) and isinstance(source.value, E.Mul)) \
            else 1
        total += out_size * red_size * per_step
    return total


@dataclass
class Task:
    """A tuning task: a template's workload on a target (TVM's ``autotvm.task.Task``).

    Attributes
    ----------
    name : str
        The template (``"conv2d_NCHWc.x86"``).
    args : tuple
        The workload's arguments (tensors as ``("TENSOR", shape, dtype)``).
    target : Target
    config_space : ConfigSpace
        The knobs the template declares for these arguments.
    flop : int
        Floating-point operations of one run (for GFLOP/s).
    """

    name: str
    args: tuple
    target: Target = None
    config_space: ConfigSpace = field(default=None, repr=False)
    flop: int = 0

    def __post_init__(self):
        lookup_template(self.name)
        self.args = tuple(self.args)
        self.target = Target(self.target) if isinstance(self.target, str) else (self.target or Target("llvm"))
        if self.config_space is None:
            self.config_space = ConfigSpace()
            _, tensors = self._build(self.config_space)
            self.flop = compute_flop([t for t in tensors if isinstance(t.op, ComputeOp)])

    @property
    def workload(self) -> tuple:
        """``(name, *args)``: what dispatch contexts and records key the task by."""
        return (self.name, *self.args)

    def _build(self, cfg):
        template = lookup_template(self.name)
        args = [_deserialize(a, i) for i, a in enumerate(self.args)]
        with ApplyConfig(cfg), self.target:
            return template(cfg, *args, target=self.target)

    def instantiate(self, config):
        """The schedule and tensors (inputs, then outputs) of candidate ``config`` (a ConfigEntity)."""
        return self._build(config)

    def default_config(self) -> FallbackConfigEntity:
        """The config an untuned build uses (today's hand-chosen schedule)."""
        cfg = FallbackConfigEntity()
        self._build(cfg)
        return cfg

    @property
    def default_index(self) -> int:
        """The index of :meth:`default_config` in ``config_space`` (so tuners can measure it first)."""
        return self.config_space.index_of(self.default_config())

    def __repr__(self):
        return f"Task(name={self.name!r}, args={self.args!r}, space={len(self.config_space)}, flop={self.flop})"


def create(task_name, args, target) -> Task:
    """The :class:`Task` of template ``task_name`` on ``args`` (a workload's arguments) for ``target``."""
    return Task(task_name, tuple(args), target)
