"""The region of a buffer a statement touches (TVM's ``arith.DomainTouched``, ``domain_touched.cc``).

The statement is walked with each loop variable's range known; every load and/or store of the buffer contributes,
per dimension, the interval its index sweeps (a ``Ramp`` index its lanes' span); the region is the union of the
intervals of each dimension, as a Range.
"""

from ..error import TIRError
from ..runtime.container import Array
from ..tir import expr as E
from ..tir import op as _op
from ..tir.functor import StmtExprVisitor
from .int_set import IntSet, eval_set, union


class _Touches(StmtExprVisitor):
    def __init__(self, buffer, analyzer):
        super().__init__()
        self.buffer, self.ana = buffer, analyzer
        self.dom = {}
        self.loads, self.stores, self.combined = [], [], []
        self.seen = False

    def visit_for(self, op):
        self.visit_expr(op.min)
        self.visit_expr(op.extent)
        self.dom[op.loop_var] = E.Range.from_min_extent(op.min, op.extent)
        self.visit_stmt(op.body)

    def visit_buffer_load(self, op):
        if op.buffer is self.buffer:
            self._touch(self.loads, op.indices)
            self._touch(self.combined, op.indices)
        super().visit_buffer_load(op)

    def visit_buffer_store(self, op):
        if op.buffer is self.buffer:
            self._touch(self.stores, op.indices)
            self._touch(self.combined, op.indices)
        super().visit_buffer_store(op)

    def _touch(self, bounds, indices):
        self.seen = True
        while len(bounds) < len(indices):
            bounds.append([])
        for d, index in enumerate(indices):
            s = IntSet.vector(index) if isinstance(index, E.Ramp) else eval_set(index, self.dom, self.ana)
            bounds[d].append(s)


def domain_touched(stmt, buffer, consider_loads, consider_stores):
    """The Range of each dimension of ``buffer`` that ``stmt`` reads (``consider_loads``) and/or writes
    (``consider_stores``); an empty array when it does neither.

    Examples
    --------
    >>> region = domain_touched(func.body, func.buffer_map[func.params[0]], True, False)  # doctest: +SKIP
    """
    from .analyzer import Analyzer

    if not (consider_loads or consider_stores):
        raise TIRError("arith.DomainTouched: consider loads, stores or both")
    ana = Analyzer()
    walker = _Touches(buffer, ana)
    walker(stmt)
    if consider_loads and consider_stores:
        bounds = walker.combined
    else:
        bounds = walker.loads if consider_loads else walker.stores
    out = []
    for sets in bounds:
        s = union(sets)
        if not s.is_bounded():
            raise TIRError(f"arith.DomainTouched: the region of {buffer.name} is unbounded in a dimension")
        lo, hi = ana.simplify(s._min), ana.simplify(s._max)
        out.append(E.Range.from_min_extent(lo, ana.simplify(_op.subtract(_op.add(hi, 1), lo))))
    return Array(out)
