"""Checks of integer-constraint transformations by exhaustive evaluation (TVM's
``tvm.testing.check_bool_expr_is_true`` and ``check_int_constraints_trans_consistency``).

TVM compiles a kernel over the box of the variables' ranges; kiln evaluates the condition with numpy over the same
box at once (every variable a broadcast axis), so a check over four variables of 41 values each is one vectorized
pass.
"""

import numpy as np

from ..error import KilnError
from ..tir import expr as E
from ..tir import op as _op
from ..tir.stmt_functor import substitute

_BINARY = {E.Add: np.add, E.Sub: np.subtract, E.Mul: np.multiply, E.Min: np.minimum, E.Max: np.maximum,
           E.EQ: np.equal, E.NE: np.not_equal, E.LT: np.less, E.LE: np.less_equal, E.GT: np.greater,
           E.GE: np.greater_equal, E.And: np.logical_and, E.Or: np.logical_or}


def _divisor(b):
    return np.where(b == 0, 1, b)  # division by zero happens only where the condition does not care


def evaluate_on_grid(expr, env):
    """``expr`` evaluated with numpy, each variable bound to an array in ``env`` (``{id(var): array}``)."""
    kind = type(expr)
    if kind is E.IntImm or kind is E.FloatImm:
        return np.int64(expr.value) if kind is E.IntImm else np.float64(expr.value)
    if isinstance(expr, E.Var):
        if id(expr) not in env:
            raise KilnError(f"check_bool_expr_is_true: the variable {expr.name_hint} has no range")
        return env[id(expr)]
    if kind in _BINARY:
        return _BINARY[kind](evaluate_on_grid(expr.a, env), evaluate_on_grid(expr.b, env))
    if kind in (E.FloorDiv, E.FloorMod, E.Div, E.Mod):
        a, b = evaluate_on_grid(expr.a, env), evaluate_on_grid(expr.b, env)
        d = _divisor(b)
        if kind is E.FloorDiv:
            return np.floor_divide(a, d)
        if kind is E.FloorMod:
            return np.mod(a, d)
        q = np.trunc(np.true_divide(a, d)).astype(np.int64)
        return q if kind is E.Div else a - q * d
    if kind is E.Not:
        return np.logical_not(evaluate_on_grid(expr.a, env))
    if kind is E.Select:
        return np.where(evaluate_on_grid(expr.condition, env), evaluate_on_grid(expr.true_value, env),
                        evaluate_on_grid(expr.false_value, env))
    if kind is E.Cast:
        return evaluate_on_grid(expr.value, env)
    raise KilnError(f"check_bool_expr_is_true: cannot evaluate {kind.__name__} ({expr})")


def check_bool_expr_is_true(bool_expr, vranges, cond=None):
    """Raise AssertionError unless ``bool_expr`` holds, wherever ``cond`` does, for every value of the variables
    in ``vranges`` (``{Var: Range}`` with constant ranges)."""
    if cond is not None:
        bool_expr = _op.logical_or(_op.logical_not(cond), bool_expr)
    items = list(vranges.items())
    axes = np.meshgrid(*(np.arange(int(r.min), int(r.min) + int(r.extent), dtype=np.int64) for _, r in items),
                       indexing="ij", sparse=True) if items else []
    env = {id(v): axis for (v, _), axis in zip(items, axes, strict=True)}
    result = np.broadcast_to(evaluate_on_grid(E.convert(bool_expr), env),
                             tuple(int(r.extent) for _, r in items))
    if not np.all(result):
        where = np.argwhere(~np.asarray(result, dtype=bool))[0] if items else ()
        point = {v.name_hint: int(r.min) + int(k) for (v, r), k in zip(items, where, strict=True)}
        raise AssertionError(f"{bool_expr} does not hold at {point}")


def check_int_constraints_trans_consistency(constraints_trans, vranges=None):
    """Check that an IntConstraintsTransform is a bijection between its systems: mapping a solution of either
    system over and back gives it again, and it satisfies the other system's relations and ranges."""
    from ..arith import Analyzer

    vranges = dict(vranges or {})

    def forward(c1, c2, varmap, backvarmap):
        ana = Analyzer()
        ranges = dict(vranges)
        ranges.update(c1.ranges)
        same = _op.const(True)
        for v in c1.variables:
            if v in varmap:
                same = _op.logical_and(same, _op.equal(v, ana.simplify(substitute(varmap[v], backvarmap))))
        holds = substitute(_op.all(*c2.relations), backvarmap)
        for v in c2.variables:
            if v in c2.ranges:
                r = c2.ranges[v]
                in_range = _op.logical_and(_op.greater_equal(v, r.min), _op.less(v, _op.add(r.min, r.extent)))
                holds = _op.logical_and(holds, substitute(in_range, backvarmap))
        check_bool_expr_is_true(_op.logical_and(ana.simplify(holds), same), ranges, cond=_op.all(*c1.relations))

    forward(constraints_trans.src, constraints_trans.dst, constraints_trans.src_to_dst, constraints_trans.dst_to_src)
    forward(constraints_trans.dst, constraints_trans.src, constraints_trans.dst_to_src, constraints_trans.src_to_dst)
