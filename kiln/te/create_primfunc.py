"""``te.create_prim_func``: tensor expressions to a TensorIR ``PrimFunc`` of blocks (TVM's ``CreatePrimFunc``).

Unlike :func:`kiln.lower`, no schedule is involved: each operation becomes the loop nest of its whole domain around
one block, as TVMScript would write it, ready for a TensorIR schedule.

* The operations reachable from the arguments are visited producers first. A placeholder is a parameter buffer
  (``decl_buffer(shape, dtype, name)``); the arguments are the function's parameters ``var_<name>`` in order, and
  every other tensor a buffer allocated in the root block.
* A compute becomes ``for`` loops over its axes then its reduction axes (loop variables named after the axes),
  around a block whose iterators ``v_<axis>`` (spatial, then reduction) are bound to the loops. A reduction stores
  the combiner's identity in the block's ``init`` and ``combiner(current, source)`` in its body (with ``LetStmt``
  temporaries when it has several outputs, so each combination reads the old values); other computes get one block
  per output. Block names are the operation's, made unique (``C``, ``C_1``). The compute's ``attrs`` become block
  annotations (tensors replaced by their buffers); ``layout_free_placeholders`` naming parameter buffers becomes
  the function attribute ``layout_free_buffers`` (their parameter indices).
* An extern operation becomes an opaque block holding its statement, its placeholder buffers replaced by the buffers
  of its input tensors; its output buffers are its own placeholders.
* Completion, as TVMScript's: every block but the root gets the regions its body reads and writes; when the body is
  not already a single block without iterators, a root block wraps it and owns the allocated buffers.

``index_dtype_override`` (``"int64"``) rewrites every index (loop and block variables, shapes, indices) to that
type, as TVM's ``IndexDataTypeNormalizer``.
"""

from ..arith import Analyzer
from ..error import TIRError
from ..ir.attrs import DictAttrs
from ..script.tir.block import access_regions
from ..tir import expr as E
from ..tir import stmt as S
from ..tir.buffer import Buffer, decl_buffer
from ..tir.expr_reduce import IterVar, IterVarType, Range
from ..tir.function import PrimFunc
from ..tir.functor import StmtExprMutator
from ..tir.stmt_block import Block, BlockRealize
from ..tir.stmt_functor import rebind_buffers, substitute
from .tensor import ComputeOp, ExternOp, PlaceholderOp, Tensor

__all__ = ["create_prim_func"]

_DROPPED_ATTRS = ("const_matrix", "auto_scheduler_simplify_const_tensor_indices", "workload")


class UnsupportedOperationError(TIRError, TypeError):
    """``create_prim_func`` met an operation it cannot turn into blocks (a scan, a hybrid op)."""


def ordered_ops(tensors) -> list:
    """The operations the tensors depend on, producers first (post-order DFS from the arguments, as TVM's
    ``PostDFSOrder``)."""
    order, seen = [], set()
    for root in [t.op for t in tensors]:
        stack = [(root, False)]
        while stack:
            op, ready = stack.pop()
            if ready:
                order.append(op)
                continue
            if op in seen:
                continue
            seen.add(op)
            stack.append((op, True))
            for t in reversed(op.input_tensors):
                if t.op not in seen:
                    stack.append((t.op, False))
    return order


class _Info:
    """What the blocks being built share: the buffer of each tensor, the root allocations, the block names."""

    def __init__(self, args):
        self.args = args
        self.buffers: dict = {}
        self.root_alloc: list = []
        self.names: dict = {}
        self.ana = Analyzer()

    def is_arg(self, tensor) -> bool:
        return any(tensor is a for a in self.args)

    def fresh_name(self, base) -> str:
        """``base``, or ``base_<k>`` with the first k not yet used (TVM's NameSupply)."""
        if base not in self.names:
            self.names[base] = 0
            return base
        k = self.names[base]
        while True:
            k += 1
            candidate = f"{base}_{k}"
            if candidate not in self.names:
                self.names[base] = k
                self.names[candidate] = 0
                return candidate

    def load(self, expr):
        return _ProducerToBuffer(self.buffers).visit_expr(expr)


class _ProducerToBuffer(StmtExprMutator):
    """``tensor[i]`` (a ProducerLoad) -> ``buffer[i]`` (a BufferLoad) of the tensor's buffer."""

    def __init__(self, buffers):
        self.buffers = buffers

    def visit_producer_load(self, op):
        indices = tuple(self.visit_expr(i) for i in op.indices)
        buf = self.buffers.get(op.producer)
        if buf is None:
            raise TIRError(f"te.create_prim_func: tensor {op.producer.name} is read but is not computed by the "
                           "function (pass the tensors it depends on)")
        return E.BufferLoad(buf, indices)


def _block_from_tensors(op, tensors, bindings, body, info):
    """The BlockRealize computing ``tensors`` (outputs of the compute ``op``) from ``body``."""
    iter_vars, var_map = [], {}
    for iv in (*op.axis, *op.reduce_axis):
        new = E.Var(f"v_{iv.var.name_hint}", iv.var.dtype)
        var_map[iv.var] = new
        dom = Range.from_min_extent(info.ana.simplify(iv.dom.min), info.ana.simplify(iv.dom.extent))
        iter_vars.append(IterVar(dom, new, iv.iter_type, iv.thread_tag))
        if not (isinstance(dom.extent, E.IntImm) and dom.extent.value == 1):  # (an extent-1 one would become 0)
            info.ana.bind(new, dom)  # the body simplifies within its iterators' domains (bounds checks go)
    buffers = []
    for t in tensors:
        buf = decl_buffer(t.shape, t.dtype, t.name)
        info.buffers[t] = buf
        buffers.append(buf)
        if not info.is_arg(t):
            info.root_alloc.append(buf)
    indices = tuple(var_map[iv.var] for iv in op.axis)
    init = None
    if isinstance(body, E.Reduce):
        name = info.fresh_name(op.name)
        lhs = [E.BufferLoad(b, indices) for b in buffers]
        rhs = [info.ana.simplify(substitute(info.load(s), var_map)) for s in body.source]
        combiner = body.combiner
        values = [substitute(r, {**dict(zip(combiner.lhs, lhs, strict=True)), **dict(zip(combiner.rhs, rhs,
                                                                                          strict=True))})
                  for r in combiner.result]
        init = S.stmt_seq(*[S.BufferStore(b, v, indices)
                            for b, v in zip(buffers, combiner.identity_element, strict=True)])
        if len(buffers) == 1:
            stmt = S.BufferStore(buffers[0], values[0], indices)
        else:
            temps = [E.Var(f"v_{b.name}", b.dtype) for b in buffers]
            stmt = S.stmt_seq(*[S.BufferStore(b, t, indices) for b, t in zip(buffers, temps, strict=True)])
            for t, v in reversed(list(zip(temps, values, strict=True))):
                stmt = S.LetStmt(t, v, stmt)
        cond = substitute(info.load(body.condition), var_map)
        if not (isinstance(cond, E.IntImm) and cond.value):
            stmt = S.IfThenElse(cond, stmt)  # TVM drops a reduction's `where`; kiln keeps it
    else:
        name = info.fresh_name(tensors[0].name)
        value = info.ana.simplify(substitute(info.load(body), var_map))
        stmt = S.BufferStore(buffers[0], value, indices)
    annotations = {}
    for key, value in dict(op.attrs).items():
        annotations[key] = [info.buffers.get(v, v) if isinstance(v, Tensor) else v for v in value] \
            if isinstance(value, list | tuple) else info.buffers.get(value, value) if isinstance(value, Tensor) \
            else value
    bindings = list(bindings)
    if not iter_vars:
        iter_vars.append(IterVar(Range.from_min_extent(0, 1), E.Var("vi", "int32"), IterVarType.DataPar))
        bindings.append(E.IntImm("int32", 0))
    block = Block(tuple(iter_vars), (), (), name, stmt, init, (), (), annotations)
    return BlockRealize(tuple(bindings), True, block)


def _stmt_from_compute(op, info):
    axes = (*op.axis, *op.reduce_axis)
    bindings = []
    for iv in axes:
        bits = max(int(iv.dom.min.dtype[3:] or 32), int(iv.dom.extent.dtype[3:] or 32))
        bindings.append(E.Var(iv.var.name_hint, f"int{bits}"))
    if isinstance(op.body[0], E.Reduce):
        blocks = [_block_from_tensors(op, [op.output(k) for k in range(op.num_outputs)], bindings, op.body[0], info)]
    else:
        blocks = [_block_from_tensors(op, [op.output(k)], bindings, b, info) for k, b in enumerate(op.body)]
    body = S.stmt_seq(*blocks)
    for iv, var in reversed(list(zip(axes, bindings, strict=True))):
        body = S.For(var, info.ana.simplify(iv.dom.min), info.ana.simplify(iv.dom.extent), S.ForKind.SERIAL, body)
    return body


def _stmt_from_extern(op, info):
    var_map, buffer_map = {}, {}
    for t, placeholder in zip(op.inputs, op.input_placeholders, strict=True):
        buf = info.buffers.get(t)
        if buf is None:
            raise TIRError(f"te.create_prim_func: input {t.name} of extern {op.name} has no buffer")
        if buf is not placeholder:
            var_map[placeholder.data] = buf.data
            buffer_map[placeholder] = buf
    for k, placeholder in enumerate(op.output_placeholders):
        t = op.output(k)
        info.buffers[t] = placeholder
        if not info.is_arg(t):
            info.root_alloc.append(placeholder)
    body = rebind_buffers(op.body, var_map, buffer_map)
    block = Block((), (), (), info.fresh_name(op.name), body, None, (), (), op.attrs)
    return BlockRealize((), True, block)


class _CompleteBlocks(StmtExprMutator):
    """Fill the read and write regions of every block (what TVMScript's completion does)."""

    def visit_block(self, op):
        new = StmtExprMutator.visit_block(self, op)
        if new.reads or new.writes:
            return new
        reads, writes = access_regions(new.body, new.init, list(new.alloc_buffers) + [m.buffer for m in
                                                                                      new.match_buffers])
        return new.with_fields(reads=tuple(reads), writes=tuple(writes))


def _complete(body, root_alloc):
    """Regions for every block, then the root block (unless the body is one iterator-free block already)."""
    is_root = not root_alloc and isinstance(body, BlockRealize) and not body.block.iter_vars
    if is_root:
        inner = _CompleteBlocks().visit_stmt(body.block.body)
        return body.with_fields(block=body.block.with_fields(body=inner))
    body = _CompleteBlocks().visit_stmt(body)
    return BlockRealize((), True, Block((), (), (), "root", body, None, tuple(root_alloc)))


def _layout_free(func):
    """``layout_free_placeholders`` naming parameter buffers -> the function's ``layout_free_buffers`` indices."""
    index = {buf: k for k, p in enumerate(func.params) if (buf := func.buffer_map.get(p)) is not None}
    found: set = set()

    class Normalize(StmtExprMutator):
        def visit_block(self, op):
            new = StmtExprMutator.visit_block(self, op)
            ann = dict(new.annotations)
            changed = False
            if "layout_free_placeholders" in ann:
                kept = []
                for b in ann["layout_free_placeholders"]:
                    if isinstance(b, Buffer) and b in index:
                        found.add(index[b])
                    else:
                        kept.append(b)
                if kept:
                    ann["layout_free_placeholders"] = kept
                else:
                    del ann["layout_free_placeholders"]
                changed = True
            for key in _DROPPED_ATTRS:
                changed |= ann.pop(key, None) is not None
            return new.with_fields(annotations=DictAttrs.make(ann)) if changed else new

    body = Normalize().visit_stmt(func.body)
    func = func.with_body(body) if body is not func.body else func
    if found:
        func = func.with_attr("layout_free_buffers", sorted(found))
    return func


def create_prim_func(ops, index_dtype_override=None) -> PrimFunc:
    """A TensorIR PrimFunc computing tensor expressions (TVM's ``te.create_prim_func``; see the module docstring).

    Parameters
    ----------
    ops : list of Tensor or Var
        The function's parameters in order: tensors (inputs and outputs) and scalar variables.
    index_dtype_override : str, optional
        Rewrite every index to this dtype (``"int64"``).

    Returns
    -------
    func : tir.PrimFunc
        Named ``main`` (``global_symbol``), with ``tir.noalias``.

    Examples
    --------
    >>> k = te.reduce_axis((0, 128), "k")                                               # doctest: +SKIP
    >>> C = te.compute((128, 128), lambda x, y: te.sum(A[x, k] * B[y, k], axis=k), name="C")   # doctest: +SKIP
    >>> print(te.create_prim_func([A, B, C]).script())                                 # doctest: +SKIP
    """
    if isinstance(ops, Tensor):
        ops = [ops]
    args = list(ops)
    for x in args:
        if not isinstance(x, Tensor | E.Var):
            raise TIRError(f"te.create_prim_func: an argument must be a te.Tensor or tir.Var, got {type(x).__name__}")
    tensors = [x for x in args if isinstance(x, Tensor)]
    info = _Info(tensors)
    order = ordered_ops(tensors)
    for op in order:
        if not isinstance(op, PlaceholderOp | ComputeOp | ExternOp):
            raise UnsupportedOperationError(f"Unsupported Operation: {type(op).__name__}. Only te.placeholder, "
                                            "te.compute and te.extern are allowed for now.")
        if isinstance(op, ExternOp):
            for t, buf in zip(op.inputs, op.input_placeholders, strict=True):
                info.buffers[t] = buf
    stmts = []
    for op in order:
        if isinstance(op, PlaceholderOp):
            t = op.output(0)
            if not info.is_arg(t):
                raise TIRError(f"te.create_prim_func: placeholder {op.name} is read but is not an argument")
            if t not in info.buffers:
                info.buffers[t] = decl_buffer(op.shape, op.dtype, op.name)
        elif isinstance(op, ComputeOp):
            stmts.append(_stmt_from_compute(op, info))
        else:
            stmts.append(_stmt_from_extern(op, info))
    params, buffer_map = [], {}
    for x in args:
        if isinstance(x, Tensor):
            param = E.Var(f"var_{x.name}", "handle")
            params.append(param)
            buffer_map[param] = info.buffers[x]
        else:
            params.append(x)
    body = _complete(S.stmt_seq(*stmts), info.root_alloc)
    func = PrimFunc(params, body, None, buffer_map, {"global_symbol": "main", "tir.noalias": True})
    if index_dtype_override is not None:
        from .index_dtype import normalize_index_dtype

        func = normalize_index_dtype(func, index_dtype_override)
    return _layout_free(func)
