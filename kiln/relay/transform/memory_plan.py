"""MemoryPlan: share storage between tensors whose lifetimes do not overlap (TVM's ``relay.transform.MemoryPlan``).

ManifestAlloc gives every kernel output a storage block of its own. This pass works on one scope at a time (a let
chain: a function body, an ``if`` branch) and:

1. finds the *plannable* tensors: ``let %t = memory.alloc_tensor(%s, 0, ...)`` whose block ``let %s =
   memory.alloc_storage(<constant size>)`` serves that tensor alone;
2. computes each one's lifetime, from its ``alloc_tensor`` to the last binding that uses it or a value that may hold
   it. "May hold" is tracked through aliases: a let of the variable, a tuple holding it, a field of such a tuple, an
   ``if`` or a call (of a function, a closure, ``vm.reshape_tensor``) taking it, a closure capturing it. A use inside
   a nested scope counts at the binding that holds the scope. A tensor the scope's result may hold escapes: it keeps
   its own block (it outlives the scope, as a function result does);
3. assigns blocks greedily in order of first use: a tensor takes a free block (one whose tensors are all dead before
   the new one is allocated, so no kernel writes into a block it reads) that fits, the smallest that does, else the
   largest smaller one, which grows; blocks within a factor ``MATCH_RANGE`` of the size only, so a small tensor does
   not pin a large block; otherwise a new block;
4. lays the blocks out one after the other (64-byte aligned) in a single ``memory.alloc_storage`` for the scope,
   placed where the first plannable block was allocated, and points each ``alloc_tensor`` at its block's offset.

Storage whose size is computed at run time (``relay.Any``) is not planned: it keeps its own block.
"""

from dataclasses import dataclass

from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ..analysis.free_vars import free_vars
from ..expr import Call, Constant, Let, Var, const
from ..expr_functor import ExprMutator
from ..function import Function
from ..op.memory import StorageType, alloc_storage
from .function_pass import FunctionPass
from .infer_type import infer_type
from .manifest_alloc import ALIGNMENT

__all__ = ["MemoryPlan", "memory_plan", "MATCH_RANGE"]

MATCH_RANGE = 16
"""A free block is reused for a tensor between 1/16 and 16 times its size (as the graph executor's planner)."""

_ALLOC_STORAGE, _ALLOC_TENSOR = Op.get("memory.alloc_storage"), Op.get("memory.alloc_tensor")
_HOLDS_NOTHING = {Op.get(name) for name in ("memory.alloc_storage", "memory.alloc_tensor", "memory.kill",
                                            "vm.invoke_tvm_op", "vm.shape_of")}
"""Values that never hold a tensor given to them (a new block or tensor, the empty tuple, a new shape tensor)."""


def _aligned(size) -> int:
    return (size + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def _is_call(expr, op) -> bool:
    return isinstance(expr, Call) and expr.op is op


class _Candidate:
    __slots__ = ("storage_pos", "tensor_pos", "size", "end", "block")

    def __init__(self, storage_pos, tensor_pos, size):
        self.storage_pos, self.tensor_pos, self.size = storage_pos, tensor_pos, size
        self.end = tensor_pos
        self.block = -1


def _candidates(bindings, uses) -> dict:
    """Plannable tensors by their binding position: alloc_storage of a constant size used by one alloc_tensor at
    offset 0 and nothing else."""
    storage_at = {var: pos for pos, (var, value) in enumerate(bindings)
                  if _is_call(value, _ALLOC_STORAGE) and isinstance(value.args[0], Constant)}
    found = {}
    for pos, (_, value) in enumerate(bindings):
        if not _is_call(value, _ALLOC_TENSOR):
            continue
        storage, offset = value.args[0], value.args[1]
        if storage in storage_at and uses.get(storage) == 1 and isinstance(offset, Constant) \
                and int(offset.data.handle) == 0:
            spos = storage_at[storage]
            found[pos] = _Candidate(spos, pos, int(bindings[spos][1].args[0].data.handle))
    return found


def _lifetimes(bindings, tail, candidates):
    """Set each candidate's ``end`` (its last use, ``len(bindings)`` when it escapes through the tail)."""
    escape = len(bindings)
    last_use: dict = {}
    for pos, (_, value) in enumerate(bindings):
        for var in free_vars(value):
            last_use[var] = pos
    for var in free_vars(tail):
        last_use[var] = escape
    holds: dict = {}  # var -> the candidates (by position) its value may hold
    for pos, (var, value) in enumerate(bindings):
        if pos in candidates:
            held = {pos}
        elif isinstance(value, Call) and value.op in _HOLDS_NOTHING:
            held = set()
        else:
            held = set().union(*(holds.get(v, ()) for v in free_vars(value)))
        holds[var] = held
        for cpos in held:
            candidate = candidates[cpos]
            candidate.end = max(candidate.end, last_use.get(var, pos))


def _assign_blocks(candidates) -> list:
    """Give each candidate a block (see the module docstring); returns the block sizes."""
    sizes: list = []
    free: list = []  # block indices
    live: list = []  # candidates holding a block
    for cand in sorted(candidates, key=lambda c: c.tensor_pos):
        for other in [o for o in live if o.end < cand.tensor_pos]:
            live.remove(other)
            free.append(other.block)
        need = _aligned(cand.size)
        fits = [b for b in free if need <= sizes[b] <= need * MATCH_RANGE]
        smaller = [b for b in free if sizes[b] < need <= sizes[b] * MATCH_RANGE]
        if fits or smaller:
            cand.block = min(fits, key=lambda b: sizes[b]) if fits else max(smaller, key=lambda b: sizes[b])
            sizes[cand.block] = max(sizes[cand.block], need)
            free.remove(cand.block)
        else:
            cand.block = len(sizes)
            sizes.append(need)
        live.append(cand)
    return sizes


def plan_scope(bindings, tail) -> list:
    """The bindings of one scope with its plannable tensors sharing one storage (see the module docstring)."""
    uses: dict = {}
    for _, value in bindings:
        for var in free_vars(value):
            uses[var] = uses.get(var, 0) + 1
    for var in free_vars(tail):
        uses[var] = uses.get(var, 0) + 1
    candidates = _candidates(bindings, uses)
    _lifetimes(bindings, tail, candidates)
    planned = {pos: c for pos, c in candidates.items() if c.end < len(bindings)}
    if len(planned) < 2:
        return bindings
    sizes = _assign_blocks(planned.values())
    offsets = [sum(sizes[:b]) for b in range(len(sizes))]
    region = Var("region", StorageType())
    first = min(c.storage_pos for c in planned.values())
    dropped = {c.storage_pos for c in planned.values()}
    out = []
    for pos, (var, value) in enumerate(bindings):
        if pos == first:
            out.append((region, alloc_storage(sum(sizes), ALIGNMENT, dtype_hint="uint8")))
        if pos in dropped:
            continue
        cand = planned.get(pos)
        if cand is not None:
            offset = const(offsets[cand.block], "int64")
            value = Call(value.op, (region, offset, value.args[2]), value.attrs)
        out.append((var, value))
    return out


class _Planner(ExprMutator):
    def visit_function(self, fn):
        return fn if fn.is_primitive() else super().visit_function(fn)

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        bindings = [(binding.var, self.visit(binding.value)) for binding in chain]
        tail = self.visit(body)
        result = tail
        for var, value in reversed(plan_scope(bindings, tail)):
            result = Let(var, value, result)
        return result


def memory_plan(func: Function, mod=None) -> Function:
    """``func`` with the storage of each scope planned (see the module docstring); typed."""
    if func.is_primitive():
        return func
    planned = _Planner().visit(func)
    return infer_type(planned.with_fields(ret_type=None, checked_type_=None), mod)


@register_pass("MemoryPlan")
@dataclass(frozen=True)
class MemoryPlan(FunctionPass):
    """Share storage between tensors that are not alive at the same time (TVM's ``relay.transform.MemoryPlan``).

    Examples
    --------
    >>> mod = relay.transform.MemoryPlan()(relay.transform.ManifestAlloc()(mod))   # doctest: +SKIP
    """

    info = PassInfo(0, "MemoryPlan", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return memory_plan(func, mod)
