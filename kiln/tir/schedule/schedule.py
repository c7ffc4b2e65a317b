"""The start of a TensorIR schedule (TVM's ``tir.Schedule``): a module of block-structured PrimFuncs and the lookups
every schedule primitive begins with. kiln has no TensorIR transformation primitives yet (``split``,
``compute_at`` ... on blocks); te's schedules (:mod:`kiln.te.schedule`) are how kiln arranges loops.

A :class:`StmtSRef` is a block or loop of the function being worked on, with its parent (the enclosing loop or
block); a :class:`BlockRV` / :class:`LoopRV` is the handle the lookups return, resolved by ``get_sref`` and ``get``.
"""

from ...error import TIRError
from ...ir.module import IRModule
from .. import stmt as S
from ..function import PrimFunc
from ..stmt_block import Block, BlockRealize

__all__ = ["Schedule", "ScheduleError", "StmtSRef", "BlockRV", "LoopRV"]

_DEBUG_MASKS = ("all", "none")


class ScheduleError(TIRError):
    """A schedule lookup or primitive cannot be applied (TVM's ``tvm.tir.ScheduleError``)."""


class StmtSRef:
    """A block or a loop of the scheduled function, with ``parent`` (None for the root)."""

    __slots__ = ("stmt", "parent", "seq_index")

    def __init__(self, stmt, parent, seq_index=-1):
        self.stmt, self.parent, self.seq_index = stmt, parent, seq_index

    def __repr__(self):
        what = self.stmt.name_hint if isinstance(self.stmt, Block) else self.stmt.loop_var.name_hint
        return f"StmtSRef({type(self.stmt).__name__} {what})"


class BlockRV:
    """A handle to a block of a :class:`Schedule`."""

    __slots__ = ("sref",)

    def __init__(self, sref):
        self.sref = sref


class LoopRV:
    """A handle to a loop of a :class:`Schedule`."""

    __slots__ = ("sref",)

    def __init__(self, sref):
        self.sref = sref


def _srefs(func) -> list:
    """Every block and loop of ``func`` as a StmtSRef, in pre-order."""
    out: list = []

    def walk(stmt, parent, index=-1):
        if isinstance(stmt, BlockRealize):
            stmt = stmt.block
        if isinstance(stmt, Block | S.For):
            sref = StmtSRef(stmt, parent, index)
            out.append(sref)
            parent = sref
            if isinstance(stmt, Block) and stmt.init is not None:
                walk(stmt.init, parent)
            walk(stmt.body, parent)
            return
        if isinstance(stmt, S.SeqStmt):
            for k, s in enumerate(stmt.seq):
                walk(s, parent, k)
            return
        for name in ("body", "then_case", "else_case"):
            child = getattr(stmt, name, None)
            if isinstance(child, S.Stmt):
                walk(child, parent)

    walk(func.body, None)
    return out


class Schedule:
    """A TensorIR schedule of ``mod`` (a PrimFunc or an IRModule of them).

    Parameters
    ----------
    mod : PrimFunc or IRModule
        What to schedule; a PrimFunc becomes the function ``main`` of a module.
    seed : int, optional
        The random seed of sampling primitives (recorded).
    debug_mask : str or int
        "all" or "none" (kiln keeps no cached state that could go stale, so there is nothing extra to verify).
    error_render_level : str
        "detail", "fast" or "none".
    enable_check : bool
        Accepted for TVM compatibility.

    Examples
    --------
    >>> s = tir.Schedule(te.create_prim_func([A, B, C]))            # doctest: +SKIP
    >>> s.get(s.get_block("C")).name_hint                           # doctest: +SKIP
    'C'
    """

    def __init__(self, mod, *, seed=None, debug_mask="none", error_render_level="detail", enable_check=True):
        if isinstance(mod, PrimFunc):
            mod = IRModule({"main": mod})
        if not isinstance(mod, IRModule):
            raise ScheduleError(f"tir.Schedule: expected a PrimFunc or IRModule, got {type(mod).__name__}")
        if not (isinstance(debug_mask, int) or debug_mask in _DEBUG_MASKS):
            raise ScheduleError(f"tir.Schedule: debug_mask must be an int or one of {_DEBUG_MASKS}, got "
                                f"{debug_mask!r}")
        if error_render_level not in ("detail", "fast", "none"):
            raise ScheduleError(f"tir.Schedule: unknown error_render_level {error_render_level!r}")
        self._mod = mod
        self.seed, self.debug_mask, self.error_render_level = seed, debug_mask, error_render_level
        names = [gv.name_hint for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
        self.func_working_on = names[0] if len(names) == 1 else None
        self._cache: dict = {}

    @property
    def mod(self) -> IRModule:
        """The module being scheduled."""
        return self._mod

    def work_on(self, func_name):
        """Make ``func_name`` the function later lookups search by default."""
        self._func(func_name)
        self.func_working_on = func_name

    def _func(self, name):
        name = name or self.func_working_on
        if name is None:
            raise ScheduleError("tir.Schedule: the module has several functions; name one (func_name=, work_on)")
        try:
            func = self._mod[name]
        except Exception as exc:  # noqa: BLE001  (the module's own error names what is missing)
            raise ScheduleError(f"tir.Schedule: no function {name!r} in the module") from exc
        if not isinstance(func, PrimFunc):
            raise ScheduleError(f"tir.Schedule: {name!r} is not a PrimFunc")
        return name, func

    def _srefs(self, name):
        name, func = self._func(name)
        if self._cache.get(name, (None,))[0] is not func:
            self._cache[name] = (func, _srefs(func))
        return self._cache[name][1]

    def get_block(self, name, func_name=None) -> BlockRV:
        """The block called ``name``; it must be the only one of that name."""
        found = [s for s in self._srefs(func_name) if isinstance(s.stmt, Block) and s.stmt.name_hint == name]
        if len(found) != 1:
            fname = func_name or self.func_working_on
            raise ScheduleError(f"tir.Schedule.get_block: {'no' if not found else len(found)} blocks named {name!r} "
                                f"in function {fname!r}" + ("" if not found else "; block names must be unique"))
        return BlockRV(found[0])

    def get_loops(self, block_rv) -> list:
        """The loops enclosing a block, outermost first (up to the enclosing block)."""
        loops = []
        sref = self.get_sref(block_rv).parent
        while sref is not None and isinstance(sref.stmt, S.For):
            loops.append(LoopRV(sref))
            sref = sref.parent
        return loops[::-1]

    def get_sref(self, rv) -> StmtSRef:
        """The StmtSRef a BlockRV or LoopRV (or a Block / For of the function) stands for."""
        if isinstance(rv, BlockRV | LoopRV):
            return rv.sref
        for s in self._srefs(None):
            if s.stmt is rv:
                return s
        raise ScheduleError(f"tir.Schedule.get_sref: {type(rv).__name__} is not a block or loop of the function")

    def get(self, rv):
        """The Block or For a handle stands for."""
        return self.get_sref(rv).stmt
