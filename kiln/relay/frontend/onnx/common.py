"""Shared machinery of the ONNX converters: the converter registry with opset dispatch, the conversion context
handed to every converter, and small helpers (dtypes, attribute parsing, constants, static values).

A converter is a class registered for one or more ONNX op types with :func:`register`; it defines classmethods
``_impl_v<N>(cls, inputs, attr, ctx)`` for the opset versions where the operator's definition changed. For a model
of opset ``k`` the converter uses the largest ``N <= k`` (TVM's ``OnnxOpConverter.get_converter``). ``inputs`` holds
one typed Relay expression per ONNX input (None for an omitted optional input), ``attr`` the node's attributes as
Python values (strings decoded, tensors as numpy arrays), and ``ctx`` the :class:`ConvertContext`: static shapes and
dtypes of inputs, the numpy value of inputs that must be compile-time constants, the opset and the node.

What ONNX computes about shapes (``Shape``, ``Size``, shape arithmetic feeding ``Reshape``) is evaluated while
converting whenever the shapes are static: the graph folds every node whose inputs are all constants, and
:meth:`ConvertContext.value` folds what a converter needs as a number. When such a value depends on graph inputs
(a symbolic dimension, a shape or ``k`` given as an input), :meth:`ConvertContext.value_or_none` says so and the
converter builds the dynamic form of its operator (:mod:`.dynamic`: ``shape_of``, ``dyn.*``, run by the VM); a
converter without one raises :class:`StaticValueRequired` naming the node and the inputs.
"""

import numpy as np

from ....error import KilnError, OpNotImplemented
from ....ir.registry import Registry
from ....ir.type import TensorType
from ....runtime.ndarray import array as nd_array
from ...analysis import free_vars
from ...expr import Constant
from ...transform.fold_constant import fold_constant
from ...transform.infer_type import infer_type

CONVERTERS = Registry("ONNX converter")
"""ONNX op type -> converter class (filled by :func:`register`; a second converter for one op type is an error)."""


def register(*op_types):
    """Class decorator registering an :class:`OnnxOpConverter` subclass for ``op_types``."""
    return CONVERTERS.register(*op_types)


class OnnxOpConverter:
    """Base class of converters: subclasses define ``_impl_v<N>`` classmethods (see the module docstring)."""

    @classmethod
    def versions(cls) -> list[int]:
        """The opset versions this converter implements, ascending."""
        return sorted(int(name[len("_impl_v"):]) for name in dir(cls) if name.startswith("_impl_v"))

    @classmethod
    def get_converter(cls, opset):
        """The implementation for ``opset`` (the largest version <= opset), or None."""
        usable = [v for v in cls.versions() if v <= opset]
        return getattr(cls, f"_impl_v{usable[-1]}") if usable else None


def onnx_dtype(elem_type, what="tensor") -> str:
    """The kiln dtype name of an ONNX ``TensorProto`` element type."""
    from onnx import TensorProto, helper

    if elem_type == TensorProto.BOOL:
        return "bool"
    try:
        np_type = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError) as exc:
        raise OpNotImplemented(f"{what} has ONNX element type {elem_type}, which kiln does not support") from exc
    if np_type.kind not in "biuf" or np_type.name not in _SUPPORTED_DTYPES:
        name = TensorProto.DataType.Name(elem_type)
        raise OpNotImplemented(f"{what} has ONNX element type {name}, which kiln does not support")
    return np_type.name


_SUPPORTED_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                     "float32", "float64"}


def parse_attributes(node) -> dict:
    """The attributes of an ONNX node as Python values (bytes decoded to str, tensors to numpy arrays)."""
    from onnx import AttributeProto, helper, numpy_helper

    out = {}
    for a in node.attribute:
        if a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS):
            out[a.name] = helper.get_attribute_value(a)  # subgraphs: converters of control flow reject them
            continue
        value = helper.get_attribute_value(a)
        if a.type == AttributeProto.TENSOR:
            value = numpy_helper.to_array(value)
        elif a.type == AttributeProto.TENSORS:
            value = [numpy_helper.to_array(t) for t in value]
        elif isinstance(value, bytes):
            value = value.decode("utf-8")
        elif isinstance(value, list) and value and isinstance(value[0], bytes):
            value = [v.decode("utf-8") for v in value]
        out[a.name] = value
    return out


class StaticValueRequired(KilnError):
    """A converter needs as a number a value that depends on graph inputs, and has no dynamic form for it.

    ``input_names`` lists those graph inputs: a caller that knows their values (the ONNX backend, at run time) can
    convert again with them bound as constants.
    """

    def __init__(self, message, input_names=()):
        super().__init__(message)
        self.input_names = tuple(input_names)


def const(value, dtype) -> Constant:
    """A typed constant of exactly ``dtype`` (relay.const would narrow int64/float64 numpy values)."""
    return Constant(nd_array(np.asarray(value, dtype=dtype)))


class ConvertContext:
    """What a converter may ask about the node it converts (see the module docstring).

    Attributes
    ----------
    opset : int
        The opset of the default ONNX domain being converted.
    node : onnx.NodeProto
        The node being converted.
    name : str
        The node's name (the one kiln gave it when the model left it empty).
    """

    def __init__(self, graph, opset):
        self.graph = graph
        self.opset = opset
        self.node = None
        self.name = ""

    def error(self, message, cls=KilnError):
        """An exception of ``cls`` whose message names this node."""
        return cls(f"ONNX node {self.name!r} ({self.node.op_type}): {message}")

    def typed(self, expr):
        """``expr`` with types filled in (already typed subexpressions are kept as they are)."""
        return infer_type(expr, self.graph.mod)

    def ttype(self, expr) -> TensorType:
        """The tensor type of ``expr``."""
        ttype = getattr(expr, "checked_type_", None) or self.typed(expr).checked_type
        if not isinstance(ttype, TensorType):
            raise self.error(f"expected a tensor input, got a value of type {ttype}")
        return ttype

    def shape(self, expr) -> tuple:
        """The static shape of ``expr``."""
        return tuple(self.ttype(expr).shape)

    def ndim(self, expr) -> int:
        """The rank of ``expr``."""
        return len(self.ttype(expr).shape)

    def dtype(self, expr) -> str:
        """The dtype of ``expr``."""
        return self.ttype(expr).dtype

    def value(self, expr, what="input") -> np.ndarray:
        """The numpy value of ``expr``, which must be computable while converting (constants and, with
        ``freeze_params=False``, initializers)."""
        if isinstance(expr, Constant):
            return expr.data.numpy()
        folded = fold_constant(expr)
        if isinstance(folded, Constant):
            return folded.data.numpy()
        value = self.graph.evaluate_with_params(folded)
        if value is None:
            names = [v.name_hint for v in free_vars(folded) if v.name_hint in self.graph.input_names]
            raise StaticValueRequired(
                f"ONNX node {self.name!r} ({self.node.op_type}): {what} must be a compile-time constant (kiln "
                f"has no dynamic form of this use); it depends on the graph input(s) {', '.join(names) or '?'}", names)
        return value

    def value_or_none(self, expr, what="input"):
        """``value`` of ``expr``, or None when it depends on graph inputs (known only at run time: the converter then
        builds the dynamic form of its operator)."""
        try:
            return self.value(expr, what)
        except StaticValueRequired:
            return None

    def dynamic_op(self, name, what):
        """The builder ``kiln.relay.op.<name>`` (``"dyn.reshape"``, ``"argwhere"``) of an operator for a node whose
        ``what`` is known only at run time; OpNotImplemented naming the node and the operator while kiln lacks it."""
        from ... import op as relay_op

        builder = relay_op
        for part in name.split("."):
            builder = getattr(builder, part, None)
        if builder is None:
            raise self.error(f"{what} is known only at run time (it depends on graph inputs), which needs the "
                             f"operator {name}; kiln does not have it yet", OpNotImplemented)
        return builder

    def optional_value(self, inputs, index, what, default=None):
        """``value`` of ``inputs[index]``, or ``default`` when that optional input is omitted (or empty)."""
        if index >= len(inputs) or inputs[index] is None:
            return default
        value = self.value(inputs[index], what)
        return default if value.size == 0 and default is not None else value

    def axis(self, value, ndim, what="axis") -> int:
        """``value`` as an axis of a tensor of rank ``ndim`` (negative counts from the end); an error naming the node
        when it is out of ``[-ndim, ndim)``."""
        value = int(value)
        if not -ndim <= value < ndim:
            raise self.error(f"{what} {value} is out of range for a tensor of rank {ndim}")
        return value % ndim

    def is_const(self, expr) -> bool:
        """Whether ``expr`` is a Relay constant."""
        return isinstance(expr, Constant)


def get_pads(ctx, attr, in_spatial, kernel, strides, dilations, name="pads"):
    """Per-axis ``(begin, end)`` padding from ``pads`` or ``auto_pad`` (SAME_UPPER puts the extra cell at the end,
    SAME_LOWER at the beginning; VALID pads nothing)."""
    n = len(in_spatial)
    auto_pad = attr.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = []
        for size, k, s, d in zip(in_spatial, kernel, strides, dilations, strict=True):
            out = -(-size // s)
            total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
            small, big = total // 2, total - total // 2
            pads.append((small, big) if auto_pad == "SAME_UPPER" else (big, small))
        return pads
    if auto_pad == "VALID":
        return [(0, 0)] * n
    if auto_pad != "NOTSET":
        raise ctx.error(f"unknown auto_pad {auto_pad!r}")
    flat = list(attr.get(name, [0] * (2 * n)))
    if len(flat) != 2 * n:
        raise ctx.error(f"{name} has {len(flat)} values for {n} spatial axes")
    return list(zip(flat[:n], flat[n:], strict=True))
