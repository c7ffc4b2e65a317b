"""Features of a candidate for the cost model (TVM's ``autotvm/feature.py``), from its lowered TIR.

The candidate's schedule is turned into its loop nest (``schedule_to_prim_func``: bound inference and the loop
nest, before the TIR passes, so the loops still carry their kinds, as TVM's itervar features see them; the passes
would cost a second per candidate) and walked, each statement seen with the loops around it. The ``itervar``
feature vector (fixed length, every entry a log-scaled count or a ratio) describes:

* the loop nest: depth, the extents of the three innermost loops, parallel loops and their extent, the unrolled
  extent around the innermost statements;
* vectorization: the widest vectorized loop, the share of executed statements that are in vectorized loops;
* memory per level: loads and stores executed in total and in the innermost body, bytes they touch, and the size
  of the local (register-tile) buffers;
* arithmetic intensity: arithmetic operations per byte loaded, in total and innermost.

The knob values (:meth:`ConfigEntity.get_flatten_feature`) are appended, so candidates the loops do not tell apart
still differ. ``knob`` features are those values alone (cheap: nothing is lowered).
"""

import math

from ... import tir
from ...te.lower import schedule_to_prim_func
from ...tir.stmt_functor import children, post_order_visit

__all__ = ["get_itervar_feature", "get_knob_feature", "get_feature", "ITERVAR_LENGTH"]

_ARITH = (tir.Add, tir.Sub, tir.Mul, tir.Div, tir.Max, tir.Min)
ITERVAR_LENGTH = 20


def _lanes(dtype) -> int:
    text = str(dtype)
    return int(text.split("x")[1]) if "x" in text else 1


def _bytes(dtype) -> int:
    base = str(dtype).split("x")[0]
    digits = "".join(c for c in base if c.isdigit()) or "32"
    return max(1, int(digits) // 8) * _lanes(dtype)


def _const(expr, default=1) -> int:
    return int(expr.value) if isinstance(expr, tir.IntImm) else default


class _Walk:
    """Totals over the statements of a loop nest (see the module docstring)."""

    def __init__(self):
        self.loads = self.stores = self.vector_ops = self.arith = 0.0
        self.bytes = 0.0
        self.max_lanes = 1
        self.depth = 0
        self.parallel_loops = 0
        self.parallel_extent = 1
        self.unrolled = 1
        self.local_bytes = 0
        self.inner_extents = []
        self.inner_loads = self.inner_arith = 0

    def visit(self, node, loops):
        """Walk ``node`` inside ``loops`` (a list of ``(extent, kind)``)."""
        if isinstance(node, tir.For):
            extent = _const(node.extent)
            if node.kind == tir.ForKind.PARALLEL:
                self.parallel_loops += 1
                self.parallel_extent *= extent
            self.visit(node.body, loops + [(extent, node.kind)])
            return
        if isinstance(node, tir.Allocate):
            self.local_bytes += math.prod(_const(e) for e in node.extents) * _bytes(node.dtype)
        if isinstance(node, tir.BufferStore):
            self._store(node, loops)
            return
        for child in children(node):
            if isinstance(child, tir.Stmt):
                self.visit(child, loops)

    def _store(self, store, loops):
        count = math.prod(e for e, _ in loops) if loops else 1
        lanes = math.prod(e for e, k in loops if k == tir.ForKind.VECTORIZED)
        unrolled = math.prod(e for e, k in loops if k == tir.ForKind.UNROLLED)
        loads, arith = self._expr_counts(store)
        if len(loops) >= self.depth:
            self.depth = len(loops)
            self.inner_extents = [e for e, _ in loops[-3:]]
            self.inner_loads, self.inner_arith = loads, arith
        self.max_lanes = max(self.max_lanes, lanes)
        self.unrolled = max(self.unrolled, unrolled)
        self.stores += count
        self.loads += loads * count
        self.arith += arith * count
        self.bytes += (loads + 1) * count * _bytes(store.value.dtype)
        if lanes > 1:
            self.vector_ops += (loads + 1) * count

    @staticmethod
    def _expr_counts(store):
        counts = {"loads": 0, "arith": 0}

        def fvisit(node):
            if isinstance(node, tir.BufferLoad):
                counts["loads"] += 1
            elif isinstance(node, _ARITH):
                counts["arith"] += 1

        post_order_visit(store.value, fvisit)
        return counts["loads"], counts["arith"]


def _log(x) -> float:
    return math.log2(1.0 + max(0.0, float(x)))


def get_itervar_feature(task, config) -> list:
    """The ``itervar`` feature vector of ``config`` of ``task`` (module docstring), knob values appended."""
    s, tensors = task.instantiate(config)
    with task.target:
        func = schedule_to_prim_func(s, tensors, "features", None)
    walk = _Walk()
    walk.visit(func.body, [])
    extents = ([1, 1, 1] + list(walk.inner_extents))[-3:]
    features = [
        walk.depth, *(_log(e) for e in extents), walk.parallel_loops, _log(walk.parallel_extent),
        _log(walk.unrolled), _log(walk.inner_loads), _log(walk.inner_arith), _log(walk.max_lanes),
        walk.vector_ops / max(1.0, walk.loads + walk.stores), _log(walk.loads), _log(walk.stores),
        _log(walk.bytes), _log(walk.local_bytes), _log(walk.arith), walk.arith / max(1.0, walk.bytes),
        walk.inner_arith / max(1.0, walk.inner_loads), _log(walk.unrolled * walk.max_lanes), _log(task.flop),
    ]
    assert len(features) == ITERVAR_LENGTH
    return features + [float(v) for v in config.get_flatten_feature()]


def get_knob_feature(task, config) -> list:
    """The knob values of ``config`` as numbers."""
    return [float(v) for v in config.get_flatten_feature()]


def get_feature(task, config, feature_type="itervar") -> list:
    """The ``feature_type`` (``"itervar"`` or ``"knob"``) features of ``config`` of ``task``."""
    if feature_type == "knob":
        return get_knob_feature(task, config)
    return get_itervar_feature(task, config)
