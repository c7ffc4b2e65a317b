"""Tensors computed by a statement of your own (TVM's ``te.extern`` and ``te.extern_primfunc``).

``te.extern(shape, inputs, fcompute)`` declares one buffer per input and per output and calls ``fcompute(ins,
outs)`` with them once; the statement it returns (typically a ``tir.call_packed`` of a library function, to which
a Buffer argument is passed as a DLTensor) becomes the body of an :class:`~kiln.te.tensor.ExternOp`.
``te.extern_primfunc(inputs, func)`` makes a PrimFunc's body such a statement: the buffers it reads are its inputs,
the buffers it only writes its outputs (a buffer both read and written is updated in place and is an output only
when nothing else is written).
"""

from numbers import Integral

from ..error import NestedScopeError, TIRError
from ..tir import expr as E
from ..tir import stmt as S
from ..tir.buffer import Buffer, decl_buffer
from ..tir.stmt_block import BlockRealize
from ..tir.stmt_functor import post_order_visit
from .tag import TagScope
from .tensor import ExternOp, Tensor

__all__ = ["extern", "extern_primfunc"]


def _shapes(shape) -> list:
    """One shape per output: a single shape (a tuple of sizes, or a size) becomes a list of one."""
    if isinstance(shape, E.PrimExpr | Integral):
        shape = (shape,)
    shape = list(shape)
    if not shape or isinstance(shape[0], E.PrimExpr | Integral):
        return [tuple(shape)]
    return [tuple(s) if isinstance(s, list | tuple) else (s,) for s in shape]


def _as_list(value, what, count, name):
    values = list(value) if isinstance(value, list | tuple) else [value]
    if len(values) != count:
        raise TIRError(f"te.extern {name}: {count} {what.split()[0]} but {len(values)} {what.split()[1]}")
    for b in values:
        if not isinstance(b, Buffer):
            raise TIRError(f"te.extern {name}: {what.split()[1]} must be tir.Buffers, got {type(b).__name__}")
    return values


def extern(shape, inputs, fcompute, name="extern", dtype=None, in_buffers=None, out_buffers=None, tag="",
           attrs=None):
    """Tensors computed by the statement ``fcompute(ins, outs)`` builds over buffers (TVM's ``te.extern``).

    Parameters
    ----------
    shape : tuple or list of tuples
        The shape of the output, or of each output.
    inputs : list of Tensor
        The tensors the statement reads.
    fcompute : callable
        ``(ins, outs) -> Stmt or PrimExpr``: ``ins`` and ``outs`` are lists of ``tir.Buffer``.
    name : str
        The operation's name.
    dtype : str or list of str, optional
        The outputs' dtypes (default: the inputs' dtype, which must then be unique).
    in_buffers, out_buffers : Buffer or list of Buffer, optional
        The buffers to use instead of new ones.
    tag : str
        A tag for schedules.
    attrs : dict, optional
        Extra attributes.

    Returns
    -------
    tensor : Tensor or list of Tensor

    Examples
    --------
    >>> C = te.extern((n, m), [A, B], lambda ins, outs: tir.call_packed(
    ...     "tvm.contrib.cblas.matmul", ins[0], ins[1], outs[0], 0, 0), name="C")   # doctest: +SKIP
    """
    scope = TagScope.get_current()
    if scope is not None:
        if tag:
            raise NestedScopeError(f"te.extern {name}: tag {tag!r} given inside te.tag_scope({scope.tag!r})")
        tag = scope.tag
    shapes = _shapes(shape)
    inputs = list(inputs)
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TIRError(f"te.extern {name}: an input must be a te.Tensor, got {type(t).__name__}")
    if in_buffers is not None:
        ins = _as_list(in_buffers, "inputs in_buffers", len(inputs), name)
    else:
        ins = [decl_buffer(t.shape, t.dtype, t.op.name, elem_offset=E.Var("elem_offset", "int32")) for t in inputs]
    if out_buffers is not None:
        outs = _as_list(out_buffers, "outputs out_buffers", len(shapes), name)
    else:
        if dtype is None:
            types = {t.dtype for t in inputs}
            if len(types) != 1:
                raise TIRError(f"te.extern {name}: cannot infer the output dtype from inputs of dtypes "
                               f"{sorted(types)}; give dtype")
            dtype = types.pop()
        dtypes = [dtype] * len(shapes) if isinstance(dtype, str) else list(dtype)
        if len(dtypes) != len(shapes):
            raise TIRError(f"te.extern {name}: {len(shapes)} outputs but {len(dtypes)} dtypes")
        outs = [decl_buffer(shp, dt, name, elem_offset=E.Var("elem_offset", "int32"))
                for shp, dt in zip(shapes, dtypes, strict=True)]
    body = fcompute(ins, outs)
    if isinstance(body, E.PrimExpr):
        body = S.Evaluate(body)
    if not isinstance(body, S.Stmt):
        fname = getattr(fcompute, "__name__", "fcompute")
        raise TIRError(f"te.extern {name}: {fname} must return a PrimExpr or Stmt, got {type(body).__name__}")
    op = ExternOp(name, tag, attrs, tuple(inputs), tuple(ins), tuple(outs), body)
    res = [op.output(i) for i in range(op.num_outputs)]
    return res[0] if len(res) == 1 else res


def touched_buffers(stmt) -> tuple:
    """The buffers ``stmt`` reads and the ones it writes, each a list in order of first access (TVM's
    ``DomainTouchedAccessMap``, without the regions)."""
    reads: dict = {}
    writes: dict = {}

    def visit(node):
        if isinstance(node, E.BufferLoad):
            reads.setdefault(node.buffer, None)
        elif isinstance(node, S.BufferStore):
            writes.setdefault(node.buffer, None)
        elif isinstance(node, BlockRealize):
            for r in node.block.reads:
                reads.setdefault(r.buffer, None)
            for r in node.block.writes:
                writes.setdefault(r.buffer, None)

    post_order_visit(stmt, visit)
    return list(reads), list(writes)


def extern_primfunc(input_tensors, primfunc, **kwargs):
    """The tensors a PrimFunc computes from ``input_tensors``, its body inlined as an extern statement (TVM's
    ``te.extern_primfunc``).

    Parameters
    ----------
    input_tensors : list of Tensor
        One tensor per input buffer of ``primfunc``, in the order of its parameters.
    primfunc : tir.PrimFunc
        The function; the buffers of its parameters are the extern's buffers.
    kwargs
        Passed to :func:`extern` (``name``, ``tag``, ``attrs``).

    Returns
    -------
    tensor : Tensor or list of Tensor
    """
    reads, writes = touched_buffers(primfunc.body)
    ordered = [primfunc.buffer_map[p] for p in primfunc.params if p in primfunc.buffer_map]
    in_buffers = [b for b in ordered if b in reads]
    out_buffers = [b for b in ordered if b in writes]
    if not in_buffers or not out_buffers:
        raise TIRError("te.extern_primfunc: the PrimFunc must read an input buffer and write an output buffer")
    outputs = [b for b in out_buffers if b not in in_buffers]
    inplace = [b for b in out_buffers if b in in_buffers]
    if not outputs:
        iobuf = inplace.pop()
        in_buffers.remove(iobuf)
        outputs = [iobuf]
    input_tensors = list(input_tensors)
    if len(input_tensors) != len(in_buffers):
        raise TIRError(f"te.extern_primfunc: {len(input_tensors)} input tensors for {len(in_buffers)} input buffers "
                       f"({', '.join(b.name for b in in_buffers)})")
    for t, b in zip(input_tensors, in_buffers, strict=True):
        same = len(t.shape) == len(b.shape) and all(
            isinstance(x, E.IntImm) and isinstance(y, E.IntImm) and x.value == y.value or x is y
            for x, y in zip(t.shape, b.shape, strict=True))
        if not same:
            raise TIRError(f"te.extern_primfunc: tensor {t.name} of shape {list(t.shape)} does not match buffer "
                           f"{b.name} of shape {list(b.shape)}; give the tensors in the order of the parameters")
    return extern([b.shape for b in outputs], input_tensors, lambda ins, outs: primfunc.body,
                  in_buffers=in_buffers, out_buffers=outputs, **kwargs)
