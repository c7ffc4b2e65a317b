"""Relay operator registration: each operator's type relation, fusion pattern and attribute record.

An operator is registered once with :func:`register_relay_op`; its attributes live in the ``kiln.ir`` op registry:
``FTypeRelation`` (``(arg_types, attrs) -> Type``, which also rejects dtypes the operator does not compute on),
``dtypes`` (the dtypes each argument accepts), ``TOpPattern`` (:class:`OpPattern`), ``attrs_type`` and
``num_inputs``. Lower layers attach more (the interpreter's ``FEvaluate``, topi's ``FTVMCompute``).
"""

import functools
from enum import IntEnum

from ...error import KilnError, OpAttributeInvalid
from ...ir.op import Op, has_op, register_op, register_op_attr
from ...ir.type import TensorType, TupleType
from ..expr import Call
from .type_relations import ALL, check_dtype


class OpPattern(IntEnum):
    """How an operator may fuse, with TVM's values (``include/tvm/relay/op_attr_types.h``)."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


def register_relay_op(name, num_inputs, type_rel, pattern, attrs_type=None, description="", dtypes=ALL):
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
    dtypes : tuple
        The dtypes the operator computes on: a tuple of dtype names for every argument (the fields of a tuple
        argument included), or one such tuple per argument (the last one for any further arguments). The registered
        ``FTypeRelation`` rejects other dtypes, naming the operator, the argument and what it takes; the op
        attribute ``dtypes`` holds them per argument, for tests that run every operator in every dtype.
    """
    per_argument = (dtypes,) if isinstance(dtypes[0], str) else tuple(dtypes)
    op = register_op(name)
    register_op_attr(name, "num_inputs", num_inputs)
    register_op_attr(name, "dtypes", per_argument)
    register_op_attr(name, "FTypeRelation", _dtype_checked(name, type_rel, per_argument))
    register_op_attr(name, "TOpPattern", OpPattern(pattern))
    register_op_attr(name, "attrs_type", attrs_type)
    register_op_attr(name, "description", description)
    return op


def _dtype_checked(name, type_rel, per_argument):
    """``type_rel`` after checking every tensor argument's dtype against ``per_argument``."""

    @functools.wraps(type_rel)  # __wrapped__ keeps the shared relation recognizable (layout rules look for it)
    def relation(types, attrs):
        for index, ttype in enumerate(types):
            accepted = per_argument[min(index, len(per_argument) - 1)]
            for field in ttype.fields if isinstance(ttype, TupleType) else (ttype,):
                if isinstance(field, TensorType):
                    check_dtype(field.dtype, accepted, f"argument {index}", name)
        return type_rel(types, attrs)

    return relation


def builders(namespace, prefix="") -> list:
    """The names of the operator builders a module defines: its functions named like a registered operator
    (``prefix`` + name: ``"nn."`` for ``relay.nn``). A module's ``__all__``, so a new operator is exported where
    it is defined and nowhere else."""
    module = namespace["__name__"]
    return sorted(name for name, value in namespace.items()
                  if callable(value) and getattr(value, "__module__", None) == module and not name.startswith("_")
                  and has_op(prefix + name))


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


# -- operator attributes registered from Python, at TVM's names (relay.op.register_*) ----------------------------------

def register_alter_op_layout(op_name, falter=None, level=10):
    """Register ``falter(attrs, inputs, tinfos, out_type)`` as the layout alteration of ``op_name`` (the attribute
    ``FTVMAlterOpLayout`` that AlterOpLayout calls); usable as a decorator."""
    return register_op_attr(op_name, "FTVMAlterOpLayout", falter, level)


def register_convert_op_layout(op_name, fconvert=None, level=10):
    """Register ``fconvert(attrs, inputs, tinfos, desired_layouts)`` as the layout conversion of ``op_name`` (the
    attribute ``FTVMConvertOpLayout`` that ConvertLayout calls); usable as a decorator."""
    return register_op_attr(op_name, "FTVMConvertOpLayout", fconvert, level)


def register_infer_correct_layout(op_name, infer_layout=None, level=10):
    """Register ``infer_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput``
    as the layout rule of ``op_name`` (``FInferCorrectLayout``, see ``kiln.relay.transform.infer_layout_utils``);
    usable as a decorator."""
    return register_op_attr(op_name, "FInferCorrectLayout", infer_layout, level)


def register_strategy(op_name, fstrategy=None, level=10):
    """Register ``fstrategy(attrs, inputs, out_type, target) -> OpStrategy`` for ``op_name`` (``FTVMStrategy``);
    usable as a decorator."""
    return register_op_attr(op_name, "FTVMStrategy", fstrategy, level)


def register_compute(op_name, fcompute=None, level=10):
    """Register ``fcompute(attrs, inputs, out_type) -> [te.Tensor]`` for ``op_name`` (``FTVMCompute``, used when
    the operator has no strategy); usable as a decorator."""
    return register_op_attr(op_name, "FTVMCompute", fcompute, level)


def register_shape_func(op_name, data_dependent, fshape=None, level=10):
    """Register the shape function of ``op_name`` (TVM's ``FShapeFunc``); usable as a decorator.

    ``fshape(attrs, inputs, out_types) -> (shapes, checks)`` builds with TE, from ``inputs`` (the arguments'
    placeholders when ``data_dependent``), one int64 1-D shape tensor per output (``out_types``: the outputs'
    TensorTypes) and ``(condition, message)`` pairs the values must meet (asserted at run time). Only operators
    whose result shape depends on values need one: every other shape function is derived from the operator's
    compute (:mod:`kiln.relay.backend.shape_func`). An operator with a data-dependent shape function must be
    ``OPAQUE``, so it is never fused."""
    if not data_dependent:
        raise OpAttributeInvalid(f"register_shape_func({op_name!r}): data-independent shape functions are derived "
                                 f"from the operator's compute; only data-dependent ones are registered")

    def register(f):
        register_op_attr(op_name, "FShapeFunc", f, level)
        return f

    return register(fshape) if fshape is not None else register


def register(op_name, describe=""):
    """Register a new operator from Python (TVM's ``relay.op.op.register``); its relation and attributes are then
    set with the :class:`~kiln.ir.Op` builder methods (``set_num_inputs``, ``add_type_rel``...). A KilnError when
    the name is taken."""
    if has_op(op_name):
        raise KilnError(f"Operator {op_name} is registered before")
    op = register_op(op_name)
    register_op_attr(op_name, "description", describe)
    return op


def get(op_name) -> Op:
    """The operator registered as ``op_name`` (TVM's ``relay.op.op.get``)."""
    return Op.get(op_name)


def register_stateful(op_name, stateful, level=10):
    """Mark whether ``op_name`` has side effects (``TOpIsStateful``)."""
    return register_op_attr(op_name, "TOpIsStateful", bool(stateful), level)


def register_pattern(op_name, pattern, level=10):
    """Set the fusion pattern (:class:`OpPattern`) of ``op_name`` (``TOpPattern``)."""
    return register_op_attr(op_name, "TOpPattern", OpPattern(pattern), level)


def register_gradient(op_name, fgradient=None, level=10):
    """Register ``fgradient(orig, grad) -> [grad_of_each_argument]`` as the gradient of ``op_name`` (TVM's
    ``FPrimalGradient``, read by ``relay.transform.gradient``); usable as a decorator.

    ``orig`` is the forward call, its arguments already computed (typed, let-bound); ``grad`` is the adjoint of its
    result. It returns one expression per argument: the adjoint contribution to that argument, of its type.
    """
    return register_op_attr(op_name, "FPrimalGradient", fgradient, level)


def register_legalize(op_name, legal_op=None, level=10):
    """Register ``legal_op(attrs, inputs, types) -> expr or None`` as the legalization of ``op_name`` (TVM's
    ``FTVMLegalize``, applied by ``relay.transform.Legalize``); usable as a decorator."""
    return register_op_attr(op_name, "FTVMLegalize", legal_op, level)


def register_fake_quantization_to_integer(op_name, func=None, level=10):
    """Register ``func(expr, type_map) -> [new_expr, affine_type]`` as the integer form of ``op_name`` inside a
    fake-quantized region (``FTVMFakeQuantizationToInteger``, read by ``relay.transform.FakeQuantizationToInteger``);
    usable as a decorator.

    ``expr`` is the call with its arguments already rewritten to integers; ``type_map`` maps each rewritten
    expression to its :class:`~kiln.ir.TensorAffineType` (``type_map[expr]`` is the region's output type, for
    operators whose output quantization is not implied by their inputs'). A rule may raise to refuse a call: the
    pass then leaves the region as it was (or fails, with ``hard_fail``)."""
    return register_op_attr(op_name, "FTVMFakeQuantizationToInteger", func, level)


def register_optional_fake_quantization_to_integer(op_name, func=None, level=10):
    """As :func:`register_fake_quantization_to_integer`, for a rewrite applied only when the pass is asked for it
    by name (``optional_qnn_ops``), such as softmax's integer approximation
    (``FTVMOptionalFakeQuantizationToInteger``)."""
    return register_op_attr(op_name, "FTVMOptionalFakeQuantizationToInteger", func, level)
