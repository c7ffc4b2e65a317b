"""``PrimFunc.specialize``: bind some parameters of a PrimFunc to values (TVM's ``tir.Specialize``).

``param_map`` maps a scalar parameter to a PrimExpr (the parameter leaves the signature and its uses become the
value), or a buffer parameter to a Buffer: then each variable of the function's buffer (its data, and the shape,
strides and offset entries that are plain variables) is bound to the matching entry of the given buffer, which must
agree with any constant entry. The body is rebuilt with TIR's builders, so the constants that appear fold
(``m * 128`` with ``m = 2`` becomes ``256``), and every buffer whose shape used a bound variable is rebuilt.
"""

from ..error import TIRError
from . import expr as E
from . import op as _op
from . import stmt as S
from .buffer import Buffer
from .expr_reduce import IterVar, Range
from .functor import StmtExprMutator
from .stmt_block import BufferRegion, MatchBufferRegion

_BUILDERS = {
    "visit_add": _op.add, "visit_sub": _op.subtract, "visit_mul": _op.multiply, "visit_div": _op.div,
    "visit_mod": _op.truncmod, "visit_floor_div": _op.floordiv, "visit_floor_mod": _op.floormod,
    "visit_min": _op.minimum, "visit_max": _op.maximum, "visit_eq": _op.equal, "visit_ne": _op.not_equal,
    "visit_lt": _op.less, "visit_le": _op.less_equal, "visit_gt": _op.greater, "visit_ge": _op.greater_equal,
    "visit_and": _op.logical_and, "visit_or": _op.logical_or,
}


def _folding(builder):
    def visit(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        return op if a is op.a and b is op.b else builder(a, b)

    return visit


class Specializer(StmtExprMutator):
    """Replaces bound variables, folding constants, and rebuilds the buffers that change."""

    locals().update({name: _folding(fn) for name, fn in _BUILDERS.items()})

    def __init__(self, var_map):
        self.var_map = var_map
        self.buffers: dict = {}

    def visit_var(self, op):
        return self.var_map.get(op, op)

    def visit_size_var(self, op):
        return self.var_map.get(op, op)

    def buffer(self, buf):
        entry = self.buffers.get(id(buf))
        if entry is None:
            data = self.var_map.get(buf.data, buf.data)
            entry = self.buffers[id(buf)] = (buf, buf.with_fields(
                data=data, shape=tuple(self.visit_expr(x) for x in buf.shape),
                strides=tuple(self.visit_expr(x) for x in buf.strides), elem_offset=self.visit_expr(buf.elem_offset)))
        return entry[1]

    def region(self, r):
        ranges = tuple(Range.from_min_extent(self.visit_expr(x.min), self.visit_expr(x.extent)) for x in r.region)
        buf = self.buffer(r.buffer)
        if buf is r.buffer and all(a.min is b.min and a.extent is b.extent for a, b in zip(ranges, r.region,
                                                                                          strict=True)):
            return r
        return BufferRegion(buf, ranges)

    def visit_buffer_load(self, op):
        indices = tuple(self.visit_expr(i) for i in op.indices)
        buf = self.buffer(op.buffer)
        if buf is op.buffer and all(a is b for a, b in zip(indices, op.indices, strict=True)):
            return op
        return E.BufferLoad(buf, indices)

    def visit_buffer_store(self, op):
        value, indices = self.visit_expr(op.value), tuple(self.visit_expr(i) for i in op.indices)
        buf = self.buffer(op.buffer)
        if buf is op.buffer and value is op.value and all(a is b for a, b in zip(indices, op.indices, strict=True)):
            return op
        return S.BufferStore(buf, value, indices)

    def visit_decl_buffer(self, op):
        return op.with_fields(buffer=self.buffer(op.buffer), body=self.visit_stmt(op.body))

    def iter_var(self, iv):
        lo, extent = self.visit_expr(iv.dom.min), self.visit_expr(iv.dom.extent)
        if lo is iv.dom.min and extent is iv.dom.extent:
            return iv
        return IterVar(Range.from_min_extent(lo, extent), iv.var, iv.iter_type, iv.thread_tag)

    def visit_block(self, op):
        iter_vars = tuple(self.iter_var(iv) for iv in op.iter_vars)
        return op.with_fields(
            iter_vars=iter_vars, reads=tuple(self.region(r) for r in op.reads),
            writes=tuple(self.region(r) for r in op.writes),
            alloc_buffers=tuple(self.buffer(b) for b in op.alloc_buffers),
            match_buffers=tuple(MatchBufferRegion(self.buffer(m.buffer), self.region(m.source))
                                for m in op.match_buffers),
            init=self.visit_stmt(op.init) if op.init is not None else None, body=self.visit_stmt(op.body))


def _bind_buffer(func, param, given, var_map):
    from .analysis import expr_deep_equal

    own = func.buffer_map.get(param)
    if own is None:
        raise TIRError(f"specialize: {param.name_hint} is not a buffer parameter of the function")
    if len(own.shape) != len(given.shape) or len(own.strides) != len(given.strides):
        raise TIRError(f"specialize: buffer {own.name} has {len(own.shape)} dimensions and {len(own.strides)} "
                       f"strides, the given buffer {len(given.shape)} and {len(given.strides)}")
    pairs = [(given.data, own.data), *zip(given.shape, own.shape, strict=True),
             *zip(given.strides, own.strides, strict=True), (given.elem_offset, own.elem_offset)]
    for new, old in pairs:
        if expr_deep_equal(new, old):
            continue
        if not isinstance(old, E.Var):
            raise TIRError(f"specialize: buffer {own.name} has {old} where the given buffer has {new}; only a "
                           "plain variable can be bound")
        if old in var_map and not expr_deep_equal(var_map[old], new):
            raise TIRError(f"specialize: {old.name_hint} bound to both {var_map[old]} and {new}")
        var_map[old] = new
    if given.data_alignment != own.data_alignment or given.offset_factor != own.offset_factor:
        raise TIRError(f"specialize: buffer {own.name} differs from the given buffer in alignment or offset factor")


def specialize(func, param_map):
    """``func`` with the parameters of ``param_map`` bound (see the module docstring)."""
    var_map: dict = {}
    for param, value in param_map.items():
        if not any(p is param for p in func.params):
            raise TIRError(f"specialize: {getattr(param, 'name_hint', param)} is not a parameter of the function")
        if isinstance(value, Buffer):
            _bind_buffer(func, param, value, var_map)
        elif param in func.buffer_map:
            raise TIRError(f"specialize: buffer parameter {param.name_hint} needs a Buffer, got {value!r}")
        else:
            var_map[param] = E.convert(value, param.dtype)
    if not var_map:
        return func
    mutator = Specializer(var_map)
    buffer_map = {p: mutator.buffer(b) for p, b in func.buffer_map.items()}
    body = mutator.visit_stmt(func.body)
    params = [p for p in func.params if p not in var_map]
    return type(func)(params, body, func.ret_type, buffer_map, func.attrs)
