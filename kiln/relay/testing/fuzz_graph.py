"""Random well-typed Relay graphs over every dtype, for the differential fuzzer (:mod:`kiln.relay.testing.fuzz`).

A :class:`GraphGenerator` grows a pool of :class:`~kiln.relay.testing.fuzz_values.Value` s from fresh inputs
(variables, parameters bound at build time, constants) by applying random operators (:mod:`.fuzz_ops`) to pool
members, converting an operand to the dtype an operator needs with ``cast`` where possible, then returns a few of the
newest values as a tuple. With ``control_flow``, outputs are often folded over a counted loop written as a recursive
global function whose trip count is a run-time input, and the tuple is often chosen between two by an ``If`` on a
run-time condition (only the VM runs those). The dtypes each operator accepts come from the operator registry (the
same table its type relation checks); the guards of :mod:`.fuzz_values` keep every result defined. Everything is
drawn from one ``numpy.random.Generator`` seeded by the graph's seed, so a seed replays its graph and inputs exactly.
"""

import math

import numpy as np

from ...ir.expr import GlobalVar
from ...ir.op import Op
from ...ir.type import TensorType
from .. import op as _op
from ..expr import Call, If, Tuple, const, var
from ..expr_functor import post_order_visit
from ..function import Function
from .fuzz_values import Value, converted, dtype_range, kind, random_values, result

CORE_DTYPES = ("bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64")
MORE_DTYPES = ("int16", "uint16", "uint32", "uint64")
"""The dtypes the issue's fuzzer mixed, then the other integer types Relay operators accept (drawn less often)."""
WEIGHTS = {"bool": 4, "int8": 3, "uint8": 3, "int32": 2, "int64": 3, "float16": 3, "float32": 2, "float64": 2}
"""How often each dtype is drawn (others: 1): float32 is what everything else is tested in already."""


def accepted(op_name, argument=0):
    """The dtypes argument ``argument`` of ``op_name`` accepts (the registered ``dtypes``)."""
    per_argument = Op.get(op_name).get_attr("dtypes")
    return per_argument[min(argument, len(per_argument) - 1)]


class GraphGenerator:
    """Builds one random graph with :meth:`generate`."""

    def __init__(self, seed, max_ops=12, control_flow=False):
        self.rng = np.random.default_rng(seed)
        self.max_ops = max_ops
        self.control_flow = control_flow
        self.pool: list = []
        self.inputs: dict = {}  # name -> numpy value of a graph input
        self.params: dict = {}  # name -> numpy value bound with relay.build(params=...)
        self.variables: list = []
        self.globals: dict = {}  # GlobalVar -> Function: the loops of control flow

    # ---- random choices
    def chance(self, p) -> bool:
        return bool(self.rng.random() < p)

    def integer(self, lo, hi) -> int:
        """An int from ``lo`` to ``hi``, both included."""
        return int(self.rng.integers(lo, hi + 1))

    def choice(self, options):
        options = list(options)
        return options[int(self.rng.integers(len(options)))]

    def dtype(self, options) -> str:
        options = [d for d in options if d in CORE_DTYPES + MORE_DTYPES]
        weights = np.array([WEIGHTS.get(d, 1.0) for d in options])
        return options[int(self.rng.choice(len(options), p=weights / weights.sum()))]

    def shape(self, rank=None) -> tuple:
        rank = int(self.rng.choice([0, 1, 2, 3, 4], p=[0.05, 0.25, 0.35, 0.25, 0.1])) if rank is None else rank
        return tuple(int(d) for d in self.rng.integers(1, 5, rank))

    # ---- leaves
    def fresh(self, shape, dtype) -> Value:
        """A new input, parameter or constant of ``shape``/``dtype`` with random elements."""
        k = kind(dtype)
        low, high = dtype_range(dtype)
        lo, hi, grid = 0, 1, 0
        if k == "f":  # quarters (sums and products exact), 8 fraction bits (float16 rounds), or integers
            lo, hi, grid = self.choice([(-4, 4, 2), (-4, 4, 2), (-4, 4, 8), (-64, 64, 0)])
        elif k != "b":
            wide = self.chance(0.6 if high < 2**31 else 0.2)  # 8- and 16-bit values should wrap around
            lo, hi = (low, high) if wide and not dtype.endswith("64") else (max(low, -40), min(high, 40))
            if wide and dtype == "int64" and self.chance(0.5):
                lo, hi = -(2**40), 2**40 + 1  # beyond float32 and int32
        values = random_values(self.rng, shape, dtype, lo, hi, grid)
        name = f"v{len(self.variables)}"
        role = self.choice(["input", "input", "param", "const"])
        if role == "const":
            expr = const(values, dtype)
        else:
            expr = var(name, shape=shape, dtype=dtype)
            self.variables.append(expr)
            (self.params if role == "param" else self.inputs)[name] = values
        if k == "f":
            return result(dtype, shape, expr, float(lo), float(hi), grid=grid)
        return result(dtype, shape, expr, lo, hi)

    # ---- operands
    def operand(self, dtypes, rank=None, shape=None, exact=False, finite=False) -> Value:
        """A pool value (or a fresh one) of one of ``dtypes``, converted with ``cast`` if need be; of ``rank`` or
        ``shape`` when given; ``exact``: floats computed without rounding; ``finite``: no NaN or infinity."""
        def fits(v):
            return ((rank is None or len(v.shape) == rank) and (shape is None or v.shape == tuple(shape))
                    and (not exact or v.exact) and (not finite or (not v.nan and math.isfinite(v.magnitude))))

        dtype = self.dtype(dtypes)  # drawn first, so every operator sees every dtype it takes
        candidates = [v for v in self.pool[-6:] if fits(v)]
        if candidates and self.chance(0.85):
            # the newest value half the time: long chains of operators fuse into one kernel
            v = candidates[-1] if self.chance(0.5) else self.choice(candidates)
            same = [u for u in candidates if u.dtype == dtype]
            if v.dtype in dtypes and self.chance(0.5):
                dtype = v.dtype
            elif v.dtype != dtype and same and self.chance(0.5):
                v = same[-1]
            cast = converted(v, dtype)  # a conversion on the way: dtypes mix
            if cast is not None and fits(cast):
                return cast
        return self.fresh(tuple(shape) if shape is not None else self.shape(rank), dtype)

    def partner(self, v, dtypes=None, exact=False) -> Value:
        """A second operand for ``v``: broadcast-compatible, of ``v``'s dtype unless ``dtypes`` says otherwise."""
        dtypes = dtypes or (v.dtype,)
        compatible = [u for u in self.pool[-6:] if u is not v and _broadcastable(u.shape, v.shape)
                      and (not exact or u.exact)]
        if compatible and self.chance(0.6):
            u = self.choice(compatible)
            if u.dtype not in dtypes:
                u = converted(u, v.dtype if v.dtype in dtypes else self.dtype(dtypes))
            if u is not None and (not exact or u.exact):
                return u
        shape = list(v.shape)
        for axis in range(len(shape)):
            if self.chance(0.3):
                shape[axis] = 1
        drop = int(self.rng.integers(0, len(shape) + 1)) if self.chance(0.3) else 0
        return self.fresh(tuple(shape[drop:]), v.dtype if v.dtype in dtypes else self.dtype(dtypes))

    def reshaped(self, v, rank) -> Value:
        """``v`` reshaped to ``rank`` dimensions (leading 1s, or its leading dimensions merged)."""
        if len(v.shape) == rank:
            return v
        if len(v.shape) < rank:
            shape = (1,) * (rank - len(v.shape)) + v.shape
        else:
            shape = (math.prod(v.shape[: len(v.shape) - rank + 1]),) + v.shape[len(v.shape) - rank + 1:]
        return v.with_expr(_op.reshape(v.expr, shape), shape=shape)

    # ---- the graph
    def _sinks(self) -> list:
        """The newest value and every value no later one uses (at most 6 in all): nothing computed is dead."""
        outputs = [self.pool[-1]]
        used = _used([v.expr for v in self.pool[-1:]])
        for v in reversed(self.pool[:-1]):
            if v.expr not in used and len(outputs) < 6:
                outputs.insert(0, v)
                used |= _used([v.expr])
        return outputs

    def generate(self):
        """``(relay.Function, inputs, params, exact)``: inputs and params map variable names to numpy values;
        ``exact`` says of each output whether it must match the reference exactly (else within rounding)."""
        from .fuzz_ops import RECIPES  # the operator recipes use this module's generator

        names = list(RECIPES)
        weights = np.array([RECIPES[n][0] for n in names], dtype=float)
        steps = int(self.rng.integers(self.max_ops // 3, self.max_ops + 1))
        attempts = 0
        while steps and attempts < 20 * self.max_ops:
            attempts += 1
            recipe = RECIPES[names[int(self.rng.choice(len(names), p=weights / weights.sum()))]][1]
            made = recipe(self)
            if made is not None:
                self.pool.append(made)
                steps -= 1
        if not self.pool:
            self.pool.append(self.fresh(self.shape(), self.dtype(CORE_DTYPES)))
        outputs = self._sinks()
        body = outputs[0].expr if len(outputs) == 1 and self.chance(0.5) else Tuple([v.expr for v in outputs])
        if self.control_flow and self.chance(0.4):
            outputs = [self._dynamic(v) for v in outputs]
            body = Tuple([v.expr for v in outputs]) if isinstance(body, Tuple) else outputs[0].expr
        exact = [v.exact for v in outputs]
        if self.control_flow and self.chance(0.5):
            outputs = [self._looped(v) for v in outputs]
            body = Tuple([v.expr for v in outputs]) if isinstance(body, Tuple) else outputs[0].expr
        if self.control_flow and self.chance(0.6):
            body, exact = self._branched(outputs, body)
        return Function(list(self.variables), body), self.inputs, self.params, exact

    def _dynamic(self, v) -> Value:
        """``v`` through a ``dyn.*`` operator half the time (:func:`.fuzz_ops_dyn.dynamic_shapes`), else itself."""
        from .fuzz_ops_dyn import dynamic_shapes

        made = dynamic_shapes(self, v) if self.chance(0.5) else None
        return v if made is None else made

    def _looped(self, v) -> Value:
        """``@loop(n, v, step)`` with ``@loop(i, acc, step) = if (i > 0) { @loop(i - 1, combine(acc, step), step) }
        else { acc }``: a loop written as recursion (a tail call), ``n`` an int32 input from 0 to 3, ``combine`` the
        maximum or minimum (logical or/and for bool), which keep every value defined and exact; ``v`` itself when
        the pool has no partner of its type."""
        partners = [u for u in self.pool if u.shape == v.shape and u.dtype == v.dtype and u.exact and not u.nan]
        if not partners or not v.exact or v.nan or not self.chance(0.6):
            return v
        step = self.choice(partners)
        ttype = TensorType(v.shape, v.dtype)
        loop = GlobalVar(f"loop{len(self.globals)}")
        i, acc, s = var("i", shape=(), dtype="int32"), var("acc", ttype), var("step", ttype)
        combine = (_op.logical_or if self.chance(0.5) else _op.logical_and) if v.dtype == "bool" else \
            (_op.maximum if self.chance(0.5) else _op.minimum)
        again = Call(loop, [_op.subtract(i, const(1, "int32")), combine(acc, s), s])
        self.globals[loop] = Function([i, acc, s], If(_op.greater(i, const(0, "int32")), again, acc), ttype)
        name = f"v{len(self.variables)}"
        count = var(name, shape=(), dtype="int32")
        self.variables.append(count)
        self.inputs[name] = np.array(int(self.rng.integers(0, 4)), "int32")
        lo, hi = min(v.lo, step.lo), max(v.hi, step.hi)
        return v.with_expr(Call(loop, [count, v.expr, step.expr]), lo=lo, hi=hi, grid=max(v.grid, step.grid))

    def _branched(self, outputs, body):
        """``if cond: body else: alternatives``, ``cond`` a bool input known only at run time (the graph then
        needs the VM); each alternative output is another pool value of the same type (or the same one)."""
        name = f"v{len(self.variables)}"
        cond_var = var(name, shape=(), dtype="bool")
        self.variables.append(cond_var)
        self.inputs[name] = np.array(self.chance(0.5))
        cond = _op.logical_not(cond_var) if self.chance(0.3) else cond_var
        others = []
        for v in outputs:
            same = [u for u in self.pool if u is not v and u.shape == v.shape and u.dtype == v.dtype]
            others.append(self.choice(same) if same and self.chance(0.8) else v)
        other_body = Tuple([u.expr for u in others]) if isinstance(body, Tuple) else others[0].expr
        exact = [v.exact and u.exact for v, u in zip(outputs, others, strict=True)]
        return If(cond, body, other_body), exact


def _used(exprs) -> set:
    seen: set = set()
    for expr in exprs:
        post_order_visit(expr, lambda node: seen.add(node))
    return seen


def _broadcastable(a, b) -> bool:
    """Whether ``a`` broadcasts against ``b`` without growing ``b`` (the result has ``b``'s shape)."""
    if len(a) > len(b):
        return False
    return all(x in (1, y) for x, y in zip(a[::-1], b[::-1], strict=False))  # the shorter shape broadcasts
