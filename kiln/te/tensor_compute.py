"""Computes whose elements are blocks computed by a tensor intrinsic (TVM's ``TensorComputeOp``):
``te.compute((m // 16, 16), lambda i: vadd(A[i, 0:16], B[i, 0:16]))``.

Calling a :class:`~kiln.te.tensor_intrin.TensorIntrin` on tensor slices (``A[i, 0:16]``: a Range per dimension,
a point where an index is given, the whole dimension where none is) and scalars gives a :class:`TensorIntrinCall`;
``te.compute`` turns it into a :class:`TensorComputeOp` whose first dimensions (one per argument of the lambda) are
loops and whose remaining dimensions are the block the intrinsic writes. With ``reduce_axis=k`` the intrinsic
accumulates over ``k`` (``reset`` then ``update`` per step). Lowering binds the intrinsic's buffers to the slices
at each iteration (:mod:`kiln.te.schedule_tensorize`).
"""

from dataclasses import dataclass

from ..error import TIRError
from ..tir import expr as E
from ..tir import op as _op
from ..tir.expr_reduce import IterVar, IterVarType, Range
from .tensor import Operation, Tensor, TensorSlice

__all__ = ["TensorIntrinCall", "TensorComputeOp", "intrin_call", "make_tensor_compute"]


@dataclass(eq=False)
class TensorIntrinCall:
    """An intrinsic applied to tensor regions (``regions[k]``: a Range per dimension of ``tensors[k]``)."""

    intrin: object
    tensors: tuple
    regions: tuple
    reduce_axis: tuple
    scalar_inputs: tuple


def _region(arg):
    if isinstance(arg, E.ProducerLoad):  # A[i, j] with every index given: a block of one element
        tensor, indices = arg.producer, arg.indices
    else:
        tensor, indices = (arg.tensor, arg.indices) if isinstance(arg, TensorSlice) else (arg, ())
    out = []
    for d, dim in enumerate(tensor.shape):
        index = indices[d] if d < len(indices) else slice(None)
        if isinstance(index, slice):
            start = E.convert(0 if index.start is None else index.start)
            stop = dim if index.stop is None else E.convert(index.stop)
            out.append(Range.from_min_extent(start, _op.subtract(stop, start)))
        else:
            out.append(Range.from_min_extent(E.convert(index), E.IntImm("int32", 1)))
    return tensor, tuple(out)


def intrin_call(intrin, *args, reduce_axis=()):
    """``intrin(*args, reduce_axis=...)``: tensors (or slices) and scalars, in any order (TVM's
    ``TensorIntrin.__call__``)."""
    tensors, regions, scalars = [], [], []
    for a in args:
        if isinstance(a, TensorSlice | Tensor) or isinstance(a, E.ProducerLoad) and isinstance(a.producer, Tensor):
            t, r = _region(a)
            tensors.append(t)
            regions.append(r)
        else:
            scalars.append(E.convert(a))
    axes = (reduce_axis,) if isinstance(reduce_axis, IterVar) else tuple(reduce_axis)
    if len(tensors) != len(intrin.inputs):
        raise TIRError(f"tensor intrinsic {intrin.name}: called on {len(tensors)} tensors, takes {len(intrin.inputs)}")
    if len(scalars) != len(intrin.scalar_params):
        raise TIRError(f"tensor intrinsic {intrin.name}: called with {len(scalars)} scalars, takes "
                       f"{len(intrin.scalar_params)}")
    return TensorIntrinCall(intrin, tuple(tensors), tuple(regions), axes, tuple(scalars))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TensorComputeOp(Operation):
    """See the module docstring: ``axis`` holds every output dimension, the first ``schedulable_ndim`` of them
    loops; ``intrin`` computes the rest from ``regions`` of ``inputs``."""

    axis: tuple = ()
    reduce_axis: tuple = ()
    schedulable_ndim: int = 0
    intrin: object = None
    inputs: tuple = ()
    regions: tuple = ()
    scalar_inputs: tuple = ()

    def _output_shapes(self):
        shape = tuple(iv.dom.extent for iv in self.axis)
        return (shape,) * self.intrin.op.num_outputs

    def _output_dtypes(self):
        return tuple(self.intrin.op.output(k).dtype for k in range(self.intrin.op.num_outputs))

    @property
    def root_iter_vars(self) -> tuple:
        """The loops: the schedulable axes, then the reduction axes."""
        return self.axis[:self.schedulable_ndim] + self.reduce_axis

    @property
    def input_tensors(self) -> list:
        return list(self.inputs)


def make_tensor_compute(name, tag, attrs, shape, axis, call):
    """The TensorComputeOp of ``te.compute(shape, fcompute)`` when ``fcompute`` (over ``axis``) returned ``call``."""
    extra = tuple(IterVar(Range.from_min_extent(E.IntImm(s.dtype, 0), s), E.Var(f"ax{k}", s.dtype),
                          IterVarType.DimInfo) for k, s in enumerate(shape[len(axis):]))
    op = TensorComputeOp(name, tag, attrs, tuple(axis) + extra, call.reduce_axis, len(axis), call.intrin,
                         call.tensors, call.regions, call.scalar_inputs)
    return op.output(0) if op.num_outputs == 1 else [op.output(i) for i in range(op.num_outputs)]
