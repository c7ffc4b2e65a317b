"""TensorIR blocks in TVMScript: ``T.block``, ``T.axis.*``, ``T.reads/writes``, ``T.where``, ``T.init``,
``T.alloc_buffer``, ``T.block_attr``, buffer regions, and the completion TVM's ``ScriptComplete`` does.

Completion, as TVM's: a function whose body holds blocks gets a root block (``T.block("root")``) owning the buffers
allocated at function level; a block whose ``T.reads``/``T.writes`` were not written gets the regions its body
accesses, each index relaxed over the loops inside the block (``kiln.arith.estimate_region``).
"""

from ...error import TIRError
from ...tir import dtype as _dt
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.buffer import Buffer
from ...tir.expr_reduce import IterVar, IterVarType, Range
from ...tir.stmt_block import Block, BlockRealize, BufferRegion, MatchBufferRegion
from ...tir.transform.lower_opaque_block import has_block
from . import frames as F


class BlockFrame(F.Frame):
    """``with T.block(name):`` collects what the block's statements declare, then builds the BlockRealize."""

    def __init__(self, name, no_realize=False):
        self.name, self.no_realize = name, no_realize
        self.iter_vars: list = []
        self.iter_values: list = []
        self.reads = self.writes = None
        self.predicate = None
        self.init = None
        self.alloc_buffers: list = []
        self.match_buffers: list = []
        self.annotations: dict = {}

    def exit(self, body):
        F.pop(self)
        reads, writes = self.reads, self.writes
        if reads is None or writes is None:
            found_reads, found_writes = access_regions(body, self.init, self.alloc_buffers + [m.buffer for m in
                                                                                              self.match_buffers])
            reads = found_reads if reads is None else reads
            writes = found_writes if writes is None else writes
        block = Block(self.iter_vars, reads, writes, self.name, body, self.init, self.alloc_buffers,
                      self.match_buffers, self.annotations)
        if self.no_realize:
            return block
        return BlockRealize(self.iter_values, self.predicate, block)


class InitFrame(F.Frame):
    """``with T.init():`` the block's init statement (no statement in the block body)."""

    def exit(self, body):
        F.pop(self)
        F.current(BlockFrame, "T.init").init = body
        return None


def block(name="", no_realize=False):
    """A block named ``name`` (its statements declare axes, regions, allocations; see the module docstring)."""
    return BlockFrame(name, no_realize)


def init():
    """The init statement of the enclosing reduction block."""
    return InitFrame()


def _regions(args):
    out = []
    for a in args:
        if isinstance(a, list | tuple):
            out.extend(_regions(a))
        else:
            out.append(as_region(a))
    return out


def reads(*regions):
    """The regions the enclosing block reads."""
    F.current(BlockFrame, "T.reads").reads = _regions(regions)


def writes(*regions):
    """The regions the enclosing block writes."""
    F.current(BlockFrame, "T.writes").writes = _regions(regions)


def where(predicate):
    """Run the enclosing block only where ``predicate`` holds."""
    F.current(BlockFrame, "T.where").predicate = E.convert(predicate)


def block_attr(attrs):
    """Annotations of the enclosing block."""
    F.current(BlockFrame, "T.block_attr").annotations.update(attrs)


def alloc_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global", align=-1,
                 offset_factor=0, buffer_type="default", axis_separators=None):
    """A buffer allocated by the enclosing block (or by the function's root block)."""
    from .ops import _make_buffer

    buf = _make_buffer(F.take_name("buffer"), shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                       "" if buffer_type == "default" else buffer_type, axis_separators)
    frame = F.find(BlockFrame)
    if frame is not None:
        frame.alloc_buffers.append(buf)
    else:
        F.current(F.PrimFuncFrame, "T.alloc_buffer").root_alloc_buffers.append(buf)
    return buf


def record_match_buffer(buf, source):
    """``T.match_buffer(region)`` inside a block."""
    F.current(BlockFrame, "T.match_buffer of a region").match_buffers.append(MatchBufferRegion(buf, as_region(source)))
    return buf


class _Axis:
    """``T.axis``: declare the enclosing block's iteration variables and bind them."""

    @staticmethod
    def _declare(kind, dom, binding, dtype):
        frame = F.current(BlockFrame, "T.axis")
        binding = E.convert(binding)
        if isinstance(dom, Range):
            rng = dom
        elif isinstance(dom, tuple | list):
            rng = Range(*dom)
        else:
            dom = E.convert(dom, binding.dtype if dtype is None else dtype)
            rng = Range.from_min_extent(E.convert(0, dom.dtype), dom)
        # the widest of the domain's types and the requested one, as TVM's builder (an int64 domain gives int64)
        bits = max(_dt.DataType.parse(t).bits for t in (rng.min.dtype, rng.extent.dtype, dtype or "int32"))
        var = E.Var(F.take_name("v"), f"int{bits}")
        frame.iter_vars.append(IterVar(rng, var, kind))
        frame.iter_values.append(binding)
        return var

    def spatial(self, dom, binding, dtype="int32"):
        return self._declare(IterVarType.DataPar, dom, binding, dtype)

    def reduce(self, dom, binding, dtype="int32"):
        return self._declare(IterVarType.CommReduce, dom, binding, dtype)

    def scan(self, dom, binding, dtype="int32"):
        return self._declare(IterVarType.Ordered, dom, binding, dtype)

    def opaque(self, dom, binding, dtype="int32"):
        return self._declare(IterVarType.DimInfo, dom, binding, dtype)

    S = spatial
    R = reduce

    def remap(self, kinds, bindings, dtype="int32"):
        """``vi, vj, vk = T.axis.remap("SSR", [i, j, k])``: one axis per loop variable, over its loop's range."""
        if len(kinds) != len(bindings):
            raise TIRError(f"T.axis.remap: {len(kinds)} kinds for {len(bindings)} loop variables")
        out = []
        for kind, v in zip(kinds, bindings, strict=True):
            rng = F.loop_range(v) if isinstance(v, E.Var) else None
            if rng is None:
                raise TIRError(f"T.axis.remap: {v} is not the variable of an enclosing loop")
            iter_kind = {"S": IterVarType.DataPar, "R": IterVarType.CommReduce}.get(kind)
            if iter_kind is None:
                raise TIRError(f"T.axis.remap: kind {kind!r} is not S or R")
            out.append(self._declare(iter_kind, Range.from_min_extent(*rng), v, v.dtype))
        return out


axis = _Axis()


# ---- buffer subscripts
def buffer_subscript(buffer, indices):
    """``A[i, j]`` (a load), ``A[i, 0:4]`` (a region; a vector load where a value is needed)."""
    if any(isinstance(i, slice) for i in indices):
        ranges = []
        for i, dim in zip(indices, buffer.shape, strict=True):
            if isinstance(i, slice):
                start = E.convert(0, dim.dtype) if i.start is None else E.convert(i.start)
                stop = dim if i.stop is None else E.convert(i.stop, start.dtype)
                ranges.append(Range.from_min_extent(start, _sub(stop, start)))
            else:
                i = E.convert(i)
                ranges.append(Range.from_min_extent(i, E.convert(1, i.dtype)))
        return BufferRegion(buffer, ranges)
    return E.BufferLoad(buffer, tuple(indices))


def _sub(a, b):
    from ...tir.op import subtract

    return subtract(a, b)


def as_region(value):
    """A BufferRegion of a region, a load (one element) or a buffer (all of it)."""
    if isinstance(value, BufferRegion):
        return value
    if isinstance(value, E.BufferLoad):
        return BufferRegion.from_point(value.buffer, value.indices)
    if isinstance(value, Buffer):
        return BufferRegion.full_region(value)
    raise TIRError(f"expected a buffer region, got {type(value).__name__}")


def region_to_load(value):
    """A region used as a value: the vector load of its last dimension (TVM's ``A[i, 0:4]``)."""
    if not isinstance(value, BufferRegion):
        return value
    return E.BufferLoad(value.buffer, _ramp_indices(value.region))


def _ramp_indices(region):
    from ...arith import Analyzer

    out = []
    for k, r in enumerate(region):
        extent = Analyzer().simplify(r.extent)  # A[i * 4:(i + 1) * 4] has 4 lanes
        lanes = extent.value if isinstance(extent, E.IntImm) else None
        if k == len(region) - 1 and lanes is not None and lanes > 1:
            out.append(E.Ramp(r.min, E.convert(1, r.min.dtype), lanes))
        else:
            out.append(r.min)
    return tuple(out)


def store_indices(buffer, indices):
    """The indices of a store to ``buffer[indices]`` (a slice of the last dimension is a vector store)."""
    value = buffer_subscript(buffer, indices)
    return value.indices if isinstance(value, E.BufferLoad) else _ramp_indices(value.region)


# ---- completion
def access_regions(body, init, local_buffers):
    """The (reads, writes) regions of a block body: every access, relaxed over the loops inside the block; a block
    with an ``init`` (a reduction) reads what it writes without listing it."""
    from ...arith.int_set import estimate_region

    local = {id(b) for b in local_buffers}
    reads: dict = {}
    writes: dict = {}
    order: list = []

    def note(table, buffer, indices, loops):
        if id(buffer) in local:
            return
        region = estimate_region(indices, loops) if loops else [Range.from_min_extent(i, E.convert(1, i.dtype))
                                                               for i in indices]
        if id(buffer) not in table:
            table[id(buffer)] = (buffer, region)
            order.append((table, id(buffer)))

    def expr(e, loops):
        from ...tir.stmt_functor import children

        stack = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, E.BufferLoad):
                note(reads, x.buffer, x.indices, loops)
            stack.extend(reversed(children(x)))

    def stmt(s, loops):
        if isinstance(s, S.For):
            stmt(s.body, {**loops, s.loop_var: Range.from_min_extent(s.min, s.extent)})
        elif isinstance(s, S.BufferStore):
            expr(s.value, loops)
            for i in s.indices:
                expr(i, loops)
            note(writes, s.buffer, s.indices, loops)
        elif isinstance(s, BlockRealize):

            vmap = {iv.var: v for iv, v in zip(s.block.iter_vars, s.iter_values, strict=True)}
            for table, regions in ((reads, s.block.reads), (writes, s.block.writes)):
                for r in regions:
                    if id(r.buffer) in local or id(r.buffer) in table:
                        continue
                    table[id(r.buffer)] = (r.buffer, [_relax(x, vmap, loops) for x in r.region])
                    order.append((table, id(r.buffer)))
        else:
            from ...tir.stmt_functor import children

            for c in children(s):
                (stmt if isinstance(c, S.Stmt) else expr)(c, loops)

    if init is not None:
        stmt(init, {})
    stmt(body, {})
    # a reduction (a block with init) does not list what it writes among its reads, as TVM's detector
    excluded = set(writes) if init is not None else set()
    return ([BufferRegion(*reads[k]) for t, k in order if t is reads and k not in excluded],
            [BufferRegion(*writes[k]) for t, k in order if t is writes])


def _relax(rng, vmap, loops):
    """``rng`` of a child block, its variables replaced by their bindings, widened over ``loops``."""
    from ...arith.int_set import eval_set
    from ...tir.op import add, subtract
    from ...tir.stmt_functor import substitute

    lo, extent = substitute(rng.min, vmap), substitute(rng.extent, vmap)
    if not loops:
        return Range.from_min_extent(lo, extent)
    span = eval_set(lo, loops)
    if not span.is_bounded():
        return Range.from_min_extent(lo, extent)
    return Range.from_min_extent(span.min_value, add(subtract(span.max_value, span.min_value), extent))


def complete_function(body, root_alloc_buffers):
    """Wrap ``body`` in a root block when it holds blocks or the function allocates at its top level."""
    if isinstance(body, BlockRealize) and not root_alloc_buffers:
        return body
    if not root_alloc_buffers and not has_block(body):
        return body
    root = Block((), (), (), "root", body, None, tuple(root_alloc_buffers))
    return BlockRealize((), True, root)

