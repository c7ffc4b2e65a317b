"""SimplifyExpr's rules for constants in arithmetic, casts around clips and arg-reductions of dequantized tensors
(TVM's ``FullElementwise``, ``SwitchAddMultiply``, ``SimplifyAdjacentMultiplyOrAdd``,
``SimplifyClipAndConsecutiveCast``, ``SimplifyClip`` and ``SimplifyDQArg*``).

* ``op(full(c), x)`` for a broadcasting ``op`` becomes ``op(c, x)`` with the scalar ``c`` when ``x`` alone already has
  the result's type (``ones``, ``zeros`` and their ``_like`` forms likewise), so the identity rules can then drop it;
* ``(x + c1) * c2`` becomes ``x * c2 + c1 * c2``, and ``(x * c1) * c2``, ``(x + c1) + c2`` fold their constants
  (both operands of ``add`` and ``multiply`` are tried in either order): scale-and-shift chains end as one multiply
  and one add, which FoldScaleAxis can move into a convolution;
* in ``cast(...cast(clip(x, lo, hi))...)`` a cast to a dtype that holds all of ``[lo, hi]`` loses nothing and goes;
  a ``clip`` whose bounds hold every value of its dtype goes;
* ``argmax``/``argmin``/``argsort`` of ``qnn.dequantize(x, scale, zp)`` read ``x`` directly: a positive scale keeps
  the order (TVM does not check the scale's sign; kiln requires a positive constant).
"""

import numpy as np

from ...ir.op import Op, list_op_names
from .. import op as _op
from ..expr import Call, Constant, const
from ..op.op import OpPattern
from .simplify_expr import RULES, _is_op

_FULLS = ("full", "full_like", "ones", "ones_like", "zeros", "zeros_like")


def _scalar_of_full(full):
    """The scalar constant a full/ones/zeros call fills with, in the dtype it produces; None when not known."""
    dtype = full.checked_type.dtype
    name = full.op.name
    if name in ("ones", "ones_like", "zeros", "zeros_like"):
        return const(np.array(1 if name.startswith("ones") else 0, dtype=dtype), dtype=dtype)
    value = full.args[0] if name == "full" else full.args[1]
    if not isinstance(value, Constant) or value.data.handle.size != 1:
        return None
    return const(np.asarray(value.data.handle.reshape(()), dtype=dtype), dtype=dtype)


def simplify_full_elementwise(call):
    """op(full(c), x) -> op(c, x) (and op(x, full(c)) -> op(x, c)) when x has the result's type."""
    if len(call.args) != 2:
        return None
    for index in (0, 1):
        full, other = call.args[index], call.args[1 - index]
        if _is_op(full, *_FULLS) and other.checked_type_ == call.checked_type_:
            value = _scalar_of_full(full)
            if value is None:
                return None
            args = (value, other) if index == 0 else (other, value)
            return Call(call.op, args, call.attrs, span=call.span)
    return None


for _name in list_op_names():
    if Op.get(_name).get_attr("TOpPattern") == OpPattern.BROADCAST:
        RULES.register(_name)(simplify_full_elementwise)


def _operand_orders(call):
    """The (first, second) operand pairs a commutative call may be read as."""
    a, b = call.args
    return ((a, b), (b, a))


def _fold(op_name, c1, c2):
    """The constant ``c1 op c2``, in c1's dtype."""
    lhs, rhs = c1.data.handle, c2.data.handle
    value = np.multiply(lhs, rhs) if op_name == "multiply" else np.add(lhs, rhs)
    return const(np.asarray(value, dtype=lhs.dtype), dtype=str(lhs.dtype))


def _non_constant_and_constant(call):
    """(x, c) when ``call`` is a binary call of a non-constant and a constant (either order), else None."""
    for x, c in _operand_orders(call):
        if isinstance(c, Constant) and not isinstance(x, Constant):
            return x, c
    return None


@RULES.register("multiply")
def simplify_switch_add_multiply(call):
    """(x + c1) * c2 -> x * c2 + c1 * c2, with the product of the constants folded."""
    for inner, c2 in _operand_orders(call):
        if isinstance(c2, Constant) and _is_op(inner, "add"):
            found = _non_constant_and_constant(inner)
            if found is not None:
                x, c1 = found
                return _op.add(_op.multiply(x, c2), _fold("multiply", c1, c2))
    return None


@RULES.register("multiply", "add")
def simplify_adjacent_multiply_or_add(call):
    """(x * c1) * c2 -> x * (c1 * c2); (x + c1) + c2 -> x + (c1 + c2)."""
    name = call.op.name
    for inner, c2 in _operand_orders(call):
        if isinstance(c2, Constant) and _is_op(inner, name):
            found = _non_constant_and_constant(inner)
            if found is not None:
                x, c1 = found
                return Call(call.op, (x, _fold(name, c1, c2)), call.attrs, span=call.span)
    return None


@RULES.register("argmax", "argmin", "argsort")
def simplify_dequantize_arg(call):
    """argmax(dequantize(x, scale, zp)) -> argmax(x) for a positive constant scale (argmin, argsort likewise)."""
    dq = call.args[0]
    if not _is_op(dq, "qnn.dequantize"):
        return None
    scale = dq.args[1]
    if not isinstance(scale, Constant) or not bool(np.all(scale.data.handle > 0)):
        return None
    return Call(call.op, (dq.args[0],), call.attrs, span=call.span)


def _dtype_range(dtype: str):
    """``(lowest, highest)`` value of ``dtype``, or None for dtypes numpy does not know (bfloat16) and bool."""
    try:
        kind = np.dtype(dtype)
    except TypeError:
        return None
    if kind.kind in "iu":
        info = np.iinfo(kind)
        return float(info.min), float(info.max)
    if kind.kind == "f":
        finfo = np.finfo(kind)
        return float(finfo.min), float(finfo.max)
    return None


def _exact_integers(dtype: np.dtype) -> float:
    """The largest magnitude below which ``dtype`` holds every integer exactly."""
    return float(2 ** (np.finfo(dtype).nmant + 1)) if dtype.kind == "f" else float(np.iinfo(dtype).max)


@RULES.register("cast")
def simplify_clip_and_consecutive_cast(call):
    """cast(...cast(clip(x, lo, hi))...) -> only the casts that change a value in [lo, hi], then one cast to the
    result's dtype if the last of them does not give it.

    TVM drops every cast whose dtype's range holds [lo, hi]; that is wrong for a float clip (a cast to an integer
    truncates 1.5 whatever its range) and for float narrowing (precision), so each cast is judged on the values that
    reach it: integer -> wider integer, or -> a float holding those integers exactly, and float -> wider float change
    nothing; a truncation to an integer dtype holding [lo, hi] gives the same values as a later truncation to another
    such dtype, so only the last of a run of those is kept (TVM's ``clip -> uint8 -> int16 -> int32`` becoming
    ``clip -> int32`` on float input)."""
    casts = []
    node = call
    while _is_op(node, "cast"):
        casts.append(node)
        node = node.args[0]
    if not _is_op(node, "clip"):
        return None
    try:
        current = np.dtype(node.checked_type.dtype)
        chain = [np.dtype(c.checked_type.dtype) for c in reversed(casts)]
    except TypeError:
        return None  # bfloat16 and other dtypes numpy does not know
    lo, hi = np.floor(float(node.attrs.a_min)), np.ceil(float(node.attrs.a_max))
    kept: list = []
    last_is_truncation = False
    for dtype in chain:
        if dtype.kind not in "iuf" or current.kind not in "iuf":
            kept.append(dtype)  # bool: a cast to it or from it is kept as written
            last_is_truncation = False
            lo, hi = (0.0, 1.0) if dtype.kind == "b" else _dtype_range(dtype.name) or (lo, hi)
            current = dtype
            continue
        bounds = _dtype_range(dtype.name)
        holds = bounds[0] <= lo and hi <= bounds[1]
        if dtype.kind in "iu" and holds and last_is_truncation:
            kept[-1] = current = dtype  # truncating to this dtype gives what truncating to the previous one gave
            continue
        if current.kind in "iu" and holds and max(-lo, hi) <= _exact_integers(dtype):
            continue  # integers in range stay the same integers
        if current.kind == "f" and dtype.kind == "f" and holds and dtype.itemsize >= current.itemsize:
            continue  # a wider float holds every value
        if not holds:
            lo, hi = bounds  # values wrap or saturate anywhere in the new dtype
        last_is_truncation = current.kind == "f" and dtype.kind in "iu" and holds
        kept.append(dtype)
        current = dtype
    result_dtype = np.dtype(call.checked_type.dtype)
    if (kept[-1] if kept else np.dtype(node.checked_type.dtype)) != result_dtype:
        kept.append(result_dtype)
    if kept == chain:
        return None  # nothing to drop
    result = node
    for dtype in kept:
        result = _op.cast(result, dtype.name)
    return result


@RULES.register("clip")
def simplify_clip(call):
    """clip(x, lo, hi) -> x when [lo, hi] holds every value of x's dtype (a clip to [0, 255] after a cast to uint8)."""
    if _is_op(call.args[0], "qnn.requantize", "qnn.add"):
        return None  # kept for the DNNL legalization that looks for this structure, as TVM does
    bounds = _dtype_range(call.checked_type.dtype)
    if bounds is None:
        return None
    return call.args[0] if call.attrs.a_min <= bounds[0] and call.attrs.a_max >= bounds[1] else None


def _product_factors(term):
    """``(u, v, coefficient)`` when ``term`` is ``u * v`` times at most one scalar constant (TVM's SimplifyBinomial
    term patterns ``c * (u * v)``, ``u * (c * v)``, ``u * v``, either operand order), else None."""
    if not _is_op(term, "multiply"):
        return None
    for p, q in _operand_orders(term):
        if _is_scalar_constant(p) and _is_op(q, "multiply") and not any(isinstance(a, Constant) for a in q.args):
            return q.args[0], q.args[1], p
    for p, q in _operand_orders(term):
        if _is_op(q, "multiply") and not isinstance(p, Constant):
            for c, v in _operand_orders(q):
                if _is_scalar_constant(c) and not isinstance(v, Constant):
                    return p, v, c
    p, q = term.args
    if isinstance(p, Constant) or isinstance(q, Constant):
        return None
    return p, q, None


def _is_scalar_constant(expr) -> bool:
    return isinstance(expr, Constant) and expr.data.handle.size == 1


def _coefficient(c) -> float:
    return 1.0 if c is None else float(c.data.handle.reshape(()))


@RULES.register("add")
def simplify_binomial(call):
    """a*x*x + b*x*y + c*y*y (any order of terms and factors) -> a * (x + p*y) * (x + q*y), p and q the roots of
    a*t*t - b*t + c (one factor, used twice, for a double root); a negative discriminant leaves it alone."""
    for inner, third in _operand_orders(call):
        if not _is_op(inner, "add"):
            continue
        terms = [_product_factors(t) for t in (*inner.args, third)]
        if any(t is None for t in terms):
            continue
        squares = [t for t in terms if t[0] is t[1]]
        cross = [t for t in terms if t[0] is not t[1]]
        if len(squares) != 2 or len(cross) != 1 or squares[0][0] is squares[1][0]:
            continue
        x, y = squares[0][0], squares[1][0]
        if {id(cross[0][0]), id(cross[0][1])} != {id(x), id(y)}:
            continue
        a, b, c = _coefficient(squares[0][2]), _coefficient(cross[0][2]), _coefficient(squares[1][2])
        return _binomial_product(x, y, a, b, c, call.checked_type.dtype)
    return None


def _binomial_product(x, y, a, b, c, dtype):
    if c == 1 and a > 1:  # put the variable whose square has coefficient 1 first, as TVM does
        x, y, a, c = y, x, c, a
    disc = b * b - 4 * a * c
    if disc < 0 or a == 0:
        return None

    def scalar(v):
        return const(np.asarray(v).astype(dtype), dtype=dtype)

    root = np.sqrt(disc)
    first = _op.add(x, _op.multiply(y, scalar((b + root) / (2 * a))))
    second = first if disc < 1e-4 else _op.add(x, _op.multiply(y, scalar((b - root) / (2 * a))))
    return _op.multiply(scalar(a), _op.multiply(first, second))
