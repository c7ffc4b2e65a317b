"""Relay expressions: Var, Constant, Tuple, TupleGetItem, Call, Let, If, and the reference cells RefCreate, RefRead,
RefWrite (Function lives in function.py; Match and its patterns in adt.py).

All are graph nodes: frozen, slotted, compared by identity with ``==`` (use ``kiln.ir.structural_equal`` for
structure). Python's ``+ - * /`` on an expression build ``add``/``subtract``/``multiply``/``divide`` calls.
"""

from dataclasses import dataclass, field
from numbers import Number
from typing import Any

import numpy as np

from ..error import ArgumentTypeError, KilnError
from ..ir.attrs import Attrs
from ..ir.expr import GlobalVar, RelayExpr
from ..ir.node import DEF, IGNORE, OP_CALL_IGNORE, Node
from ..ir.op import Op
from ..ir.type import TensorType, TupleType, Type
from ..runtime.ndarray import NDArray
from ..runtime.ndarray import array as nd_array


class ExprWithOp:
    """Mixin giving expressions Python operators and call syntax."""

    __slots__ = ()

    def _binary(self, op_name, other, reverse=False):
        other = _as_operand(other, self)
        lhs, rhs = (other, self) if reverse else (self, other)
        return Call(Op.get(op_name), (lhs, rhs))

    def __add__(self, other):
        return self._binary("add", other)

    def __radd__(self, other):
        return self._binary("add", other, reverse=True)

    def __sub__(self, other):
        return self._binary("subtract", other)

    def __rsub__(self, other):
        return self._binary("subtract", other, reverse=True)

    def __mul__(self, other):
        return self._binary("multiply", other)

    def __rmul__(self, other):
        return self._binary("multiply", other, reverse=True)

    def __truediv__(self, other):
        return self._binary("divide", other)

    def __rtruediv__(self, other):
        return self._binary("divide", other, reverse=True)

    def __neg__(self):
        return Call(Op.get("negative"), (self,))

    # comparisons build Relay calls, as in TVM (``==`` stays identity: expressions are graph nodes)
    def __lt__(self, other):
        return self._binary("less", other)

    def __gt__(self, other):
        return self._binary("greater", other)

    def __le__(self, other):
        return self._binary("less_equal", other)

    def __ge__(self, other):
        return self._binary("greater_equal", other)

    def __call__(self, *args):
        return Call(self, tuple(args))

    def astype(self, dtype):
        """Cast to ``dtype``."""
        return Call(Op.get("cast"), (self,), _cast_attrs(dtype))

    def astext(self, show_meta_data=True, annotate=None) -> str:
        """The expression in the text format, after the version header as TVM's ``astext`` (``str(expr)`` has no
        header); without the metadata section when ``show_meta_data`` is False; ``annotate(expr) -> str`` replaces
        the type comments."""
        return f'#[version = "0.0.5"]\n{_astext(self, show_meta_data, annotate)}'


    def __str__(self):
        return _astext(self)

    __repr__ = __str__


def _astext(expr, show_meta_data=True, annotate=None) -> str:
    from ..runtime.packed_func import get_global_func

    printer = get_global_func("relay.ir.astext", allow_missing=True)
    return printer(expr, show_meta_data, annotate) if printer is not None else object.__repr__(expr)


def _cast_attrs(dtype):
    from ..ir.op import Op as _Op

    return _Op.get("cast").get_attr("attrs_type")(dtype=str(dtype))


def _as_operand(value, like):
    if isinstance(value, RelayExpr):
        return value
    if isinstance(value, Number | np.ndarray | np.generic):
        dtype = None
        ttype = like.checked_type_
        if isinstance(ttype, TensorType):
            dtype = ttype.dtype
        elif isinstance(value, float):
            dtype = "float32"
        return const(value, dtype)
    raise ArgumentTypeError(f"cannot use a value of type {type(value).__name__} as a Relay expression")


@dataclass(frozen=True, slots=True, eq=False)
class Id(Node):
    """The identity of a variable (TVM's ``relay.Id``): compared by identity, shared by the copies of a Var."""

    name_hint: str = field(metadata=IGNORE)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Var(ExprWithOp, RelayExpr):
    """A local variable, printed ``%name``. Two Vars are different variables even when their names agree."""

    name_hint: str = field(metadata=IGNORE)
    type_annotation: Type | None = None
    # the variable's identity (TVM's ``Var.vid``): kept by copies made with ``with_fields`` (a typed copy of a
    # variable is the same variable), so it can key maps across passes
    vid: Id = field(default=None, kw_only=True, metadata=IGNORE, repr=False)  # type: ignore[assignment]
    # where the variable's value lives (TVM's ``virtual_device_``, set by PlanDevices on function parameters and
    # printed ``%x {virtual_device=...}``); None when unconstrained
    virtual_device_: Any = field(default=None, kw_only=True, repr=False)

    _is_var = True

    def __post_init__(self):
        if not isinstance(self.name_hint, str):
            raise KilnError(f"relay.Var: name_hint must be a str, not {type(self.name_hint).__name__}")
        if self.vid is None:
            object.__setattr__(self, "vid", Id(self.name_hint))
        vd = self.virtual_device_
        if vd is not None and getattr(vd, "is_fully_unconstrained", False):
            object.__setattr__(self, "virtual_device_", None)  # one spelling of "unconstrained" for equality

    @property
    def virtual_device(self):
        """The VirtualDevice holding the variable's value (fully unconstrained when unknown)."""
        if self.virtual_device_ is None:
            from ..target.virtual_device import VirtualDevice

            return VirtualDevice()
        return self.virtual_device_


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Constant(ExprWithOp, RelayExpr):
    """A constant tensor; its type is known at construction."""

    data: NDArray

    def __post_init__(self):
        data = self.data if isinstance(self.data, NDArray) else nd_array(np.asarray(self.data))
        object.__setattr__(self, "data", data)
        if self.checked_type_ is None:
            object.__setattr__(self, "checked_type_", TensorType(data.shape, data.dtype))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Tuple(ExprWithOp, RelayExpr):
    """A tuple of expressions."""

    fields: tuple

    def __post_init__(self):
        object.__setattr__(self, "fields", tuple(self.fields))
        _check_exprs(self.fields, "relay.Tuple field")

    @property
    def _graph_node(self):
        """A tuple is a dataflow node, except the empty tuple, which is a constant (as in TVM)."""
        return bool(self.fields)

    def __getitem__(self, index):
        return self.fields[index]

    def __len__(self):
        return len(self.fields)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TupleGetItem(ExprWithOp, RelayExpr):
    """Field ``index`` of a tuple-valued expression, printed ``%0.1``."""

    tuple_value: RelayExpr
    index: int

    def __post_init__(self):
        _check_exprs((self.tuple_value,), "relay.TupleGetItem tuple_value")
        object.__setattr__(self, "index", int(self.index))


@dataclass(frozen=True, slots=True, eq=False, repr=False, init=False)
class Call(ExprWithOp, RelayExpr):
    """A call of an operator, function, global function or closure with ``args`` and operator ``attrs``."""

    _graph_node = True

    op: RelayExpr | Op | GlobalVar
    args: tuple
    attrs: Attrs | None = None
    # the type arguments of a call of a polymorphic function (filled by InferType); for an operator, the types of
    # its arguments, which structural equality does not compare
    type_args: tuple = field(default=(), metadata=OP_CALL_IGNORE)

    def __init__(self, op, args, attrs=None, type_args=(), span=None, *, checked_type_=None):
        # TVM's positional order, span included: Call(op, args, attrs, type_args, span)
        for name, value in (("op", op), ("args", args), ("attrs", attrs), ("type_args", type_args), ("span", span),
                            ("checked_type_", checked_type_)):
            object.__setattr__(self, name, value)
        self.__post_init__()

    def __post_init__(self):
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "type_args", tuple(self.type_args or ()))
        _check_exprs(self.args, f"argument of {self.op}")
        if not isinstance(self.op, RelayExpr | Op | GlobalVar):
            raise KilnError(f"relay.Call: cannot call a {type(self.op).__name__}")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Let(ExprWithOp, RelayExpr):
    """``let %var = value; body``."""

    _graph_node = True

    var: Var = field(metadata=DEF)
    value: RelayExpr
    body: RelayExpr

    def __post_init__(self):
        if not isinstance(self.var, Var):
            raise KilnError(f"relay.Let binds a Var, not a {type(self.var).__name__}")
        _check_exprs((self.value, self.body), "relay.Let value/body")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class If(ExprWithOp, RelayExpr):
    """``if (cond) { true_branch } else { false_branch }``; ``cond`` is a scalar bool tensor."""

    _graph_node = True

    cond: RelayExpr
    true_branch: RelayExpr
    false_branch: RelayExpr

    def __post_init__(self):
        _check_exprs((self.cond, self.true_branch, self.false_branch), "relay.If operand")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RefCreate(ExprWithOp, RelayExpr):
    """``ref(value)``: a new mutable reference cell holding ``value``."""

    value: RelayExpr

    def __post_init__(self):
        _check_exprs((self.value,), "relay.RefCreate value")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RefRead(ExprWithOp, RelayExpr):
    """``ref_read(ref)``: the value a reference cell holds now."""

    ref: RelayExpr

    def __post_init__(self):
        _check_exprs((self.ref,), "relay.RefRead ref")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RefWrite(ExprWithOp, RelayExpr):
    """``ref_write(ref, value)``: store ``value`` in the cell ``ref``; evaluates to ``()``."""

    ref: RelayExpr
    value: RelayExpr

    def __post_init__(self):
        _check_exprs((self.ref, self.value), "relay.RefWrite operand")


def _check_exprs(values, what):
    for value in values:
        if not isinstance(value, RelayExpr | GlobalVar | Op):
            raise KilnError(f"{what} must be a Relay expression, not {type(value).__name__} ({value!r:.80})")


class TupleWrapper:
    """The multiple outputs of an operator such as ``split`` or ``batch_norm``: index it to get each one.

    Examples
    --------
    >>> out = relay.nn.batch_norm(x, gamma, beta, mean, var)   # doctest: +SKIP
    >>> y = out[0]                                             # doctest: +SKIP
    """

    __slots__ = ("tuple_value", "size")

    def __init__(self, tuple_value, size):
        self.tuple_value = tuple_value
        self.size = size

    def astuple(self):
        """The underlying tuple-valued expression."""
        return self.tuple_value

    def __getitem__(self, index):
        if not -self.size <= index < self.size:
            raise IndexError(f"tuple index {index} out of range for {self.size} outputs")
        return TupleGetItem(self.tuple_value, index % self.size)

    def __len__(self):
        return self.size

    def __iter__(self):
        return (self[i] for i in range(self.size))

    def astext(self):
        """The underlying expression in the text format."""
        return self.tuple_value.astext()


def var(name_hint, type_annotation=None, shape=None, dtype="float32", span=None) -> Var:
    """Make a variable; ``shape`` (with ``dtype``) is a shortcut for a TensorType annotation.

    Examples
    --------
    >>> x = var("x", shape=(1, 3, 224, 224))
    >>> str(x.type_annotation)
    'Tensor[(1, 3, 224, 224), float32]'
    """
    if type_annotation is not None and shape is not None:
        raise KilnError(f"relay.var({name_hint!r}): give either type_annotation or shape, not both")
    if shape is not None:
        type_annotation = TensorType(shape, dtype)
    elif isinstance(type_annotation, str):
        type_annotation = TensorType((), type_annotation)
    return Var(name_hint, type_annotation, span=span)


def const(value, dtype=None, span=None) -> Constant:
    """Make a constant from a Python scalar, numpy array or NDArray.

    Python floats default to float32 and Python ints to int32, and so do numpy float64/int64 arrays (TVM's rule);
    an NDArray keeps its dtype.
    """
    if isinstance(dtype, TensorType):  # TVM accepts a scalar type where a dtype is meant
        dtype = dtype.dtype
    if isinstance(value, NDArray):
        value = value.numpy()
        dtype = value.dtype if dtype is None else dtype
    if isinstance(value, bool | np.bool_) and dtype is None:
        dtype = "bool"
    elif isinstance(value, float) and dtype is None:
        dtype = "float32"
    elif isinstance(value, int) and dtype is None:
        dtype = "int32"
    arr = np.asarray(value, dtype=dtype)
    if arr.dtype == np.float64 and dtype is None:
        arr = arr.astype("float32")
    if arr.dtype == np.int64 and dtype is None:
        arr = arr.astype("int32")
    return Constant(nd_array(arr), span=span)


def bind(expr, binds: dict):
    """Replace variables in ``expr``: ``binds`` maps Var (or, for a function, parameter name) to an expression."""
    from .expr_functor import ExprMutator
    from .function import Function

    if isinstance(expr, Function) and binds and all(isinstance(k, str) for k in binds):
        by_name = {p.name_hint: p for p in expr.params}
        unknown = [k for k in binds if k not in by_name]
        if unknown:
            raise KilnError(f"bind: function has no parameter named {', '.join(unknown)}")
        binds = {by_name[k]: v for k, v in binds.items()}

    class _Binder(ExprMutator):
        def visit_var(self, v):
            return binds.get(v, v)

        def visit_function(self, fn):
            params = tuple(p for p in fn.params if p not in binds)
            return fn.with_fields(params=params, body=self.visit(fn.body))

    return _Binder().visit(expr)


__all__ = ["Var", "Constant", "Tuple", "TupleGetItem", "Call", "Let", "If", "RefCreate", "RefRead", "RefWrite",
           "TupleWrapper", "var", "const", "bind", "ExprWithOp", "TupleType"]
