"""Helpers shared by topi computes and schedules: constant shapes, axis normalization, index (un)raveling, the
traversal that inlines a fused group's injective stages, and target queries.

Targets come from :mod:`kiln.target.target` (which sits below topi; the code generators sit above it):
``resolve_target`` turns a string, None (the current target) or a Target into one, and schedules read the CPU's
facts from ``target.cpu_info``.
"""

import math

from ..error import OpAttributeInvalid, TIRError
from ..target.target import resolve_target
from ..te.schedule import create_schedule
from ..te.tensor import ComputeOp
from ..tir import expr as E
from ..tir import op as _op
from . import tag as _tag

__all__ = [
    "get_const_int", "get_const_tuple", "normalize_axis", "ravel_index", "unravel_index", "traverse_inline",
    "auto_inline_injective", "create_schedule_for", "fused_output", "reads_through_inline", "output_ops",
    "resolve_target", "vector_lanes", "prod", "largest_divisor", "ceil_div", "num_elements", "known_nonpositive",
    "size_checks", "const_matrix", "nchw_pack_layout", "nchw_xc_layout",
]


SHAPE_CHECKS = "kiln.shape_checks"
"""The ``te.compute`` attribute holding ``(condition, message)`` pairs the sizes of its inputs must meet when some are
known only at run time (a broadcast dimension equal to the result's or 1); the shape function asserts them."""


def known_nonpositive(*sizes) -> bool:
    """Whether a static one of ``sizes`` is 0 or less (a symbolic size is checked by the shape function at run
    time, where its value is known)."""
    return any(isinstance(d, int) and d <= 0 for d in sizes)


def size_checks(pairs, what) -> list:
    """The run-time checks, for :data:`SHAPE_CHECKS`, that each ``(a, b)`` of ``pairs`` is equal where one of them is
    symbolic (a different variable); raises OpAttributeInvalid for two static sizes that differ."""
    checks = []
    for a, b in pairs:
        if isinstance(a, int) and isinstance(b, int):
            if a != b:
                raise OpAttributeInvalid(f"{what}: sizes {a} and {b} differ")
        elif a is not b:
            checks.append((_op.equal(a, b), f"{what}: sizes {a} and {b} differ"))
    return checks


def get_const_int(expr) -> int:
    """The value of an integer constant (a Python int passes through); TIRError for a symbolic expression."""
    if isinstance(expr, int):
        return expr
    if isinstance(expr, E.IntImm):
        return expr.value
    raise TIRError(f"topi: expected a constant integer, got {expr}")


def get_const_tuple(shape) -> tuple:
    """A shape as a tuple of Python ints (symbolic entries are kept as expressions)."""
    return tuple(s.value if isinstance(s, E.IntImm) else s for s in shape)


def prod(values):
    """The product of ints or expressions (1 for an empty sequence)."""
    out = 1
    for v in values:
        out = out * v
    return out


def normalize_axis(axis, ndim, what="axis") -> int:
    """``axis`` in ``[0, ndim)`` (negative counts from the end); OpAttributeInvalid when out of range."""
    if not -ndim <= axis < max(ndim, 1):
        raise OpAttributeInvalid(f"{what} {axis} is out of range for a tensor of rank {ndim}")
    return axis % ndim if ndim else 0


def ravel_index(indices, shape):
    """The row-major linear index of ``indices`` in ``shape``."""
    idx = None
    for i, (x, d) in enumerate(zip(indices, shape, strict=True)):
        idx = x if i == 0 else idx * d + x
    return idx if idx is not None else _op.const(0, "int32")


def unravel_index(idx, shape) -> list:
    """The row-major indices in ``shape`` of the linear index ``idx``."""
    out = []
    for d in reversed(shape):
        out.append(idx % d if d != 1 else _op.const(0, idx.dtype))
        idx = idx // d if d != 1 else idx
    return list(reversed(out))


def largest_divisor(n: int, limit: int) -> int:
    """The largest divisor of ``n`` that is at most ``limit`` (at least 1)."""
    for f in range(min(n, limit), 0, -1):
        if n % f == 0:
            return f
    return 1


def traverse_inline(s, final_ops, callback=None):
    """Walk back from ``final_ops`` (an operation, or a list of operations or tensors) inlining every injective
    compute stage that is not an output of ``s``, calling ``callback(op)`` on every operation reached (TVM's
    ``traverse_inline``). The walk continues through injective operations only: an anchor (conv2d, dense ...) is
    reached and handed to the callback, which schedules it and its own inputs.
    """
    if not isinstance(final_ops, list | tuple):
        final_ops = [final_ops]
    stack = [op.op if hasattr(op, "value_index") else op for op in final_ops]
    visited = set()
    order = []
    outputs = {id(op) for op in s.outputs}
    while stack:
        op = stack.pop()
        if id(op) in visited:
            continue
        visited.add(id(op))
        order.append(op)
        if isinstance(op, ComputeOp) and _tag.is_injective(op.tag):
            if id(op) not in outputs:
                s[op].compute_inline()
            for t in op.input_tensors:
                if isinstance(t.op, ComputeOp):
                    stack.append(t.op)
    if callback is not None:
        for op in order:
            callback(op)
    return order



def schedule_anchored(outs, tags, schedule_op):
    """The schedule of a fused group whose anchor stage carries one of ``tags``: injective stages are inlined
    (:func:`traverse_inline`) and ``schedule_op(s, op)`` schedules each anchor reached.

    Returns
    -------
    s : Schedule
    """
    s = create_schedule_for(outs)

    def callback(op):
        if op.tag in tags:
            schedule_op(s, op)

    traverse_inline(s, output_ops(outs), callback)
    return s

def create_schedule_for(outs):
    """``te.create_schedule`` over the distinct operations of ``outs`` (tensors; one op may give several)."""
    return create_schedule(output_ops(outs))


def output_ops(outs) -> list:
    """The distinct operations of ``outs``, in order."""
    ops, seen = [], set()
    for t in outs if isinstance(outs, list | tuple) else [outs]:
        op = t.op if hasattr(t, "value_index") else t
        if id(op) not in seen:
            seen.add(id(op))
            ops.append(op)
    return ops


def reads_through_inline(s, consumer, producer) -> bool:
    """Whether the loop nest of ``consumer`` reads ``producer`` (directly or through inlined stages)."""
    stack, seen = list(consumer.input_tensors), set()
    while stack:
        op = stack.pop().op
        if op is producer:
            return True
        if id(op) in seen:
            continue
        seen.add(id(op))
        stage = s.stage_map.get(op)
        if stage is not None and stage.attach_type == "inline":
            stack.extend(op.input_tensors)
    return False


def fused_output(s, op, outs, fits=None):
    """The output whose loop nest should compute ``op`` tile by tile (an anchor's ``compute_at`` parent).

    ``op`` itself when it is an output; else the single output that reads it (through inlined stages), when
    ``fits(output_tensor)`` accepts it (a shape the anchor can tile alike); None when ``op`` must be computed whole
    at the top level first (several outputs read it, or the reader reshapes it).
    """
    ops = output_ops(outs)
    if any(o is op for o in ops):
        return op.output(0)
    readers = [o for o in ops if reads_through_inline(s, o, op)]
    if len(readers) != 1:
        return None
    out = readers[0].output(0)
    return out if fits is None or fits(out) else None


def auto_inline_injective(s):
    """Inline every compute stage without a reduction that is not an output (TVM's ``AutoInlineInjective``)."""
    outputs = {id(op) for op in s.outputs}
    for stage in s.stages:
        op = stage.op
        if isinstance(op, ComputeOp) and not op.reduce_axis and id(op) not in outputs:
            if stage.attach_type == "root":
                stage.compute_inline()


def vector_lanes(target, dtype="float32") -> int:
    """Lanes of ``dtype`` in one vector register of ``target`` (16 float32 lanes with AVX-512, 8 with AVX2)."""
    return resolve_target(target).vector_lanes(dtype)


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for positive ints."""
    return -(-a // b)


def num_elements(shape) -> int:
    """The number of elements of a constant shape."""
    return math.prod(get_const_int(d) for d in shape)


def const_matrix(matrix, name="const_matrix"):
    """A 2-D compute holding the values of the numpy array ``matrix`` (TVM's ``topi.utils.const_matrix``): element
    ``(i, j)`` selects its constant by comparing the indices, so a schedule may inline it (``tag`` ``injective``)
    and code generators fold it where the indices are known.

    Parameters
    ----------
    matrix : numpy.ndarray
        2-D, of the tensor's dtype.
    name : str

    Returns
    -------
    tensor : te.Tensor
    """
    from ..te.operation import compute

    rows, cols = matrix.shape
    dtype = str(matrix.dtype)

    def element(i, j):
        value = _op.const(matrix[rows - 1, cols - 1].item(), dtype)
        for r in range(rows - 1, -1, -1):
            for c in range(cols - 1, -1, -1):
                if (r, c) != (rows - 1, cols - 1):
                    value = _op.select(_op.all(E.EQ(i, _op.const(r)), E.EQ(j, _op.const(c))),
                                       _op.const(matrix[r, c].item(), dtype), value)
        return value

    return compute((rows, cols), element, name=name, tag=_tag.INJECTIVE, attrs={"const_matrix": True})


def nchw_pack_layout(layout: str) -> bool:
    """Whether ``layout`` is NCHW with packed batch and channel blocks (``NCHW1n16c``: ``NCHWinic``)."""
    return layout[:4] == "NCHW" and "c" in layout and "n" in layout


def nchw_xc_layout(layout: str) -> bool:
    """Whether ``layout`` is NCHW with a packed channel block only (``NCHW8c``: ``NCHWxc``)."""
    return layout[:4] == "NCHW" and "c" in layout and layout[4:-1].isnumeric()
