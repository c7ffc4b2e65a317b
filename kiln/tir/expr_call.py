"""TIR calls (TVM's ``tir.Call``) and the effect kinds of the operators they name (``TCallEffectKind``)."""

from dataclasses import dataclass
from enum import IntEnum

from ..error import TIRError
from ..ir.op import Op
from . import dtype as _dt
from .expr import PrimExpr, _set
from .expr_op import convert


class CallEffectKind(IntEnum):
    """What a call may do besides computing its value (TVM's ``TCallEffectKind``, an op attribute)."""

    EXPR_ANNOTATION = 0
    PURE = 1
    READ_STATE = 2
    UPDATE_STATE = 3
    OPAQUE = 4
    SPECIAL_CALL_ARG = 5
    CONTROL_JUMP = 6


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Call(PrimExpr):
    """A call of an intrinsic or external function: ``Call("float32", "tir.exp", [x])``.

    ``op`` is an :class:`kiln.ir.Op` (a name is looked up; TIR intrinsics are named ``tir.<name>``). External C
    functions are called through the ``tir.call_extern`` op whose first argument is the function name (StringImm).
    """

    dtype: str
    op: Op
    args: tuple

    def __post_init__(self):
        _set(self, "dtype", _dt.normalize(self.dtype))
        op = self.op
        if isinstance(op, str):
            op = Op.get(op if "." in op else f"tir.{op}")
        if not isinstance(op, Op):
            raise TIRError(f"tir.Call: op must be an Op or an op name, got {type(op).__name__}")
        _set(self, "op", op)
        _set(self, "args", tuple(convert(a) for a in self.args))
