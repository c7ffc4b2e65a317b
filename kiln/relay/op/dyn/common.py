"""Helpers the ``dyn.*`` operators share: reading their shape-deciding arguments in a type relation (a 1-D tensor of
a static length, or a scalar) and in a shape function (its entries as int64 expressions), and the shape tensor a
shape function returns."""

from ....error import TypeInferenceError
from ....ir.type import is_any
from ....te import compute
from ....tir import op as _op
from ....tir.expr import Cast, Select

__all__ = ["int64", "dim64", "select_of", "shape_tensor", "static_length", "scalar_arg", "entry", "entries",
           "nonnegative_checks", "constant_ints"]


def int64(value):
    """``value`` (an expression or a Python int) as an int64 expression."""
    if isinstance(value, int):
        return _op.const(value, "int64")
    return Cast("int64", value) if value.dtype != "int64" else value


def dim64(tensor, k):
    """Dimension ``k`` of a TE tensor as an int64 expression (a size variable where it is dynamic)."""
    return int64(tensor.shape[k].value if hasattr(tensor.shape[k], "value") else tensor.shape[k])


def select_of(values, j):
    """``values[j]`` for an index expression ``j``, as one nested select."""
    expr = values[-1]
    for index in range(len(values) - 2, -1, -1):
        expr = Select(_op.equal(j, index), values[index], expr)
    return expr


def shape_tensor(dims, name):
    """The 1-D int64 compute holding ``dims`` (what a shape function returns for one output)."""
    dims = [int64(d) for d in dims] or [_op.const(1, "int64")]
    return compute((len(dims),), lambda j: select_of(dims, j), name=name)


def static_length(ttype, op_name, what) -> int:
    """The length of the 1-D tensor type ``ttype`` (a shape-deciding argument), or TypeInferenceError."""
    if ttype.ndim != 1 or is_any(ttype.shape[0]):
        raise TypeInferenceError(f"{what} must be a 1-D tensor of a static length, got {ttype}")
    return ttype.shape[0]


def scalar_arg(ttype, op_name, what):
    """Check that ``ttype`` holds one value: a 0-d tensor or a 1-D tensor of length 1."""
    if ttype.ndim > 1 or (ttype.ndim == 1 and ttype.shape[0] != 1):
        raise TypeInferenceError(f"{what} must be a scalar (or a 1-element 1-D tensor), got {ttype}")


def entry(tensor, k=0):
    """Entry ``k`` of a 0-d or 1-D TE tensor, as int64."""
    return int64(tensor() if len(tensor.shape) == 0 else tensor[k])


def entries(tensor, count):
    """The first ``count`` entries of a 1-D TE tensor, as int64 expressions."""
    return [int64(tensor[k]) for k in range(count)]


def nonnegative_checks(values, op_name, what):
    """Run-time checks that each of ``values`` is >= 0 (a negative dimension is refused by name)."""
    return [(_op.greater_equal(v, 0), f"{op_name}: {what} entry {k} is negative") for k, v in enumerate(values)]


def constant_ints(value) -> list:
    """The entries of a constant shape argument's numpy value as Python ints."""
    return [int(v) for v in value.reshape(-1)]

