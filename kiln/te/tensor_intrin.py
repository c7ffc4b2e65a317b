"""Tensor intrinsics (TVM's ``te.decl_tensor_intrin`` and ``Stage.tensorize``): a hand-written statement that
computes a whole sub-tensor, replacing the loops that would compute it.

``decl_tensor_intrin(op, fcompute)`` declares what the intrinsic computes (the compute ``op``, e.g. a 16-element
vector add) and how: ``fcompute(ins, outs)`` gets one buffer per input and output of ``op`` and returns the
statement (or ``(body, reset, update)`` for a reduction: the whole reduction, the zeroing of the output, and one
accumulation step). ``s[C].tensorize(axis, intrin)`` then computes the loops of ``C`` from ``axis`` inward with the
intrinsic: when lowering, each intrinsic buffer is bound to the region of the real tensor those loops access (its
data, its offset ``elem_offset`` into the real buffer, its strides and shape), see :func:`bind_intrinsic`.
"""

from dataclasses import dataclass

from ..arith import Analyzer, eval_set
from ..error import TIRError
from ..tir import expr as E
from ..tir import op as _op
from ..tir import stmt as S
from ..tir.buffer import decl_buffer
from ..tir.stmt_functor import rebind_buffers
from .tensor import ComputeOp

__all__ = ["TensorIntrin", "decl_tensor_intrin", "bind_intrinsic", "tensor_region"]


@dataclass(eq=False)
class TensorIntrin:
    """A tensor intrinsic: ``op`` (what it computes), ``buffers`` (one per input, then per output, of ``op``),
    ``body``, ``reduce_init``, ``reduce_update`` (statements over the buffers) and ``scalar_params``."""

    name: str
    op: ComputeOp
    inputs: tuple
    buffers: tuple
    scalar_params: tuple
    body: S.Stmt | None
    reduce_init: S.Stmt | None
    reduce_update: S.Stmt | None

    def __call__(self, *args, reduce_axis=()):
        """The intrinsic applied to tensor slices and scalars, for ``te.compute`` (see :mod:`.tensor_compute`)."""
        from .tensor_compute import intrin_call

        return intrin_call(self, *args, reduce_axis=reduce_axis)


def _stmt(value, name):
    if value is None or isinstance(value, S.Stmt):
        return value
    if isinstance(value, E.PrimExpr):
        return S.Evaluate(value)
    raise TIRError(f"te.decl_tensor_intrin {name}: fcompute must return statements or expressions, got "
                   f"{type(value).__name__}")


def decl_tensor_intrin(op, fcompute, name="tensor_intrin", binds=None, scalar_params=None,
                       default_buffer_params=None):
    """Declare a tensor intrinsic computing ``op`` (see the module docstring).

    Parameters
    ----------
    op : Operation
        A compute operation: what the intrinsic computes, over its own placeholders.
    fcompute : callable
        ``(ins, outs) -> Stmt`` or ``(body, reset, update)``; with ``scalar_params``, ``(ins, outs, params)``.
    name : str
        The intrinsic's name.
    binds : dict, optional
        Tensor -> Buffer for the intrinsic's tensors that need particular buffers (strides, offset factor).
    scalar_params : list of Var, optional
        Scalars the intrinsic takes.
    default_buffer_params : dict, optional
        ``decl_buffer`` arguments for the other buffers (``offset_factor``, ``data_alignment``...).

    Returns
    -------
    intrin : TensorIntrin
    """
    if not isinstance(op, ComputeOp):
        raise TIRError(f"te.decl_tensor_intrin {name}: op must be a compute operation, got {type(op).__name__}")
    binds = dict(binds or {})
    params = dict(default_buffer_params or {})
    inputs = tuple(op.input_tensors)
    outputs = tuple(op.output(k) for k in range(op.num_outputs))
    buffers = []
    for t in (*inputs, *outputs):
        buf = binds.get(t)
        if buf is None:
            if "offset_factor" in params and "elem_offset" not in params:
                params_t = {**params, "elem_offset": E.Var(f"{t.name}_elem_offset", "int32")}
            else:
                params_t = params
            buf = decl_buffer(t.shape, t.dtype, t.op.name, **params_t)
        buffers.append(buf)
    ins, outs = buffers[:len(inputs)], buffers[len(inputs):]
    scalars = tuple(scalar_params or ())
    result = fcompute(ins, outs, list(scalars)) if scalars else fcompute(ins, outs)
    if isinstance(result, tuple | list):
        if len(result) != 3:
            raise TIRError(f"te.decl_tensor_intrin {name}: fcompute returned {len(result)} statements; give one or "
                           "(body, reset, update)")
        body, init, update = (_stmt(r, name) for r in result)
    else:
        body, init, update = _stmt(result, name), None, None
    return TensorIntrin(name, op, inputs, tuple(buffers), scalars, body, init, update)


def _bind_one(ibuf, real, mins, region, var_map, buffer_map, ana, where):
    """Bind the intrinsic buffer ``ibuf`` to ``region`` (Ranges, one per dimension of the real tensor) of the buffer
    ``real``, whose first element is the tensor's index ``mins`` (None: 0)."""
    strides = list(real.strides) if real.strides else list(real.default_strides())
    offset = real.elem_offset
    for d, rng in enumerate(region):
        start = rng.min if mins is None else _op.subtract(rng.min, mins[d])
        offset = _op.add(offset, _op.multiply(start, strides[d]))
    offset = ana.simplify(offset)
    # the intrinsic's dimensions are the region's last ones; leading dimensions of the region must be of extent 1
    lead = len(region) - len(ibuf.shape)
    if lead < 0 or not all(ana.can_prove(_op.equal(r.extent, 1)) for r in region[:lead]):
        raise TIRError(f"{where}: the intrinsic's buffer {ibuf.name} has {len(ibuf.shape)} dimensions but the region "
                       f"of {real.name} it computes is {[str(r.extent) for r in region]}")
    for size, rng in zip(ibuf.shape, region[lead:], strict=True):
        if isinstance(size, E.Var):
            var_map[size] = rng.extent
        elif not ana.can_prove(_op.equal(size, rng.extent)):
            raise TIRError(f"{where}: buffer {ibuf.name} of the intrinsic has extent {size} where the region of "
                           f"{real.name} has {rng.extent}")
    kept = strides[lead:]
    if ibuf.strides:
        for s, actual in zip(ibuf.strides, kept, strict=True):
            if isinstance(s, E.Var):
                var_map[s] = actual
    elif not all(ana.can_prove(_op.equal(a, b)) for a, b in zip(kept, _compact(region[lead:]), strict=True)):
        raise TIRError(f"{where}: buffer {ibuf.name} of the intrinsic is compact but the region of {real.name} is not")
    if isinstance(ibuf.elem_offset, E.Var):
        var_map[ibuf.elem_offset] = offset
    elif not ana.can_prove(_op.equal(ibuf.elem_offset, offset)):
        raise TIRError(f"{where}: buffer {ibuf.name} of the intrinsic starts at offset {ibuf.elem_offset} but the "
                       f"region of {real.name} starts at {offset}; declare it with offset_factor")
    var_map[ibuf.data] = real.data
    buffer_map[ibuf] = ibuf.with_fields(data=real.data, shape=tuple(r.extent for r in region[lead:]),
                                        strides=tuple(kept), elem_offset=offset)


def _compact(region):
    out, acc = [], E.IntImm("int32", 1)
    for r in reversed(region):
        out.append(acc)
        acc = _op.multiply(acc, r.extent)
    return list(reversed(out))


def bind_intrinsic(intrin, stmt, regions, where, scalars=None):
    """``stmt`` (one of the intrinsic's statements) over real buffers: ``regions`` gives, per intrinsic buffer, the
    real ``(buffer, mins, [Range per dimension])``; ``scalars`` the values of its scalar parameters."""
    var_map, buffer_map = dict(scalars or {}), {}
    ana = Analyzer()
    for ibuf, (real, mins, region) in zip(intrin.buffers, regions, strict=True):
        _bind_one(ibuf, real, mins, region, var_map, buffer_map, ana, where)
    return rebind_buffers(stmt, var_map, buffer_map)


def tensor_region(index_exprs, relax, ana):
    """The Range each index covers while the variables of ``relax`` sweep their ranges."""
    out = []
    for e in index_exprs:
        s = eval_set(e, relax, ana)
        if not s.is_bounded():
            raise TIRError(f"tensorize: the index {e} is unbounded over the tensorized loops")
        out.append(E.Range.from_min_extent(ana.simplify(s.min_value),
                                           ana.simplify(_op.add(_op.subtract(s.max_value, s.min_value), 1))))
    return out
