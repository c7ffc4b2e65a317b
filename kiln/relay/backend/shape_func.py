"""Shape functions: the PrimFuncs the VM runs before a kernel whose result has dynamic dimensions, to learn the
result's shape and allocate it (TVM's ``FShapeFunc``).

Two kinds, as in TVM:

- **data-independent** (almost every operator): the result's shape follows from the arguments' shapes. Lowering
  gives each ``relay.Any`` dimension of an argument a size variable, so the operator's own TE compute already states
  the result's shape as an expression of those variables (a convolution's ``(H + 2p - k) // s + 1``); the shape
  function evaluates those expressions from the int64 shapes of the arguments that have size variables. Nothing is
  written twice, so a shape function cannot disagree with its kernel.
- **data-dependent** (``dyn.reshape``, ``argwhere``...): the shape depends on values. The operator registers a
  function (:func:`~kiln.relay.op.op.register_shape_func`, next to its type relation) that builds the shape with TE
  from the argument tensors themselves; such an operator is ``OPAQUE`` (never fused), so its kernel is its own.

Either way the PrimFunc writes, for each output ``k`` of the kernel, ``out_shape_k`` (its int64 shape) and
``out_bytes_k`` (its size in bytes, what ``memory.alloc_storage`` takes). A kernel's compute may also record
conditions its arguments' sizes must meet (``attrs[SHAPE_CHECKS]``: a dynamic dimension broadcast against a static
one must equal it or be 1; a reshape must keep the number of elements); the shape function asserts them, so a
violation fails its call (``..._fused_add_shape_func: dimension 0 of ... does not broadcast to ...``, a
:class:`~kiln.error.KilnError` from the VM naming the function) before the kernel could read out of bounds.
"""

import numpy as np

from ...error import CodegenError
from ...te import compute, create_schedule, lower, placeholder
from ...te.tensor import ComputeOp
from ...tir.expr import BufferLoad, Cast, IntImm
from ...tir.expr import Var as TirVar
from ...tir.functor import StmtExprMutator
from ...tir.op import const as tir_const
from ...tir.stmt import AssertStmt
from ...tir.stmt_functor import substitute
from ...topi.utils import SHAPE_CHECKS
from ..op.dyn.common import shape_tensor

__all__ = ["data_independent_shape_func", "data_dependent_shape_func", "is_static"]


def is_static(tensors) -> bool:
    """Whether every dimension of ``tensors`` is a constant."""
    return all(isinstance(d, int | IntImm) for t in tensors for d in t.shape)


def _constant_of(value):
    return lambda: value


def _shape_and_bytes(k, dims, dtype) -> list:
    """The two outputs of a shape function for result ``k``: its int64 shape ``dims`` and its size in bytes."""
    nbytes = tir_const(np.dtype(dtype).itemsize, "int64")
    for d in dims:
        nbytes = nbytes * d
    return [shape_tensor(dims, f"out_shape_{k}"), compute((), _constant_of(nbytes), name=f"out_bytes_{k}")]


def _recorded_checks(outputs) -> list:
    """The ``(condition, message)`` pairs the computes behind ``outputs`` recorded under :data:`SHAPE_CHECKS`."""
    checks, seen, stack = [], set(), [t.op for t in outputs]
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        if isinstance(op, ComputeOp):
            checks.extend((op.attrs or {}).get(SHAPE_CHECKS, ()))
        stack.extend(t.op for t in op.input_tensors)
    return checks


class _ReadBuffers(StmtExprMutator):
    """Reads of the shape function's argument tensors (ProducerLoad) as reads of their buffers."""

    def __init__(self, buffers):
        self.buffers = buffers

    def visit_producer_load(self, op):
        return BufferLoad(self.buffers[op.producer], tuple(self.visit_expr(i) for i in op.indices))


def _build(args, results, checks, name):
    """Lower the shape function; each check becomes an assertion in front of its body."""
    schedule = create_schedule([t.op for t in results])
    (func,) = lower(schedule, [*args, *results], name=name).functions.values()
    if not checks:
        return func
    buffers = {tensor: func.buffer_map[param] for tensor, param in zip(args, func.params, strict=False)}
    reads = _ReadBuffers(buffers)
    body = func.body
    for condition, message in reversed(checks):
        body = AssertStmt(reads.visit_expr(condition), message, body)
    return func.with_fields(body=body)


def data_independent_shape_func(inputs, outputs, name):
    """The shape function of a kernel from ``inputs`` (placeholders, ``relay.Any`` dimensions as size variables) to
    ``outputs`` (see the module docstring); it takes the int64 shape of each input that has a size variable, in
    order. None when every output shape is static and the computes recorded no check (a kernel whose result is
    static but whose dynamic arguments must meet a condition, such as ``nll_loss``'s batch against its targets',
    still gets one: it computes the static shape and asserts the conditions before the kernel runs)."""
    recorded = _recorded_checks(outputs)
    if is_static(outputs) and not recorded:
        return None
    shapes, bindings = [], {}
    for i, tensor in enumerate(inputs):
        dims = [(d, v) for d, v in enumerate(tensor.shape) if isinstance(v, TirVar)]
        if not dims:
            continue
        shape = placeholder((len(tensor.shape),), "int64", name=f"in_shape_{i}")
        shapes.append(shape)
        for d, v in dims:
            bindings[v] = Cast(v.dtype, shape[d])

    def evaluated(expr):
        return substitute(tir_const(expr, "int32") if isinstance(expr, int) else expr, bindings)

    results = []
    for k, tensor in enumerate(outputs):
        results += _shape_and_bytes(k, [Cast("int64", evaluated(d)) for d in tensor.shape], tensor.dtype)
    checks = [(evaluated(condition), message) for condition, message in recorded]
    return _build(shapes, results, checks, name)


def data_dependent_shape_func(fshape, attrs, inputs, out_types, name):
    """The shape function of a data-dependent operator: ``fshape(attrs, tensors, out_types)`` (registered with the
    operator) returns the int64 shape tensor of each output and ``(condition, message)`` checks, built with TE from
    ``tensors``, the kernel's own input placeholders (size variables included)."""
    args = list(inputs)
    shapes, checks = fshape(attrs, args, out_types)
    if len(shapes) != len(out_types):
        raise CodegenError(f"shape function {name}: {len(shapes)} shapes for {len(out_types)} outputs")
    results = []
    for k, (shape, ttype) in enumerate(zip(shapes, out_types, strict=True)):
        dims = [Cast("int64", shape[j]) for j in range(ttype.ndim)]
        results += _shape_and_bytes(k, dims, ttype.dtype)
    return _build(args, results, list(checks), name)

