"""Operator strategies (TVM's ``relay.op.op.OpStrategy`` / ``OpImplementation``) and their registration.

An operator's lowering is a pair of functions, an :class:`OpImplementation`:

* ``compute(attrs, inputs, out_type) -> list of te.Tensor``: the operator's outputs as tensor expressions of its
  input tensors (``inputs`` lists one ``te.Tensor`` per tensor argument, a tuple argument flattened into its fields,
  as TVM's LowerTE passes them; ``out_type`` is the call's checked type);
* ``schedule(attrs, outs, target) -> te.Schedule``: a schedule of ``outs``, the outputs of the fused group the
  operator anchors (its own outputs followed by any element-wise consumers).

An :class:`OpStrategy` lists the implementations that apply to one call; the one with the highest ``plevel`` is
used, and its name says which compute and schedule it pairs (``conv2d_NCHWc.x86``). Three op attributes are
registered per Relay operator (``kiln.ir.register_op_attr``), here in Relay, which knows the operators' attribute
classes; topi, below, knows nothing of Relay:

* ``FTVMStrategy``: ``(attrs, inputs, out_type, target) -> OpStrategy`` -- what :func:`select_implementation`
  consults (:mod:`.x86`: computes and schedules chosen by layout and shape);
* ``FTVMCompute``: ``(attrs, inputs, out_type) -> list of te.Tensor`` -- the target-independent compute
  (:mod:`.generic`);
* ``FTVMSchedule``: ``(attrs, outs, target) -> te.Schedule`` -- the schedule matching ``FTVMCompute``.
"""

from dataclasses import dataclass, field

from ....error import OpNotImplemented
from ....ir.op import Op, register_op_attr
from ....target.target import resolve_target
from ....tir.expr import IntImm

__all__ = ["OpImplementation", "OpStrategy", "select_implementation", "register_compute", "register_schedule",
           "register_strategy", "op_name", "as_list"]

LEVEL = 10
"""The level topi registers its op attributes at (a later registration needs a higher one to override)."""


@dataclass(frozen=True)
class OpImplementation:
    """A compute and the schedule that goes with it."""

    compute: object
    schedule: object
    name: str = "default"
    plevel: int = 10


@dataclass
class OpStrategy:
    """The implementations that apply to one call (TVM's ``OpStrategy``)."""

    implementations: list = field(default_factory=list)

    def add_implementation(self, compute, schedule, name="default", plevel=10):
        """Add ``compute``/``schedule`` as implementation ``name`` with priority ``plevel``."""
        self.implementations.append(OpImplementation(compute, schedule, name, plevel))
        return self

    def best(self) -> OpImplementation:
        """The implementation with the highest ``plevel`` (the first of equals)."""
        if not self.implementations:
            raise OpNotImplemented("the operator strategy has no implementation for this call")
        return max(self.implementations, key=lambda impl: impl.plevel)


def op_name(op) -> str:
    """The name of ``op`` (an ``Op`` or a name)."""
    return op if isinstance(op, str) else op.name


def as_list(outputs) -> list:
    """A compute's result as a list of tensors."""
    return list(outputs) if isinstance(outputs, list | tuple) else [outputs]


def register_compute(name, fcompute, level=LEVEL):
    """Register ``fcompute(attrs, inputs, out_type)`` as ``FTVMCompute`` of operator ``name``."""
    return register_op_attr(name, "FTVMCompute", fcompute, level)


def register_schedule(name, fschedule, level=LEVEL):
    """Register ``fschedule(attrs, outs, target)`` as ``FTVMSchedule`` of operator ``name``."""
    return register_op_attr(name, "FTVMSchedule", fschedule, level)


def register_strategy(name, fstrategy, level=LEVEL):
    """Register ``fstrategy(attrs, inputs, out_type, target)`` as ``FTVMStrategy`` of operator ``name``."""
    return register_op_attr(name, "FTVMStrategy", fstrategy, level)


def select_implementation(op, attrs, inputs, out_type, target=None):
    """Pick the implementation of a call and compute its outputs (TVM's ``te_compiler.select_implementation``).

    Parameters
    ----------
    op : Op or str
        The operator.
    attrs : Attrs or None
        The call's attributes.
    inputs : list of te.Tensor
        One tensor per tensor argument (tuple arguments flattened).
    out_type : Type
        The call's checked type (``TensorType`` or ``TupleType``).
    target : Target or str, optional
        The target (the current one, else ``llvm``).

    Returns
    -------
    impl : OpImplementation
    outputs : list of te.Tensor

    Examples
    --------
    >>> impl, outs = select_implementation("nn.relu", None, [x], out_type)      # doctest: +SKIP
    >>> s = impl.schedule(None, outs, "llvm")                                   # doctest: +SKIP
    """
    name = op_name(op)
    target = resolve_target(target)
    registered = Op.get(name)
    fstrategy = registered.get_attr("FTVMStrategy")
    if _has_symbolic_shape(inputs) and not registered.get_attr("TDynamicStrategy"):
        # a target strategy plans its tiles from static sizes; with a size known only at run time the generic
        # compute and schedule run, unless the operator declares its strategy handles symbolic sizes
        fstrategy = _generic_strategy(name) or fstrategy
    if fstrategy is not None:
        impl = fstrategy(attrs, list(inputs), out_type, target).best()
    else:
        fcompute, fschedule = registered.get_attr("FTVMCompute"), registered.get_attr("FTVMSchedule")
        if fcompute is None or fschedule is None:
            raise OpNotImplemented(f"operator {name} has no compute/schedule in topi (FTVMStrategy, or FTVMCompute "
                                   "and FTVMSchedule)")
        impl = OpImplementation(fcompute, fschedule, f"{name}.generic")
    return impl, as_list(impl.compute(attrs, list(inputs), out_type))


def _has_symbolic_shape(tensors) -> bool:
    return any(not isinstance(d, int | IntImm) for t in tensors for d in getattr(t, "shape", ()))


def _generic_strategy(name):
    from . import generic  # the generic strategies import this module

    return generic.default_strategy(name) if name in generic.COMPUTES else None
