"""TIR statements (TVM's ``tvm.tir.stmt``): loops, stores, allocation, sequencing, branches, bindings, attributes.

Frozen graph nodes like the expressions, with TVM's constructor argument order (``For(loop_var, min, extent, kind,
body)``, ``BufferStore(buffer, value, indices)``, ``Allocate(buffer_var, dtype, extents, condition, body)``).
Variables bound by a statement (loop variables, let variables, allocated handles) are marked ``DEF`` so structural
equality maps them by binding.
"""

from dataclasses import dataclass, field
from enum import IntEnum

from ..error import TIRError
from ..ir.attrs import DictAttrs
from ..ir.node import DEF, IGNORE, Node
from . import dtype as _dt
from .expr import PrimExpr, StringImm, Var, _check_indices, convert

__all__ = [
    "Allocate", "AssertStmt", "AttrStmt", "BufferStore", "DeclBuffer", "Evaluate", "For", "ForKind", "IfThenElse",
    "LetStmt", "SeqStmt", "Stmt", "While", "stmt_list", "stmt_seq",
]


def _set(node, name, value):
    object.__setattr__(node, name, value)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Stmt(Node):
    """Base of TIR statements."""

    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    def __str__(self):
        from .printer import stmt_to_str

        return stmt_to_str(self)

    def __repr__(self):
        return str(self)


def _check_stmt(value, what):
    if not isinstance(value, Stmt):
        raise TIRError(f"{what} must be a Stmt, got {type(value).__name__}")


class ForKind(IntEnum):
    """How a loop runs (TVM's values)."""

    SERIAL = 0
    PARALLEL = 1
    VECTORIZED = 2
    UNROLLED = 3
    THREAD_BINDING = 4


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class For(Stmt):
    """``for loop_var in [min, min + extent): body``, run as ``kind`` says.

    ``annotations`` is a mapping of loop hints (``pragma_auto_unroll_max_step`` ...).
    """

    loop_var: Var = field(metadata=DEF)
    min: PrimExpr
    extent: PrimExpr
    kind: ForKind
    body: Stmt
    thread_binding: object = None
    annotations: DictAttrs = field(default_factory=DictAttrs)

    def __post_init__(self):
        if not isinstance(self.loop_var, Var):
            raise TIRError(f"tir.For: loop_var must be a Var, got {type(self.loop_var).__name__}")
        dtype = self.loop_var.dtype
        _set(self, "min", convert(self.min, dtype))
        _set(self, "extent", convert(self.extent, dtype))
        for name in ("min", "extent"):
            if getattr(self, name).dtype != dtype:
                raise TIRError(
                    f"tir.For over {self.loop_var.name_hint}: {name} has dtype {getattr(self, name).dtype}, "
                    f"the loop variable {dtype}"
                )
        _set(self, "kind", ForKind(self.kind))
        _set(self, "annotations", DictAttrs.make(self.annotations))
        _check_stmt(self.body, "tir.For body")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class While(Stmt):
    """``while condition: body``."""

    condition: PrimExpr
    body: Stmt

    def __post_init__(self):
        _set(self, "condition", convert(self.condition))
        _check_stmt(self.body, "tir.While body")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class BufferStore(Stmt):
    """``buffer[indices] = value``; a vector store when the last index is a vector."""

    buffer: object
    value: PrimExpr
    indices: tuple

    def __post_init__(self):
        indices = tuple(convert(i) for i in self.indices)
        _set(self, "indices", indices)
        _check_indices(self.buffer, indices, "tir.BufferStore")
        value = convert(self.value, _dt.element(self.buffer.dtype))
        lanes = _dt.lanes(indices[-1].dtype) if indices else 1
        expected = _dt.with_lanes(self.buffer.dtype, lanes * _dt.lanes(self.buffer.dtype))
        if value.dtype != expected:
            raise TIRError(
                f"tir.BufferStore: storing a {value.dtype} value into buffer {self.buffer.name} needs {expected}"
            )
        _set(self, "value", value)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Allocate(Stmt):
    """Allocate ``prod(extents)`` elements of ``dtype`` for ``body``; ``buffer_var`` is the handle."""

    buffer_var: Var = field(metadata=DEF)
    dtype: str
    extents: tuple
    condition: PrimExpr
    body: Stmt
    annotations: DictAttrs = field(default_factory=DictAttrs)

    def __post_init__(self):
        _set(self, "dtype", _dt.normalize(self.dtype))
        _set(self, "extents", tuple(convert(e) for e in self.extents))
        _set(self, "condition", convert(True) if self.condition is None else convert(self.condition))
        _set(self, "annotations", DictAttrs.make(self.annotations))
        if not isinstance(self.buffer_var, Var) or self.buffer_var.dtype != "handle":
            raise TIRError("tir.Allocate: buffer_var must be a handle Var")
        _check_stmt(self.body, "tir.Allocate body")

    @property
    def scope(self) -> str:
        ann = self.buffer_var.type_annotation
        return getattr(ann, "storage_scope", "global") or "global"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class DeclBuffer(Stmt):
    """Declare ``buffer`` (a view of existing memory) for ``body``."""

    buffer: object
    body: Stmt

    def __post_init__(self):
        _check_stmt(self.body, "tir.DeclBuffer body")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class SeqStmt(Stmt):
    """Statements run in order: ``seq``. ``len(s)`` and ``s[i]`` work on it."""

    seq: tuple

    def __post_init__(self):
        seq = tuple(self.seq)
        for s in seq:
            _check_stmt(s, "tir.SeqStmt element")
        _set(self, "seq", seq)

    def __len__(self):
        return len(self.seq)

    def __getitem__(self, i):
        return self.seq[i]

    def __iter__(self):
        return iter(self.seq)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IfThenElse(Stmt):
    """``if condition: then_case else: else_case`` (``else_case`` may be None)."""

    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None

    def __post_init__(self):
        cond = convert(self.condition)
        if not _dt.is_bool(cond.dtype) or _dt.lanes(cond.dtype) != 1:
            raise TIRError(f"tir.IfThenElse: condition must be a scalar bool, got {cond.dtype}")
        _set(self, "condition", cond)
        _check_stmt(self.then_case, "tir.IfThenElse then_case")
        if self.else_case is not None:
            _check_stmt(self.else_case, "tir.IfThenElse else_case")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class LetStmt(Stmt):
    """``var = value`` for ``body``."""

    var: Var = field(metadata=DEF)
    value: PrimExpr
    body: Stmt

    def __post_init__(self):
        value = convert(self.value, self.var.dtype)
        if value.dtype != self.var.dtype:
            raise TIRError(f"tir.LetStmt: {self.var.name_hint} is {self.var.dtype} but the value is {value.dtype}")
        _set(self, "value", value)
        _check_stmt(self.body, "tir.LetStmt body")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Evaluate(Stmt):
    """Evaluate ``value`` for its effect (a call)."""

    value: PrimExpr

    def __post_init__(self):
        _set(self, "value", convert(self.value))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class AttrStmt(Stmt):
    """Attach ``attr_key = value`` about ``node`` to ``body`` (``pragma_*``, ``thread_extent``,
    ``storage_alignment``)."""

    node: object
    attr_key: str
    value: PrimExpr
    body: Stmt

    def __post_init__(self):
        _set(self, "value", convert(self.value))
        _check_stmt(self.body, "tir.AttrStmt body")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class AssertStmt(Stmt):
    """Check ``condition`` before ``body``; on failure the function returns an error carrying ``message``."""

    condition: PrimExpr
    message: PrimExpr
    body: Stmt

    def __post_init__(self):
        _set(self, "condition", convert(self.condition))
        _set(self, "message", StringImm(self.message) if isinstance(self.message, str) else self.message)
        _check_stmt(self.body, "tir.AssertStmt body")


def stmt_list(stmt) -> list:
    """The statements of ``stmt`` as a flat list (nested SeqStmts expanded)."""
    out = []
    stack = [stmt]
    while stack:
        s = stack.pop()
        if isinstance(s, SeqStmt):
            stack.extend(reversed(s.seq))
        else:
            out.append(s)
    return out


def stmt_seq(*stmts) -> Stmt:
    """Sequence statements, flattening nested SeqStmts; expressions become ``Evaluate``; one statement is returned
    as is (TVM's ``tir.stmt_seq``)."""
    flat = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, PrimExpr):
            s = Evaluate(s)
        flat.extend(stmt_list(s))
    if not flat:
        return Evaluate(convert(0))
    return flat[0] if len(flat) == 1 else SeqStmt(tuple(flat))


# TensorIR blocks live in stmt_block.py; re-exported here, where TVM keeps them
from .stmt_block import Block, BlockRealize, BufferRegion, MatchBufferRegion  # noqa: E402, F401
