"""FlexibleShapeDispatch: one module that serves several sizes of one input axis (TVM's
``relay.transform.FlexibleShapeDispatch``), for the VM.

``@main`` is copied once per *bucket* size into ``@main_<size>``, its flexible inputs typed with that size on
``axis`` (so every kernel of the copy is compiled for static shapes), plus a fully dynamic copy ``@main_dynamic``.
The new ``@main`` takes the inputs with ``?`` on ``axis``, reads the size at run time and calls the copy of that
size, or the dynamic one when no bucket matches. With ``auto_pad`` an input smaller than a bucket (and larger than
the previous one) is padded up to it with ``pad_value`` and the result cut back to the input's size, so it runs
the static kernels too. ``affects_output=False`` says the result's shape does not follow the flexible axis
(a sequence length reduced away); by default it does (a batch).
"""

from dataclasses import dataclass

from ...error import KilnError
from ...ir.expr import GlobalVar, RelayExpr
from ...ir.transform import ModulePass, PassInfo, register_pass
from ...ir.type import Any, TensorType, TupleType
from .. import op as _op
from ..expr import Call, If, Var, bind, const
from ..function import Function
from .infer_type import infer_type


def override_shape(ttype, axis: int, dim):
    """``ttype`` (a tensor type or a tuple of them) with dimension ``axis`` set to ``dim``."""
    if isinstance(ttype, TupleType):
        return TupleType(tuple(override_shape(t, axis, dim) for t in ttype.fields))
    if not isinstance(ttype, TensorType):
        raise KilnError(f"FlexibleShapeDispatch: {ttype} is not a tensor type")
    shape = list(ttype.shape)
    shape[axis] = dim
    return TensorType(tuple(shape), ttype.dtype)


def _specialize(mod, main, axis, dim, indices, affects_output, name):
    """Add ``@name``: ``main`` with the flexible inputs' ``axis`` typed ``dim``; returns it and its input types."""
    params = list(main.params)
    binds = {}
    for i in indices:
        new = Var(params[i].name_hint, override_shape(params[i].checked_type, axis, dim))
        binds[params[i]] = new
        params[i] = new
    ret_type = main.checked_type.ret_type
    gv = GlobalVar(name)
    mod[gv] = Function(tuple(params), bind(main.body, binds), override_shape(ret_type, axis, dim) if affects_output
                       else ret_type, main.type_params, main.attrs)
    return gv, [params[i].type_annotation for i in indices]


def _pad_up_to(data, rank, size, current, axis, pad_value):
    """``data`` (of ``rank`` axes) padded after its end on ``axis`` from ``current`` (a run-time scalar) to
    ``size`` elements."""
    before = const([0] * (2 * axis + 1), "int32")
    after = const([0] * (2 * (rank - axis - 1)), "int32")
    amount = _op.reshape(_op.subtract(const(size, "int32"), current), (1,))
    widths = _op.reshape(_op.concatenate([before, amount, after], axis=0), (rank, 2))
    return _op.nn.pad(data, widths, pad_value)


def flexible_dispatch(mod, buckets, axis=0, auto_pad=False, pad_value=0, input_indices=None, affects_output=True):
    """``mod`` with ``@main`` dispatching on the run-time size of ``axis`` of its flexible inputs (see the module
    docstring); the inputs ``input_indices`` (default: the first) must share that axis."""
    mod = infer_type(mod).shallow_copy()
    main = mod["main"]
    indices = list(input_indices) if input_indices is not None else [0]
    if not buckets:
        raise KilnError("FlexibleShapeDispatch: give at least one bucket size")
    flex = [Var(main.params[i].name_hint, override_shape(main.params[i].checked_type, axis, Any())) for i in indices]
    size = _op.take(_op.shape_of(flex[0]), const(axis))
    branches = []
    for k, bucket in enumerate(buckets):
        inputs: list = list(flex)
        check = size
        if auto_pad:
            fits = _op.less_equal(size, const(bucket))
            if k > 0:
                fits = _op.logical_and(fits, _op.greater(size, const(buckets[k - 1])))
            inputs = [If(fits, _pad_up_to(v, len(main.params[i].checked_type.shape), bucket, size, axis, pad_value), v)
                      for v, i in zip(flex, indices, strict=True)]
            check = _op.take(_op.shape_of(inputs[0]), const(axis))
        gv, types = _specialize(mod, main, axis, bucket, indices, affects_output, f"main_{bucket}")
        args = list(main.params)
        for j, i in enumerate(indices):
            args[i] = _op.reshape(inputs[j], types[j].shape)
        call: RelayExpr = Call(gv, tuple(args))
        if auto_pad and affects_output:  # cut the padded rows back off
            call = _op.take(call, _op.arange(const(0), size, dtype="int32"), axis=axis)
        branches.append((_op.equal(check, const(bucket)), call))
    dynamic, _ = _specialize(mod, main, axis, Any(), indices, affects_output, "main_dynamic")
    args = list(main.params)
    for j, i in enumerate(indices):
        args[i] = flex[j]
    body: RelayExpr = Call(dynamic, tuple(args))
    for cond, call in branches:
        body = If(cond, call, body)
    params = list(main.params)
    for j, i in enumerate(indices):
        params[i] = flex[j]
    ret_type = main.checked_type.ret_type
    mod["main"] = Function(tuple(params), body, override_shape(ret_type, axis, Any()) if affects_output else ret_type,
                           main.type_params, main.attrs)
    return infer_type(mod)


@register_pass("FlexibleShapeDispatch")
@dataclass(frozen=True)
class FlexibleShapeDispatch(ModulePass):
    """Serve several sizes of one input axis from one module, each bucket size with static kernels (see the module
    docstring and :func:`flexible_dispatch`)."""

    buckets: tuple = ()
    axis: int = 0
    auto_pad: bool = False
    pad_value: float = 0.0
    input_indices: tuple | None = None
    affects_output: bool = True
    info = PassInfo(0, "FlexibleShapeDispatch")

    def transform_module(self, mod, ctx):
        return flexible_dispatch(mod, list(self.buckets), self.axis, self.auto_pad, self.pad_value,
                                 self.input_indices, self.affects_output)
