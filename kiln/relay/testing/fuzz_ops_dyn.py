"""The ``dyn.*`` operators in the mixed-dtype fuzzer: shapes, sizes, counts and pads given as tensors, usually graph
inputs known only at run time, sometimes constants that ``DynamicToStatic`` folds. Only graphs built for the VM
(``control_flow``) get them, since the graph executor refuses ``?`` dimensions, and only on the outputs of the base
graph (as loops and branches are added), so a seed's base graph is the same with and without them.

The result of a dynamic operator is typed with ``?`` dimensions, but the generator knows the shape it will have at
run time: it reshapes the result to that static shape, so later operators see static types, and the VM checks the
run-time shape against it."""

import numpy as np

from .. import op as _op
from ..expr import const, var
from ..op import dyn as _dyn
from .fuzz_graph import accepted
from .fuzz_values import dtype_range, kind, result


def _operand(gen, array):
    """``array`` as a graph input, known only at run time, or (a quarter of the time) a constant."""
    if gen.chance(0.25):
        return const(array)
    name = f"v{len(gen.variables)}"
    tensor = var(name, shape=array.shape, dtype=str(array.dtype))
    gen.variables.append(tensor)
    gen.inputs[name] = array
    return tensor


def _shape_tensor(gen, values, dtype=None):
    """``values`` as an integer operand (1-D for a list, else a scalar)."""
    return _operand(gen, np.array(values, dtype or gen.choice(["int64", "int32"])))


def _static(v, call, shape, lo=None, hi=None):
    """The result of the dynamic ``call``, reshaped to the ``shape`` it has at run time; it holds elements of ``v``
    (and perhaps values in ``[lo, hi]``)."""
    low = v.lo if lo is None else min(lo, v.lo)
    high = v.hi if hi is None else max(hi, v.hi)
    return result(v.dtype, tuple(shape), _op.reshape(call, tuple(shape)), low, high, v.nan, v.exact, v.grid)


def _new_shape(gen, shape):
    """Another shape of as many elements as ``shape`` (its dimensions' prime factors regrouped), perhaps with a -1."""
    factors = [p for d in shape for p in _prime_factors(d)]
    gen.rng.shuffle(factors)
    rank = gen.integer(1, 4)
    dims = [1] * rank
    for p in factors:
        dims[gen.integer(0, rank - 1)] *= p
    return dims


def _prime_factors(n):
    factors, p = [], 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors


DYNAMIC_OPS = ("dyn.reshape", "dyn.broadcast_to", "dyn.tile", "dyn.strided_slice", "dyn.full", "dyn.nn.pad",
               "dyn.one_hot", "dyn.topk", "dyn.nn.upsampling")


def dynamic_shapes(gen, v):
    """``v`` through one of :data:`DYNAMIC_OPS` (dyn.zeros/ones/full make a tensor of ``v``'s shape and dtype,
    stacked with ``v``) with its shape operands as tensors; None when the operator does not apply to ``v``."""
    name = gen.choice(DYNAMIC_OPS)
    if name not in accepted_names(v.dtype):
        return None
    shape, rank = v.shape, len(v.shape)
    if name == "dyn.full":
        made = gen.choice(["zeros", "ones", "full"])
        low, high = dtype_range(v.dtype)
        fill = {"zeros": 0, "ones": 1}.get(made, gen.integer(int(max(-3, low)), int(min(3, high))))
        tensor = _shape_tensor(gen, list(shape))
        if made == "full":
            call = _dyn.full(const(np.array(fill, v.dtype)), tensor, v.dtype)
        else:
            call = (_dyn.zeros if made == "zeros" else _dyn.ones)(tensor, v.dtype)
        stacked = _op.stack([v.expr, _op.reshape(call, shape)], 0)
        return result(v.dtype, (2, *shape), stacked, min(v.lo, fill), max(v.hi, fill), v.nan, v.exact, v.grid)
    if name == "dyn.reshape":
        dims = _new_shape(gen, shape)
        given = list(dims)
        if gen.chance(0.3):
            given[gen.integer(0, len(given) - 1)] = -1
        return _static(v, _dyn.reshape(v.expr, _shape_tensor(gen, given)), dims)
    if name == "dyn.broadcast_to":
        dims = [gen.integer(1, 3) if d == 1 else d for d in shape]
        dims = [gen.integer(1, 3) for _ in range(gen.integer(0, max(0, 3 - rank)))] + dims
        return _static(v, _dyn.broadcast_to(v.expr, _shape_tensor(gen, dims)), dims)
    if name == "dyn.tile":
        reps = [gen.integer(1, 2) for _ in range(gen.integer(max(rank, 1), max(rank, 1) + 1))]
        padded = (1,) * (len(reps) - rank) + shape
        dims = [d * r for d, r in zip(padded, reps, strict=True)]
        return _static(v, _dyn.tile(v.expr, _shape_tensor(gen, reps)), dims)
    if not shape:
        return None
    if name == "dyn.strided_slice":
        axes = gen.integer(1, rank)
        begin = [gen.integer(0, d - 1) for d in shape[:axes]]
        end = [gen.integer(b + 1, d) for b, d in zip(begin, shape, strict=False)]
        strides = [gen.integer(1, 2) for _ in range(axes)]
        dims = [len(range(b, e, s)) for b, e, s in zip(begin, end, strides, strict=True)] + list(shape[axes:])
        dtype = gen.choice(["int64", "int32"])
        call = _dyn.strided_slice(v.expr, *(_shape_tensor(gen, x, dtype) for x in (begin, end, strides)))
        return _static(v, call, dims)
    if name == "dyn.nn.pad":
        pads = [[gen.integer(0, 2), gen.integer(0, 2)] for _ in shape]
        low, high = dtype_range(v.dtype)
        fill = gen.integer(int(max(-3, low)), int(min(3, high)))
        call = _dyn.nn.pad(v.expr, _shape_tensor(gen, pads), const(np.array(fill, v.dtype)))
        return _static(v, call, [d + a + b for d, (a, b) in zip(shape, pads, strict=True)], lo=fill, hi=fill)
    if name == "dyn.one_hot":  # v holds the indices
        depth, axis = gen.integer(1, 4), gen.integer(-1, rank)
        at = rank if axis == -1 else axis
        dims = (*shape[:at], depth, *shape[at:])
        dtype = gen.dtype(("float32", "int32", "int64", "int8", "uint8"))
        on, off = (1, 0) if gen.chance(0.5) else (gen.integer(0, 3), gen.integer(0, 3))
        call = _dyn.one_hot(v.expr, const(np.array(on, dtype)), const(np.array(off, dtype)),
                            _shape_tensor(gen, depth), axis, dtype)
        return result(dtype, dims, _op.reshape(call, dims), min(on, off), max(on, off))
    if name == "dyn.topk":
        if v.nan:
            return None
        axis = gen.integer(-rank, rank - 1)
        dims = list(shape)
        dims[axis] = gen.integer(1, shape[axis])
        call = _dyn.topk(v.expr, _shape_tensor(gen, dims[axis]), axis=axis, ret_type="values",
                         is_ascend=gen.chance(0.5))
        return _static(v, call, dims)
    v = gen.reshaped(v, 4)
    scales = [gen.integer(1, 3) for _ in range(2)]
    call = _dyn.nn.upsampling(v.expr, *(_operand(gen, np.array(s, "float32")) for s in scales))
    return _static(v, call, [v.shape[0], v.shape[1], v.shape[2] * scales[0], v.shape[3] * scales[1]])


def accepted_names(dtype):
    """The operators of :data:`DYNAMIC_OPS` that take a ``dtype`` tensor as their data (the indices of one_hot)."""
    names = {name for name in DYNAMIC_OPS if dtype in accepted(name)}
    if kind(dtype) != "f":
        names.discard("dyn.nn.upsampling")
    if kind(dtype) == "b":
        names.discard("dyn.topk")
    return names

