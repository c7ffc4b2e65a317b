"""Tensors and the operations that produce them (TVM's ``te.Tensor``, ``te.PlaceholderOp``, ``te.ComputeOp``).

An :class:`Operation` describes how to produce one or more tensors: a :class:`PlaceholderOp` is an input (a shape
and a dtype), a :class:`ComputeOp` gives each output element as an expression of its index variables (``axis``,
IterVars over ``[0, shape[k])``), possibly reducing over ``reduce_axis``. A :class:`Tensor` is output ``value_index``
of an operation; indexing it (``A[i, j]`` or ``A(i, j)``) builds a :class:`kiln.tir.ProducerLoad`, which is how one
compute reads another. Nothing is bound to memory here: :mod:`kiln.te.schedule_ops` gives tensors buffers when a
schedule is lowered.

Operations and tensors are graph nodes compared by identity. An operation creates its output tensors once, so
``op.output(0) is op.output(0)``.
"""

from dataclasses import dataclass, field

from ..error import TIRError
from ..ir.attrs import DictAttrs
from ..ir.node import IGNORE, Node
from ..tir import dtype as _dt
from ..tir import expr as E
from ..tir.stmt_functor import post_order_visit

__all__ = ["Tensor", "TensorSlice", "Operation", "PlaceholderOp", "ComputeOp", "ExternOp"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Tensor(Node):
    """Output ``value_index`` of ``op``, with its ``shape`` and ``dtype`` (TVM's ``te.Tensor``).

    Examples
    --------
    >>> A = te.placeholder((4, 8), name="A")          # doctest: +SKIP
    >>> A[1, 2]                                        # doctest: +SKIP
    A[1, 2]
    """

    shape: tuple
    dtype: str
    op: object
    value_index: int = 0

    # ``expr + tensor`` is a tensor: TIR's operators return NotImplemented so the tensor's reflected operator
    # (installed by kiln.topi, which owns the broadcasting computes) builds it
    _defers_tir_ops = True

    type_key = "te.Tensor"

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def name(self) -> str:
        """The operation's name, with ``.v<k>`` for outputs after the first of a multi-output operation."""
        op = self.op
        return op.name if op.num_outputs == 1 else f"{op.name}.v{self.value_index}"

    def __call__(self, *indices):
        if len(indices) == 1 and isinstance(indices[0], tuple | list):
            indices = tuple(indices[0])
        if len(indices) != len(self.shape):
            raise TIRError(f"tensor {self.name} has {len(self.shape)} dimensions but {len(indices)} indices were given")
        indices = tuple(E.convert(i) for i in indices)
        for i in indices:
            if not _dt.is_integer(i.dtype):
                raise TIRError(f"tensor {self.name}: indices must be integers, got {i.dtype}")
        return E.ProducerLoad(self, indices)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        if len(indices) < len(self.shape) or any(isinstance(i, slice) for i in indices):
            return TensorSlice(self, indices)  # a region (A[i, 0:16]) for a tensor intrinsic, or a partial index
        return self(*indices)

    def __str__(self):
        shape = ", ".join(str(s) for s in self.shape)
        return f"Tensor(shape=[{shape}], op.name={self.op.name})"

    __repr__ = __str__


class TensorSlice:
    """A tensor indexed in its leading dimensions only (``A[i]`` of a 2-D ``A``); index it further: ``A[i][j]``."""

    __slots__ = ("tensor", "indices")

    def __init__(self, tensor, indices):
        self.tensor, self.indices = tensor, tuple(indices)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        return self.tensor[self.indices + indices]

    @property
    def dtype(self):
        return self.tensor.dtype


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Operation(Node):
    """Base of operations: ``name``, ``tag``, ``attrs``; ``output(i)`` gives the i-th output tensor."""

    name: str = field(metadata=IGNORE)
    tag: str = ""
    attrs: DictAttrs = field(default_factory=DictAttrs)
    _outputs: tuple = field(default=(), init=False, metadata=IGNORE)

    def __post_init__(self):
        object.__setattr__(self, "attrs", DictAttrs.make(self.attrs))
        shapes, dtypes = self._output_shapes(), self._output_dtypes()
        outputs = tuple(Tensor(shape, dtype, self, i)
                        for i, (shape, dtype) in enumerate(zip(shapes, dtypes, strict=True)))
        object.__setattr__(self, "_outputs", outputs)

    def _output_shapes(self):
        raise NotImplementedError

    def _output_dtypes(self):
        raise NotImplementedError

    @property
    def num_outputs(self) -> int:
        """How many tensors the operation produces."""
        return len(self._outputs)

    def output(self, index) -> Tensor:
        """Output tensor ``index``."""
        if not 0 <= index < len(self._outputs):
            raise TIRError(f"operation {self.name} has {len(self._outputs)} outputs, no output {index}")
        return self._outputs[index]

    @property
    def input_tensors(self) -> list:
        """The tensors the operation reads, in the order of first use."""
        return []

    def __str__(self):
        return f"{type(self).__name__}(name={self.name})"

    __repr__ = __str__


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PlaceholderOp(Operation):
    """An input tensor of ``shape`` and ``dtype``: what ``te.placeholder`` builds."""

    shape: tuple = ()
    dtype: str = "float32"

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(E.convert(s) for s in self.shape))
        object.__setattr__(self, "dtype", _dt.normalize(self.dtype))
        Operation.__post_init__(self)

    def _output_shapes(self):
        return (self.shape,)

    def _output_dtypes(self):
        return (self.dtype,)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ComputeOp(Operation):
    """Outputs given elementwise by ``body`` (one expression per output) over the ``axis`` IterVars.

    When the bodies are :class:`kiln.tir.Reduce` expressions, ``reduce_axis`` holds their reduction axes; every
    body of a multi-output reduction shares one combiner, source, axis and condition (only ``value_index`` differs).
    """

    axis: tuple = ()
    body: tuple = ()
    reduce_axis: tuple = field(default=(), init=False)

    def __post_init__(self):
        body = _without_empty_reductions(tuple(E.convert(b) for b in self.body))
        object.__setattr__(self, "axis", tuple(self.axis))
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "reduce_axis", _check_bodies(self.name, body))
        Operation.__post_init__(self)

    def _output_shapes(self):
        shape = tuple(iv.dom.extent for iv in self.axis)
        return (shape,) * len(self.body)

    def _output_dtypes(self):
        return tuple(b.dtype for b in self.body)

    @property
    def root_iter_vars(self) -> tuple:
        """The data-parallel axes, then the reduction axes."""
        return self.axis + self.reduce_axis

    @property
    def input_tensors(self) -> list:
        # a reduction's extent may read a tensor too (a length per output element)
        return producer_tensors(self.body + tuple(e for iv in self.reduce_axis for e in (iv.dom.min, iv.dom.extent)))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ExternOp(Operation):
    """Outputs written by an opaque statement ``body`` (TVM's ``te.ExternOp``, what ``te.extern`` builds).

    ``body`` reads ``inputs[k]`` through the buffer ``input_placeholders[k]`` and writes output ``k`` through
    ``output_placeholders[k]``, whose shapes and dtypes are the outputs'.
    """

    inputs: tuple = ()
    input_placeholders: tuple = ()
    output_placeholders: tuple = ()
    body: object = None

    def __post_init__(self):
        for name in ("inputs", "input_placeholders", "output_placeholders"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if len(self.inputs) != len(self.input_placeholders):
            raise TIRError(f"te.extern {self.name}: {len(self.inputs)} inputs but {len(self.input_placeholders)} "
                           "input buffers")
        for t, buf in zip(self.inputs, self.input_placeholders, strict=True):
            if not isinstance(t, Tensor):
                raise TIRError(f"te.extern {self.name}: an input must be a te.Tensor, got {type(t).__name__}")
            if len(t.shape) != len(buf.shape) or t.dtype != buf.dtype:
                raise TIRError(f"te.extern {self.name}: input {t.name} ({len(t.shape)}-d {t.dtype}) does not match "
                               f"its buffer {buf.name} ({len(buf.shape)}-d {buf.dtype})")
        Operation.__post_init__(self)

    def _output_shapes(self):
        return tuple(tuple(b.shape) for b in self.output_placeholders)

    def _output_dtypes(self):
        return tuple(b.dtype for b in self.output_placeholders)

    @property
    def input_tensors(self) -> list:
        return list(self.inputs)


def _without_empty_reductions(body):
    """``body`` with reductions over no axis (``te.sum(x, axis=[])``, an instance norm of a 2-D tensor) written as
    their one combination with the initial value: nothing downstream then meets a Reduce without loops."""
    if not body or not all(isinstance(b, E.Reduce) and not b.axis for b in body):
        return body
    first = body[0]
    start = first.init or first.combiner.identity_element
    combined = first.combiner(start, first.source)
    return tuple(E.Select(first.condition, combined[b.value_index], start[b.value_index]) for b in body)


def _check_bodies(name, body):
    """The reduction axes of the bodies; raise unless all or none are Reduce, sharing their axes."""
    if not body:
        raise TIRError(f"te.compute {name}: the compute function returned no expression")
    reduces = [b for b in body if isinstance(b, E.Reduce)]
    if not reduces:
        for b in body:
            _check_no_nested_reduce(name, b)
        return ()
    if len(reduces) != len(body):
        raise TIRError(f"te.compute {name}: either every output is a reduction or none is")
    first = reduces[0]
    for r in reduces[1:]:
        if r.combiner is not first.combiner or not _same(r.axis, first.axis) or not _same(r.source, first.source):
            raise TIRError(f"te.compute {name}: the reductions of a multi-output compute must share combiner, "
                           "source and axes (build them with one call of a tuple comm_reducer)")
    for s in first.source:
        _check_no_nested_reduce(name, s)
    return tuple(first.axis)


def _same(a, b) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _check_no_nested_reduce(name, expr):
    found = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, E.Reduce) else None)
    if found:
        raise TIRError(f"te.compute {name}: a reduction (te.sum/max/min) must be the whole output expression, "
                       "not part of one; compute it in its own stage")


def producer_tensors(exprs) -> list:
    """The distinct tensors read (through ProducerLoad) by ``exprs``, in order of first use."""
    seen, out = set(), []

    def visit(node):
        if isinstance(node, E.ProducerLoad) and id(node.producer) not in seen:
            seen.add(id(node.producer))
            out.append(node.producer)

    for e in exprs:
        post_order_visit(e, visit)
    return out
