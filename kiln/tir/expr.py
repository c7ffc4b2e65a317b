"""TIR expressions (TVM's ``tvm.tir.expr``): variables, constants, arithmetic, comparisons, logic, vectors, calls.

Every node is a frozen, slotted graph node compared by identity (``kiln.ir.structural_equal`` compares structure).
Constructors take TVM's argument order (``IntImm(dtype, value)``, ``Cast(dtype, value)``, ``Call(dtype, op, args)``)
and check their operands' dtypes, raising :class:`kiln.error.TIRError`; a Python number among the operands takes the
other operand's dtype. Result dtypes that follow from the operands (``Add.dtype``, ``LT.dtype == "bool"``) are computed,
not passed. Use the builders of :mod:`kiln.tir.op` (or Python operators) to get TVM's type promotion and constant
folding; the constructors build exactly the node asked for.
"""

from dataclasses import dataclass, field

from ..error import TIRError, TIRValueError
from ..ir.node import DEF, IGNORE, Node
from ..ir.type import Type
from . import dtype as _dt
from .expr_op import EqualOp, ExprOp, NotEqualOp, convert

__all__ = [
    "EQ", "GE", "GT", "LE", "LT", "NE", "Add", "And", "Broadcast", "BufferLoad", "Call", "CallEffectKind", "Cast",
    "CommReducer", "Div", "EqualOp", "FloatImm", "FloorDiv", "FloorMod", "IntImm", "IterVar", "Let", "Max", "Min",
    "Mod", "Mul", "Not", "NotEqualOp", "Or", "PointerType", "PrimExpr", "ProducerLoad", "Ramp", "Range", "Reduce",
    "Select", "SizeVar", "StringImm", "Sub", "Var", "convert",
]


def _set(node, name, value):
    object.__setattr__(node, name, value)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PrimExpr(ExprOp, Node):
    """Base of TIR expressions; every one has a ``dtype`` string such as ``"int32"`` or ``"float32x4"``."""

    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    def __str__(self):
        from .printer import expr_to_str

        return expr_to_str(self)

    def __repr__(self):
        return str(self)


@dataclass(frozen=True, slots=True)
class PointerType(Type):
    """The type of a handle to memory: ``PointerType(PrimType("float32"), "global")`` (TVM's ``ir.PointerType``)."""

    element_type: Type
    storage_scope: str = "global"

    type_key = "ir.PointerType"

    def __str__(self):
        return f"T.handle({self.element_type}, {self.storage_scope!r})"


@dataclass(frozen=True, slots=True, eq=False, repr=False, init=False)
class Var(PrimExpr):
    """A variable: ``Var("n", "int32")``; a pointer: ``Var("A_data", PointerType(PrimType("float32")))``.

    Two variables with one name are different variables; structural equality maps them by where they are bound.
    The name is given first or as ``name`` (TVM's keyword) or ``name_hint`` (the field); it must be a string.
    """

    name_hint: str = field(metadata=IGNORE)
    dtype: object = "int32"
    type_annotation: object = None

    _is_var = True

    def __init__(self, name_hint=None, dtype="int32", type_annotation=None, *, name=None, span=None):
        name_hint = name if name_hint is None else name_hint
        if not isinstance(name_hint, str):
            raise TIRError(f"tir.Var: the name must be a string, got {type(name_hint).__name__} {name_hint!r}")
        _set(self, "name_hint", name_hint)
        _set(self, "dtype", dtype)
        _set(self, "type_annotation", type_annotation)
        _set(self, "span", span)
        self.__post_init__()

    def __post_init__(self):
        dtype = self.dtype
        if isinstance(dtype, PointerType):
            _set(self, "type_annotation", dtype)
            dtype = "handle"
        elif isinstance(dtype, Type):
            if self.type_annotation is None:
                _set(self, "type_annotation", dtype)
            dtype = dtype.dtype
        _set(self, "dtype", _dt.normalize(dtype))

    @property
    def name(self) -> str:
        """The variable's name (``name_hint``), as TVM's ``Var.name``."""
        return self.name_hint


@dataclass(frozen=True, slots=True, eq=False, repr=False, init=False)
class SizeVar(Var):
    """A variable known to be non-negative (a symbolic shape dimension)."""


def _check_int_range(dtype, value):
    t = _dt.DataType.parse(dtype)
    if t.is_bool():
        if value not in (0, 1):
            raise TIRError(f"IntImm: {value} is not a bool value (0 or 1)")
        return
    if not t.is_integer() or t.lanes != 1:
        raise TIRError(f"IntImm: dtype must be a scalar integer or bool, got {dtype!r}")
    if not t.min_value() <= value <= t.max_value():
        raise TIRError(f"IntImm: value {value} is out of the range of {dtype}")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IntImm(PrimExpr):
    """An integer (or bool) constant: ``IntImm("int32", 3)``."""

    dtype: str
    value: int

    def __post_init__(self):
        _set(self, "dtype", _dt.normalize(self.dtype))
        _set(self, "value", int(self.value))
        _check_int_range(self.dtype, self.value)

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    def __bool__(self):
        return bool(self.value)

    # As TVM's IntImm: hashed by value, and ``==`` with a number or an integer constant folds to a bool constant
    # (so ``IntImm("int32", 1) in {1}`` holds); with anything else it is an EqualOp, true only for the same node.
    def __hash__(self):
        return hash(self.value)

    def __eq__(self, other):
        if isinstance(other, int | IntImm):  # any dtypes: TVM matches them first, so const(1) == const(True)
            return IntImm("bool", self.value == int(other))
        if other is None:  # TVM builds the comparison at once, and None is no expression
            raise TIRValueError(f"cannot compare the constant {self} with None")
        return EqualOp(self, other)

    def __ne__(self, other):
        if other is None:
            raise TIRValueError(f"cannot compare the constant {self} with None")
        if isinstance(other, int | IntImm):
            return IntImm("bool", self.value != int(other))
        return NotEqualOp(self, other)


# the largest finite value of the float dtypes whose literals TVM range-checks
_FLOAT_LIMITS = {"float16": 65504.0, "float32": 3.4028234663852886e38, "bfloat16": 3.38953139e38}


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class FloatImm(PrimExpr):
    """A floating-point constant: ``FloatImm("float32", 1.5)``."""

    dtype: str
    value: float

    def __post_init__(self):
        _set(self, "dtype", _dt.normalize(self.dtype))
        if not _dt.is_float(self.dtype) or _dt.lanes(self.dtype) != 1:
            raise TIRError(f"FloatImm: dtype must be a scalar float, got {self.dtype!r}")
        value = float(self.value)
        limit = _FLOAT_LIMITS.get(self.dtype)
        if limit is not None and abs(value) > limit and value not in (float("inf"), float("-inf")):
            raise TIRValueError(f"FloatImm: literal value {value} exceeds the range of {self.dtype} (+-{limit})")
        _set(self, "value", value)

    def __float__(self):
        return self.value


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class StringImm(PrimExpr):
    """A string constant (an argument of ``call_extern`` or an assertion message)."""

    value: str
    dtype: str = field(default="handle", init=False)


def _operands(a, b, what):
    """Convert two operands; a Python scalar takes the other's dtype. Raise when the dtypes differ."""
    if isinstance(a, PrimExpr) and isinstance(b, PrimExpr):  # the common case: nothing to convert
        if a.dtype != b.dtype:
            raise TIRError(f"{what}: operand dtypes differ ({a.dtype} and {b.dtype}); cast one of them first")
        return a, b
    if not isinstance(a, PrimExpr | EqualOp) and isinstance(b, PrimExpr | EqualOp):
        b = convert(b)
        a = convert(a, _dt.element(b.dtype))
    elif not isinstance(b, PrimExpr | EqualOp):
        a = convert(a)
        b = convert(b, _dt.element(a.dtype))
    else:
        a, b = convert(a), convert(b)
    if a.dtype != b.dtype:
        raise TIRError(f"{what}: operand dtypes differ ({a.dtype} and {b.dtype}); cast one of them first")
    return a, b


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class BinaryOpExpr(PrimExpr):
    """Base of two-operand arithmetic: fields ``a`` and ``b``, of one dtype, which is the result's."""

    a: PrimExpr
    b: PrimExpr
    dtype: str = field(init=False)

    def __post_init__(self):
        a, b = _operands(self.a, self.b, f"tir.{type(self).__name__}")
        _set(self, "a", a)
        _set(self, "b", b)
        _set(self, "dtype", a.dtype)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Add(BinaryOpExpr):
    """``a + b``."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Sub(BinaryOpExpr):
    """``a - b``."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Mul(BinaryOpExpr):
    """``a * b``."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Div(BinaryOpExpr):
    """``a / b``: true division for floats, C (truncating) division for integers."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Mod(BinaryOpExpr):
    """C remainder (sign of ``a``) of integers; ``fmod`` of floats."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class FloorDiv(BinaryOpExpr):
    """``floor(a / b)`` (Python's ``//``)."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class FloorMod(BinaryOpExpr):
    """``a - floor(a / b) * b`` (Python's ``%``: the sign of ``b``)."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Min(BinaryOpExpr):
    """``min(a, b)``."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Max(BinaryOpExpr):
    """``max(a, b)``."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class CmpExpr(PrimExpr):
    """Base of comparisons: fields ``a`` and ``b``; the result is ``bool`` with the operands' lanes."""

    a: PrimExpr
    b: PrimExpr
    dtype: str = field(init=False)

    def __post_init__(self):
        a, b = _operands(self.a, self.b, f"tir.{type(self).__name__}")
        _set(self, "a", a)
        _set(self, "b", b)
        _set(self, "dtype", _dt.with_lanes("bool", _dt.lanes(a.dtype)))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class EQ(CmpExpr):
    """``a == b``."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class NE(CmpExpr):
    """``a != b``."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class LT(CmpExpr):
    """``a < b``."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class LE(CmpExpr):
    """``a <= b``."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class GT(CmpExpr):
    """``a > b``."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class GE(CmpExpr):
    """``a >= b``."""


def _check_bool(value, what):
    value = convert(value)
    if not _dt.is_bool(value.dtype):
        raise TIRError(f"{what}: operand must be bool, got {value.dtype}")
    return value


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class And(PrimExpr):
    """Logical ``a && b`` of bools."""

    a: PrimExpr
    b: PrimExpr
    dtype: str = field(init=False)

    def __post_init__(self):
        a, b = _operands(_check_bool(self.a, "tir.And"), _check_bool(self.b, "tir.And"), "tir.And")
        _set(self, "a", a)
        _set(self, "b", b)
        _set(self, "dtype", a.dtype)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Or(PrimExpr):
    """Logical ``a || b`` of bools."""

    a: PrimExpr
    b: PrimExpr
    dtype: str = field(init=False)

    def __post_init__(self):
        a, b = _operands(_check_bool(self.a, "tir.Or"), _check_bool(self.b, "tir.Or"), "tir.Or")
        _set(self, "a", a)
        _set(self, "b", b)
        _set(self, "dtype", a.dtype)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Not(PrimExpr):
    """Logical ``!a`` of a bool."""

    a: PrimExpr
    dtype: str = field(init=False)

    def __post_init__(self):
        a = _check_bool(self.a, "tir.Not")
        _set(self, "a", a)
        _set(self, "dtype", a.dtype)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Select(PrimExpr):
    """``condition ? true_value : false_value``; both values are evaluated (use ``if_then_else`` to guard loads)."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr
    dtype: str = field(init=False)

    def __post_init__(self):
        _set(self, "condition", _check_bool(self.condition, "tir.Select condition"))
        t, f = _operands(self.true_value, self.false_value, "tir.Select")
        _set(self, "true_value", t)
        _set(self, "false_value", f)
        _set(self, "dtype", t.dtype)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Cast(PrimExpr):
    """Convert ``value`` to ``dtype`` (``Cast("float32", i)``); lane counts must agree."""

    dtype: str
    value: PrimExpr

    def __post_init__(self):
        value = convert(self.value)
        dtype = _dt.normalize(self.dtype)
        if _dt.lanes(dtype) != _dt.lanes(value.dtype):
            raise TIRError(f"tir.Cast: cannot cast {value.dtype} to {dtype} (lane counts differ)")
        _set(self, "dtype", dtype)
        _set(self, "value", value)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Ramp(PrimExpr):
    """The vector ``[base, base + stride, ..., base + (lanes-1) * stride]``."""

    base: PrimExpr
    stride: PrimExpr
    lanes: int
    dtype: str = field(init=False)

    def __post_init__(self):
        base, stride = _operands(self.base, self.stride, "tir.Ramp")
        lanes, n = lanes_of(self.lanes, "tir.Ramp")
        if _dt.lanes(base.dtype) != 1:
            raise TIRError(f"tir.Ramp: needs a scalar base (got {base.dtype})")
        _set(self, "base", base)
        _set(self, "stride", stride)
        _set(self, "lanes", lanes)
        _set(self, "dtype", _dt.with_lanes(base.dtype, n))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Broadcast(PrimExpr):
    """The vector holding ``value`` in each of ``lanes`` lanes."""

    value: PrimExpr
    lanes: int
    dtype: str = field(init=False)

    def __post_init__(self):
        value = convert(self.value)
        lanes, n = lanes_of(self.lanes, "tir.Broadcast")
        if _dt.lanes(value.dtype) != 1:
            raise TIRError(f"tir.Broadcast: needs a scalar value (got {value.dtype})")
        _set(self, "value", value)
        _set(self, "lanes", lanes)
        _set(self, "dtype", _dt.with_lanes(value.dtype, n))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Let(PrimExpr):
    """``let var = value in body`` as an expression."""

    var: Var = field(metadata=DEF)
    value: PrimExpr
    body: PrimExpr
    dtype: str = field(init=False)

    def __post_init__(self):
        value, body = convert(self.value), convert(self.body)
        if not isinstance(self.var, Var) or self.var.dtype != value.dtype:
            raise TIRError(f"tir.Let: var must be a Var of the value's dtype {value.dtype}")
        _set(self, "value", value)
        _set(self, "body", body)
        _set(self, "dtype", body.dtype)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class BufferLoad(PrimExpr):
    """``buffer[indices]``; a vector load when the last index is a vector (a Ramp)."""

    buffer: object
    indices: tuple
    dtype: str = field(init=False)

    def __post_init__(self):
        indices = tuple(convert(i) for i in self.indices)
        _set(self, "indices", indices)
        _check_indices(self.buffer, indices, "tir.BufferLoad")
        n = _dt.lanes(indices[-1].dtype) if indices else 1
        _set(self, "dtype", _dt.with_lanes(self.buffer.dtype, _dt.lanes(self.buffer.dtype) * n))


def _check_indices(buffer, indices, what):
    if len(indices) != len(buffer.shape):
        raise TIRError(
            f"{what}: buffer {buffer.name} has {len(buffer.shape)} dimensions but {len(indices)} indices were given"
        )
    for i in indices:
        if not _dt.is_integer(i.dtype):
            raise TIRError(f"{what}: index of buffer {buffer.name} must be an integer, got {i.dtype}")


# calls live in expr_call.py, nodes of iteration domains and reductions (what TE builds) in expr_reduce.py;
# re-exported here as in TVM
from .expr_call import Call, CallEffectKind  # noqa: E402,F401
from .expr_lanes import lanes_of, vscale_factor  # noqa: E402,F401
from .expr_reduce import CommReducer, IterVar, IterVarType, ProducerLoad, Range, Reduce  # noqa: F401
