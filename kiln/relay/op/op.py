"""Relay operator registration: each operator's type relation, fusion pattern and attribute record.

An operator is registered once with :func:`register_relay_op`; its attributes live in the ``kiln.ir`` op registry:
``FTypeRelation`` (``(arg_types, attrs) -> Type``), ``TOpPattern`` (:class:`OpPattern`), ``attrs_type`` and
``num_inputs``. Lower layers attach more (the interpreter's ``FEvaluate``, topi's ``FTVMCompute``).
"""

from enum import IntEnum

from ...error import KilnError, OpAttributeInvalid
from ...ir.op import Op, register_op, register_op_attr
from ..expr import Call


class OpPattern(IntEnum):
    """How an operator may fuse, with TVM's values (``include/tvm/relay/op_attr_types.h``)."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


def register_relay_op(name, num_inputs, type_rel, pattern, attrs_type=None, description=""):
    """Register the Relay operator ``name``.

    Parameters
    ----------
    name : str
        The operator name, such as ``"nn.conv2d"``.
    num_inputs : int or None
        The number of arguments (None: any).
    type_rel : callable
        ``(arg_types, attrs) -> Type``; raises TypeInferenceError when the arguments do not fit.
    pattern : OpPattern
        The fusion pattern.
    attrs_type : type, optional
        The attribute record class (such as ``Conv2DAttrs``).
    """
    op = register_op(name)
    register_op_attr(name, "num_inputs", num_inputs)
    register_op_attr(name, "FTypeRelation", type_rel)
    register_op_attr(name, "TOpPattern", OpPattern(pattern))
    register_op_attr(name, "attrs_type", attrs_type)
    register_op_attr(name, "description", description)
    return op


def make_call(name, args, attrs=None, span=None) -> Call:
    """Build ``name(*args)`` with ``attrs``, checking the number of arguments."""
    op = Op.get(name)
    expected = op.get_attr("num_inputs")
    if expected is not None and len(args) != expected:
        raise KilnError(f"{name} takes {expected} arguments, got {len(args)}")
    attrs_type = op.get_attr("attrs_type")
    if attrs is not None and attrs_type is not None and not isinstance(attrs, attrs_type):
        raise OpAttributeInvalid(f"{name} takes {attrs_type.__name__}, not {type(attrs).__name__}")
    return Call(op, tuple(args), attrs, span=span)
