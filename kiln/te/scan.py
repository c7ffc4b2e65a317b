"""Recurrences over a leading time axis (TVM's ``te.scan`` and ``te.ScanOp``).

``te.scan(init, update, state_placeholder)`` describes ``state[0:k] = init`` and, for ``t`` from ``k`` to the end,
``state[t] = update(t)``, where ``update`` reads earlier steps through the placeholder ``state_placeholder``
(``s_state[t - 1, i]``). The scan's outputs are the whole states. Several states can recur together (lists of
``init``/``update``/placeholders of equal length). The *body* of a scan, the operations between its placeholders
(and ``inputs``) and its updates, is computed inside the loop over the time axis (:func:`kiln.te.graph.scan_get_body`).

Lowering (as TVM's): the scan's stage is the loop over the time axis, its body (a group, see
:func:`kiln.te.schedule_group.group_scan_bodies`) is computed inside at one step per iteration, and the init, the
update and the placeholder of each state all are the scan's output buffer (:mod:`kiln.te.schedule_ops`).
"""

from dataclasses import dataclass, field

from ..arith import Analyzer
from ..error import TIRError
from ..ir.node import IGNORE
from ..tir import expr as E
from ..tir import op as _op
from ..tir.expr_reduce import IterVar, IterVarType, Range
from .tensor import Operation, Tensor

__all__ = ["ScanOp", "scan"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ScanOp(Operation):
    """A scan (see the module docstring): ``scan_axis`` runs over the updated steps ``[init_len, total)``;
    ``spatial_axis_`` holds one IterVar per non-time dimension of each output."""

    scan_axis: IterVar = None
    init: tuple = ()
    update: tuple = ()
    state_placeholder: tuple = ()
    inputs: tuple = ()
    spatial_axis_: tuple = field(default=(), init=False, metadata=IGNORE)

    def __post_init__(self):
        for name in ("init", "update", "state_placeholder", "inputs"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        init, update, state = self.init, self.update, self.state_placeholder
        if not (len(init) == len(update) == len(state)) or not init:
            raise TIRError(f"te.scan {self.name}: init, update and state_placeholder must be as many tensors "
                           f"(got {len(init)}, {len(update)}, {len(state)})")
        ana = Analyzer()

        def equal(a, b):
            return ana.can_prove(_op.equal(a, b))

        dom = self.scan_axis.dom
        spatial = []
        for i, (ti, tu, ts) in enumerate(zip(init, update, state, strict=True)):
            where = f"te.scan {self.name}: state {i}"
            if not (ti.dtype == tu.dtype == ts.dtype):
                raise TIRError(f"{where}: init, update and placeholder dtypes differ ({ti.dtype}, {tu.dtype}, "
                               f"{ts.dtype})")
            if not (len(ti.shape) == len(tu.shape) == len(ts.shape)):
                raise TIRError(f"{where}: init, update and placeholder must have the same number of dimensions")
            if not equal(ti.shape[0], dom.min):
                raise TIRError(f"{where}: init.shape[0] ({ti.shape[0]}) must be where the scan axis starts "
                               f"({dom.min})")
            if not equal(ts.shape[0], _op.add(dom.min, dom.extent)):
                raise TIRError(f"{where}: the placeholder's first dimension must be the scan's length")
            for k in range(len(tu.shape)):
                if not equal(tu.shape[k], ts.shape[k]) or (k and not equal(ti.shape[k], ts.shape[k])):
                    raise TIRError(f"{where}: dimension {k} of init, update and placeholder differ")
                if k:
                    spatial.append(IterVar(Range.from_min_extent(0, tu.shape[k]),
                                           E.Var(f"{self.name}.out{i}.i{k}", "int32"), IterVarType.DimInfo))
        object.__setattr__(self, "spatial_axis_", tuple(spatial))
        Operation.__post_init__(self)

    def _output_shapes(self):
        return tuple(tuple(t.shape) for t in self.state_placeholder)

    def _output_dtypes(self):
        return tuple(t.dtype for t in self.update)

    @property
    def root_iter_vars(self) -> tuple:
        """The scan axis, then the spatial axes."""
        return (self.scan_axis, *self.spatial_axis_)

    @property
    def input_tensors(self) -> list:
        return [*self.init, *self.update]


def _tensors(value, what):
    values = [value] if isinstance(value, Tensor) else list(value)
    for v in values:
        if not isinstance(v, Tensor):
            raise TIRError(f"te.scan: {what} must be te.Tensors, got {type(v).__name__}")
    return values


def scan(init, update, state_placeholder, inputs=None, name="scan", tag="", attrs=None):
    """A recurrence over the first dimension (TVM's ``te.scan``; see the module docstring).

    Parameters
    ----------
    init : Tensor or list of Tensor
        The first steps of each state (first dimension: how many).
    update : Tensor or list of Tensor
        Each state's value at every step, reading earlier steps through ``state_placeholder``.
    state_placeholder : Tensor or list of Tensor
        Placeholders of the states' full shapes.
    inputs : list of Tensor, optional
        The tensors the update reads besides the states (bounds the scan's body).
    name, tag, attrs
        As for ``te.compute``.

    Returns
    -------
    tensor : Tensor or list of Tensor
        The states over all steps.

    Examples
    --------
    >>> s_state = te.placeholder((m, n))                                                    # doctest: +SKIP
    >>> s_init = te.compute((1, n), lambda _, i: X[0, i])                                  # doctest: +SKIP
    >>> s_update = te.compute((m, n), lambda t, i: s_state[t - 1, i] + X[t, i])            # doctest: +SKIP
    >>> cumsum = te.scan(s_init, s_update, s_state, inputs=[X])                            # doctest: +SKIP
    """
    init = _tensors(init, "init")
    update = _tensors(update, "update")
    state = _tensors(state_placeholder, "state_placeholder")
    inputs = _tensors(inputs or [], "inputs")
    if len(init) != len(update) or len(init) != len(state):
        raise TIRError(f"te.scan {name}: init, update and state_placeholder must be as many tensors "
                       f"(got {len(init)}, {len(update)}, {len(state)})")
    start = init[0].shape[0]
    axis = IterVar(Range.from_min_extent(start, _op.subtract(update[0].shape[0], start)),
                   E.Var(f"{name}.idx", "int32"), IterVarType.Ordered)
    op = ScanOp(name, tag, attrs, axis, init, update, state, inputs)
    res = [op.output(i) for i in range(op.num_outputs)]
    return res[0] if len(res) == 1 else res
