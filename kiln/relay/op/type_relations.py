"""Type relations shared by many operators: identity, broadcasting, reductions, and argument checks.

A relation takes the argument types and the call's attrs and returns the result type, or raises
TypeInferenceError saying what was expected and what it got (InferType adds the operator and source span).
"""

from ...error import TypeInferenceError
from ...ir.type import Any, TensorType, TupleType, is_any
from ...runtime.packed_func import register_func

# the dtypes Relay operators compute on (kiln.tir.dtype_semantics says what each means); an operator registers the
# ones each of its arguments accepts (register_relay_op's ``dtypes``), and its relation rejects any other
BOOL = ("bool",)
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTEGER = SIGNED + UNSIGNED
FLOAT = ("float16", "float32", "float64")
NUMERIC = INTEGER + FLOAT
ALL = BOOL + NUMERIC
_CLASS_NAMES = {BOOL: "bool", INTEGER: "an integer dtype", FLOAT: "a float dtype",
                NUMERIC: "a numeric dtype (integer or float)", ALL: "a supported dtype",
                BOOL + INTEGER: "bool or an integer dtype"}


def describe_dtypes(dtypes) -> str:
    """``dtypes`` in words (``a float dtype (float16, float32, float64)``)."""
    dtypes = tuple(dtypes)
    name = _CLASS_NAMES.get(dtypes)
    listed = ", ".join(dtypes)
    if name is None:
        return f"one of {listed}"
    return name if len(dtypes) == 1 else f"{name} ({listed})"


def check_dtype(dtype, accepted, what, op_name):
    """Raise TypeInferenceError unless ``dtype`` is one of ``accepted``: ``"{what} has dtype {dtype}, but {op_name}
    needs {accepted}"``."""
    if dtype not in accepted:
        raise TypeInferenceError(f"{what} has dtype {dtype}, but {op_name} needs {describe_dtypes(accepted)}")


def tensor_arg(types, index, what="argument") -> TensorType:
    """Argument ``index`` as a TensorType, or a TypeInferenceError."""
    t = types[index]
    if not isinstance(t, TensorType):
        raise TypeInferenceError(f"{what} {index} must be a tensor, got {t}")
    return t


def channel_vector_types(*indices):
    """``FInferArgTypes`` of an operator whose arguments at ``indices`` hold one value per index of the data (argument
    0) along ``attrs.axis`` (a bias, a norm's gamma and beta): an untyped one of them is ``Tensor[(C,), dtype]``."""
    def complete(types, attrs):
        data = tensor_arg(types, 0, "data")
        axis = normalize_axis(attrs.axis, data.ndim)
        vector = TensorType((data.shape[axis],), data.dtype)
        return [vector if t is None and i in indices else t for i, t in enumerate(types)]

    return complete


def normalize_axis(axis, ndim, what="axis") -> int:
    """Map a possibly negative ``axis`` into ``[0, ndim)``, or raise TypeInferenceError."""
    if not -ndim <= axis < max(ndim, 1):
        raise TypeInferenceError(f"{what} {axis} is out of range for a tensor of rank {ndim}")
    return axis % ndim if ndim else 0


def broadcast_shapes(*shapes) -> tuple:
    """The numpy broadcast of ``shapes``, or TypeInferenceError naming both shapes.

    A dynamic dimension (:class:`~kiln.ir.type.Any`) meeting a static one other than 1 takes the static size (the
    shape function checks at run time that it fits); meeting only 1s and dynamic ones, it stays dynamic."""
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(-ndim, 0):
        dims = {s[i] for s in shapes if len(s) >= -i} - {1}
        static = {d for d in dims if not is_any(d)}
        if len(static) > 1:
            raise TypeInferenceError(
                f"shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be broadcast together"
            )
        # two different symbolic dimensions broadcast to one known only at run time
        out.append(static.pop() if static else (dims.pop() if len(dims) == 1 else Any()) if dims else 1)
    return tuple(out)


def dims_match(a, b) -> bool:
    """Whether dimensions ``a`` and ``b`` can be equal: the same size, or either known only at run time."""
    return a == b or is_any(a) or is_any(b)


def nonpositive(*dims) -> bool:
    """Whether a static one of ``dims`` is 0 or less (an output size that leaves nothing; dynamic ones are checked
    at run time)."""
    return any(not is_any(d) and d <= 0 for d in dims)


def shapes_match(a, b) -> bool:
    """:func:`dims_match` on every dimension of two shapes of the same rank."""
    return len(a) == len(b) and all(dims_match(x, y) for x, y in zip(a, b, strict=True))


def same_dtype(types, what="arguments") -> str:
    """The common dtype of tensor ``types``, or TypeInferenceError naming the mismatch."""
    dtypes = [t.dtype for t in types]
    if len(set(dtypes)) > 1:
        raise TypeInferenceError(f"{what} must share one dtype, got {', '.join(dtypes)}")
    return dtypes[0]


def identity_rel(types, attrs):
    """The result has the type of the single argument (element-wise unary operators)."""
    return tensor_arg(types, 0)


def broadcast_rel(types, attrs):
    """Numpy broadcasting of two same-dtype tensors."""
    lhs, rhs = tensor_arg(types, 0), tensor_arg(types, 1)
    dtype = same_dtype([lhs, rhs])
    return TensorType(broadcast_shapes(lhs.shape, rhs.shape), dtype)


# TVM's global names of the basic relations (``EnvFunc.get("tvm.relay.type_relation.Broadcast")``)
register_func("tvm.relay.type_relation.Identity", identity_rel)
register_func("tvm.relay.type_relation.Broadcast", broadcast_rel)


def broadcast_bool_rel(types, attrs):
    """Broadcasting comparison: the result is bool."""
    return TensorType(broadcast_rel(types, attrs).shape, "bool")


def reduce_axes(ndim, axis, exclude) -> list[int]:
    """The axes a reduction with ``axis``/``exclude`` reduces over, sorted: all of them when ``axis`` is None or
    empty, whatever ``exclude`` says (TVM's ``GetReduceAxes``)."""
    if not axis:
        return list(range(ndim))
    axes = sorted({normalize_axis(a, ndim) for a in axis})
    return [i for i in range(ndim) if i not in axes] if exclude else axes


def reduce_shape(shape, attrs) -> tuple:
    """The shape after reducing ``shape`` with ReduceAttrs ``attrs``."""
    axes = reduce_axes(len(shape), attrs.axis, attrs.exclude)
    if attrs.keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def reduce_rel(types, attrs):
    """A reduction keeps the dtype and drops (or keeps as 1) the reduced axes."""
    data = tensor_arg(types, 0)
    return TensorType(reduce_shape(data.shape, attrs), data.dtype)


def arg_reduce_rel(types, attrs):
    """argmax/argmin: the reduced shape, int32 indices."""
    data = tensor_arg(types, 0)
    return TensorType(reduce_shape(data.shape, attrs), "int32")


def tuple_of(*types) -> TupleType:
    """A TupleType of ``types``."""
    return TupleType(types)
