"""Builders of tensor expressions (TVM's ``te.placeholder``, ``te.compute``, ``te.reduce_axis``, ``te.var``,
``te.comm_reducer``).

``compute(shape, fcompute)`` names one index variable per dimension after ``fcompute``'s parameters (``lambda i, j``
gives axes ``i`` and ``j``; a ``*args`` function gets ``i0, i1, ...``), calls it once with those variables and keeps
the returned expression(s) as the operation's body. A reduction (``te.sum(A[i, k], axis=k)``) must be a whole output
expression; use one stage per reduction.
"""

import inspect
from numbers import Integral

from ..error import NestedScopeError, TIRError
from ..tir import dtype as _dt
from ..tir import expr as E
from ..tir import op as _op
from ..tir.expr_reduce import CommReducer, IterVar, IterVarType, Range, Reduce
from .tag import TagScope
from .tensor import ComputeOp, PlaceholderOp, Tensor
from .tensor_compute import TensorIntrinCall, make_tensor_compute

__all__ = ["placeholder", "compute", "reduce_axis", "var", "size_var", "comm_reducer", "sum", "max", "min"]


def _shape(shape) -> tuple:
    if isinstance(shape, E.PrimExpr | int):
        shape = (shape,)
    out = []
    for s in shape:
        s = E.convert(_index(s))  # numpy int64 sizes (common in frontends) index with int32, as Python ints do
        if not _dt.is_integer(s.dtype) or _dt.lanes(s.dtype) != 1:
            raise TIRError(f"te: a shape entry must be a scalar integer, got {s} ({s.dtype})")
        out.append(s)
    return tuple(out)


def _index(value):
    """A Python or numpy integer that fits as a Python int (so it becomes an int32 constant); else unchanged."""
    return int(value) if isinstance(value, Integral) and -(2**31) <= int(value) < 2**31 else value


def placeholder(shape, dtype=None, name="placeholder") -> Tensor:
    """An input tensor (TVM's ``te.placeholder``).

    Parameters
    ----------
    shape : tuple of int or PrimExpr
        The shape; a ``te.var`` entry makes the size symbolic.
    dtype : str, optional
        The element type (default ``"float32"``).
    name : str
        The name (of its buffer after lowering).

    Returns
    -------
    tensor : Tensor

    Examples
    --------
    >>> n = te.var("n")
    >>> A = te.placeholder((n, 4), name="A")
    >>> A.shape[1], A.dtype
    (4, 'float32')
    """
    return PlaceholderOp(name, "", None, _shape(shape), dtype or "float32").output(0)


def _arg_names(fcompute, ndim):
    try:
        spec = inspect.getfullargspec(fcompute)
    except TypeError:
        return [f"i{k}" for k in range(ndim)]
    names = list(spec.args)
    if spec.varargs is not None:
        names += [f"i{k}" for k in range(len(names), ndim)]
    if len(names) > ndim:
        raise TIRError(f"te.compute: fcompute takes {len(names)} index arguments but the shape has {ndim} dimensions")
    return names  # fewer: a tensor intrinsic call computes the remaining dimensions (checked by the caller)


def compute(shape, fcompute, name="compute", tag="", attrs=None) -> Tensor:
    """A tensor whose elements ``fcompute`` gives from their indices (TVM's ``te.compute``).

    Parameters
    ----------
    shape : tuple of int or PrimExpr
        The output shape.
    fcompute : callable
        ``(i0, i1, ...) -> expr`` (or a list of exprs for several outputs of one shape).
    name : str
        The name of the operation (and of its output buffer).
    tag : str
        A free-form tag (``"elemwise"``, ``"conv2d_nchw"`` ...) read by schedules.
    attrs : dict, optional
        Extra attributes.

    Returns
    -------
    tensor : Tensor or list of Tensor
        The output, or the outputs when ``fcompute`` returns several expressions.

    Examples
    --------
    >>> A = te.placeholder((8,), name="A")
    >>> B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    >>> B.op.axis[0].dom.extent
    8
    """
    scope = TagScope.get_current()
    if scope is not None:
        if tag:
            raise NestedScopeError(f"te.compute {name}: tag {tag!r} given inside te.tag_scope({scope.tag!r})")
        tag = scope.tag
    shape = _shape(shape)
    names = _arg_names(fcompute, len(shape))
    axis = tuple(IterVar(Range(E.IntImm(s.dtype, 0), s), E.Var(n, s.dtype), IterVarType.DataPar)
                 for n, s in zip(names, shape[:len(names)], strict=True))
    body = fcompute(*[iv.var for iv in axis])
    if isinstance(body, TensorIntrinCall):
        return make_tensor_compute(name, tag, attrs, shape, axis, body)
    if len(axis) != len(shape):
        raise TIRError(f"te.compute: fcompute takes {len(axis)} index arguments but the shape has {len(shape)} "
                       "dimensions")
    if isinstance(body, Tensor):
        raise TIRError(f"te.compute {name}: fcompute returned a tensor; index it (A[i, j]) to read an element")
    body = tuple(body) if isinstance(body, list | tuple) else (body,)
    op = ComputeOp(name, tag, attrs, axis, body)
    return op.output(0) if op.num_outputs == 1 else [op.output(i) for i in range(op.num_outputs)]


def thread_axis(dom=None, tag="", name="", span=None) -> IterVar:
    """A thread index axis to ``bind`` loops to (TVM's ``te.thread_axis``): ``te.thread_axis("threadIdx.x")``.

    Parameters
    ----------
    dom : Range, (begin, end), str or None
        The domain (None: the extent of the loop bound to it); a string is the tag.
    tag : str
        The thread tag (``blockIdx.x``, ``threadIdx.y``, ``vthread``, ``pipeline``).
    name : str
        The variable's name (default: the tag).
    """
    if isinstance(dom, str):
        tag, dom = dom, None
    if not tag:
        raise TIRError("te.thread_axis: a thread tag (such as 'threadIdx.x') is required")
    if isinstance(dom, tuple | list):
        dom = Range.from_min_extent(E.convert(dom[0]), _op.subtract(E.convert(dom[1]), E.convert(dom[0])))
    return IterVar(dom, E.Var(name or tag, "int32"), IterVarType.ThreadIndex, tag, span=span)


def reduce_axis(dom, name="rv", thread_tag="", span=None) -> IterVar:
    """A reduction axis over ``dom`` (a ``(begin, end)`` pair or a Range) (TVM's ``te.reduce_axis``).

    Examples
    --------
    >>> k = te.reduce_axis((0, 16), name="k")
    >>> k.dom.extent
    16
    """
    if isinstance(dom, tuple | list):
        if len(dom) != 2:
            raise TIRError(f"te.reduce_axis {name}: dom must be (begin, end), got {dom!r}")
        dom = Range(*(_index(d) for d in dom))
    elif not isinstance(dom, Range):
        dom = Range(0, _index(dom))
    return IterVar(dom, E.Var(name, dom.extent.dtype), IterVarType.CommReduce, thread_tag, span=span)


def var(name="tindex", dtype="int32", span=None) -> E.Var:
    """A symbolic scalar (a size or a parameter): ``n = te.var("n")``."""
    return E.Var(name, dtype, span=span)


def size_var(name="size", dtype="int32", span=None) -> E.SizeVar:
    """A symbolic size, known to be non-negative."""
    return E.SizeVar(name, dtype, span=span)


def comm_reducer(fcombine, fidentity, name="reduce"):
    """Build a commutative reducer (TVM's ``te.comm_reducer``), over one value or a tuple of values.

    Parameters
    ----------
    fcombine : callable
        ``(x, y) -> value``; for a tuple reducer ``x`` and ``y`` are tuples and the result is a tuple.
    fidentity : callable
        ``(*dtypes) -> value`` (or tuple): the identity element(s).
    name : str
        The reducer's name.

    Returns
    -------
    reducer : callable
        ``reducer(expr, axis, where=None, init=None)`` gives a Reduce (a list of them for a tuple ``expr``);
        ``reducer(a, b)`` combines two values directly.

    Examples
    --------
    >>> argmax = te.comm_reducer(lambda x, y: (tir.Select(x[1] >= y[1], x[0], y[0]),
    ...                                       tir.Select(x[1] >= y[1], x[1], y[1])),
    ...                          lambda t0, t1: (tir.const(-1, t0), tir.min_value(t1)), name="argmax")
    """

    def make_reduce(expr, axis, where, init):
        single = not isinstance(expr, list | tuple)
        exprs = (E.convert(expr),) if single else tuple(E.convert(e) for e in expr)
        dtypes = [e.dtype for e in exprs]
        if single:
            lhs, rhs = (E.Var("x", dtypes[0]),), (E.Var("y", dtypes[0]),)
            result = (E.convert(fcombine(lhs[0], rhs[0])),)
            identity = (fidentity(dtypes[0]),)
        else:
            lhs = tuple(E.Var(f"x_{k}", t) for k, t in enumerate(dtypes))
            rhs = tuple(E.Var(f"y_{k}", t) for k, t in enumerate(dtypes))
            result = tuple(E.convert(r) for r in fcombine(lhs, rhs))
            identity = tuple(fidentity(*dtypes))
        if len(result) != len(exprs) or len(identity) != len(exprs):
            raise TIRError(f"te.comm_reducer {name}: fcombine and fidentity must give {len(exprs)} values")
        ident = tuple(E.convert(v, t) for v, t in zip(identity, dtypes, strict=True))
        combiner = CommReducer(lhs, rhs, result, ident)
        axes = (axis,) if isinstance(axis, IterVar) else tuple(axis)
        for a in axes:
            if not isinstance(a, IterVar) or a.iter_type != IterVarType.CommReduce:
                raise TIRError(f"te.{name}: axis must be reduction axes made by te.reduce_axis, got {a!r}")
        init_values = () if init is None else tuple(init) if isinstance(init, list | tuple) else (init,)
        if init_values and len(init_values) != len(exprs):
            raise TIRError(f"te.{name}: init must give {len(exprs)} values, got {len(init_values)}")
        inits = tuple(E.convert(v, t) for v, t in zip(init_values, dtypes, strict=True)) if init_values else ()
        reduces = [Reduce(combiner, exprs, axes, where, k, inits) for k in range(len(exprs))]
        return reduces[0] if single else reduces

    def reducer(expr, axis=None, where=None, init=None, *args):
        if isinstance(axis, IterVar | list | tuple):
            return make_reduce(expr, axis, where, init)
        if axis is None:
            raise TIRError(f"te.{name}: needs reduction axes (made by te.reduce_axis)")
        values = [expr, axis] + ([where] if where is not None else []) + list(args)
        result = values[0]
        for v in values[1:]:
            result = fcombine(result, v)
        return result

    reducer.__name__ = name
    reducer.__doc__ = f"The ``{name}`` reducer: ``{name}(expr, axis, where=None, init=None)`` or ``{name}(a, b)``."
    return reducer



sum = comm_reducer(_op.add, lambda t: _op.const(0, t), name="sum")  # noqa: A001  (TVM's names)
min = comm_reducer(_op.minimum, _op.max_value, name="min")  # noqa: A001
max = comm_reducer(_op.maximum, _op.min_value, name="max")  # noqa: A001
