"""The builder state of the TVMScript parser: a stack of frames, TVM's ``IRBuilder`` reduced to what kiln needs.

A frame is what a ``with`` statement (``with T.block("C"):``), a ``for`` loop or a binding (``x = T.allocate(...)``,
``T.func_attr(...)`` inside a function) opens. The parser calls ``frame.enter()`` for the value bound by ``as`` or by
the assignment, parses the body, and calls ``frame.exit(body)`` for the statement that replaces it. Frames such as the
function and block frames also collect what ``T.func_attr``, ``T.reads``, ``T.alloc_buffer`` ... record, which is why
those functions find the innermost frame of their kind through :func:`current`.
"""

import threading

from ...error import TIRError
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.expr_reduce import IterVar, IterVarType, Range

_STATE = threading.local()


def _stack() -> list:
    if not hasattr(_STATE, "stack"):
        _STATE.stack = []
        _STATE.names = []
    return _STATE.stack


def push(frame):
    """Make ``frame`` the innermost open frame."""
    _stack().append(frame)


def pop(frame):
    """Close ``frame`` (the innermost one)."""
    stack = _stack()
    if not stack or stack[-1] is not frame:
        raise TIRError("TVMScript: frames closed out of order")
    stack.pop()


def unwind(frame):
    """Close ``frame`` and any frame a failed parse left open above it."""
    stack = _stack()
    while stack:
        if stack.pop() is frame:
            break
    _STATE.names = []


def current(kind, what):
    """The innermost open frame of class ``kind``; ``what`` names the caller for the error when there is none."""
    for frame in reversed(_stack()):
        if isinstance(frame, kind):
            return frame
    raise TIRError(f"TVMScript: {what} is only allowed inside a {kind.__name__.replace('Frame', '').lower()}")


def find(kind):
    """The innermost open frame of class ``kind``, or None."""
    for frame in reversed(_stack()):
        if isinstance(frame, kind):
            return frame
    return None


def set_names(names):
    """Names the parser is about to bind the next value(s) to (``x = T.int32()`` names the new variable ``x``)."""
    _stack()
    _STATE.names = list(names)


def take_name(default):
    """The next pending name, or ``default`` when the value is not directly assigned."""
    _stack()
    return _STATE.names.pop(0) if _STATE.names else default


def loop_range(var):
    """The ``(min, extent)`` of the open loop over ``var``, or None."""
    for frame in reversed(_stack()):
        if isinstance(frame, ForFrame) and frame.var is var:
            return frame.min, frame.extent
    return None


class Frame:
    """A scope the parser opens; subclasses say what it binds and what statement it becomes."""

    def enter(self):
        push(self)
        return None

    def exit(self, body):
        pop(self)
        return body


class PrimFuncFrame(Frame):
    """The function being parsed: parameters, buffer map, attributes, return type, root allocations."""

    def __init__(self, name):
        self.name = name
        self.params: list = []
        self.buffer_map: dict = {}
        self.attrs: dict = {}
        self.ret_type = None
        self.root_alloc_buffers: list = []


class ForFrame(Frame):
    """``for v in T.serial(min, max)`` and its kin; ``T.grid`` opens several."""

    def __init__(self, kind, start, stop, thread=None, annotations=None):
        if stop is None:
            start, stop = 0, start
        start, stop = E.convert(start), E.convert(stop)
        if start.dtype != stop.dtype:  # a Python int takes the dtype of the other bound
            if isinstance(start, E.IntImm):
                start = E.IntImm(stop.dtype, start.value)
            elif isinstance(stop, E.IntImm):
                stop = E.IntImm(start.dtype, stop.value)
        self.kind, self.min, self.stop = kind, start, stop
        from ...tir.op import subtract

        self.extent = stop if _is_zero(start) else subtract(stop, start)
        self.thread, self.annotations = thread, annotations
        self.var = None

    def enter(self):
        push(self)
        self.var = E.Var(take_name("v"), self.min.dtype)
        return self.var

    def exit(self, body):
        pop(self)
        binding = None
        if self.thread is not None:
            binding = IterVar(Range.from_min_extent(self.min, self.extent), E.Var(self.thread, self.min.dtype),
                              IterVarType.ThreadIndex, self.thread)
        return S.For(self.var, self.min, self.extent, self.kind, body, binding, self.annotations or {})


class GridFrame(Frame):
    """``T.grid(n, m, ...)``: nested serial loops, bound to a tuple of variables."""

    def __init__(self, extents):
        self.loops = [ForFrame(S.ForKind.SERIAL, 0, e) for e in extents]

    def enter(self):
        push(self)
        return [loop.enter() for loop in self.loops]

    def exit(self, body):
        for loop in reversed(self.loops):
            body = loop.exit(body)
        pop(self)
        return body


class LetFrame(Frame):
    """``x = value`` (or ``x: T.int32 = value``, ``with T.LetStmt(value) as x``): a LetStmt over the rest."""

    def __init__(self, value, var=None):
        self.value = E.convert(value)
        self.var = var

    def enter(self):
        push(self)
        if self.var is None:
            self.var = E.Var(take_name("v"), self.value.dtype)
        return self.var

    def exit(self, body):
        pop(self)
        return S.LetStmt(self.var, self.value, body)


class AllocateFrame(Frame):
    """``x = T.allocate(extents, dtype, scope)``: an Allocate over the rest; ``x`` is the data handle."""

    def __init__(self, extents, dtype, scope, condition, annotations):
        self.extents, self.dtype, self.scope = extents, dtype, scope
        self.condition, self.annotations = condition, annotations
        self.var = None

    def enter(self):
        push(self)
        from ...ir.type import PrimType

        self.var = E.Var(take_name("buffer"), E.PointerType(PrimType(self.dtype), self.scope))
        return self.var

    def exit(self, body):
        pop(self)
        return S.Allocate(self.var, self.dtype, self.extents, self.condition, body, self.annotations or {})


class DeclBufferFrame(Frame):
    """``x = T.decl_buffer(shape, dtype, data=...)``: a DeclBuffer over the rest (with an Allocate when no data)."""

    def __init__(self, make_buffer, allocate):
        self.make_buffer, self.allocate = make_buffer, allocate
        self.buffer = None

    def enter(self):
        push(self)
        self.buffer = self.make_buffer(take_name("buffer"))
        return self.buffer

    def exit(self, body):
        pop(self)
        stmt = S.DeclBuffer(self.buffer, body)
        if self.allocate:
            b = self.buffer
            stmt = S.Allocate(b.data, b.dtype, b.shape, None, stmt)
        return stmt


class AttrFrame(Frame):
    """``with T.attr(node, key, value):`` and ``T.launch_thread``."""

    def __init__(self, node, key, value, bound=None):
        self.node, self.key, self.value, self.bound = node, key, value, bound

    def enter(self):
        push(self)
        return self.bound

    def exit(self, body):
        pop(self)
        return S.AttrStmt(self.node, self.key, self.value, body)


class AssertFrame(Frame):
    """``assert cond, message``: an AssertStmt over the rest."""

    def __init__(self, condition, message):
        self.condition, self.message = condition, message

    def exit(self, body):
        pop(self)
        return S.AssertStmt(self.condition, self.message, body)


class WhileFrame(Frame):
    """``while cond:``."""

    def __init__(self, condition):
        self.condition = condition

    def exit(self, body):
        pop(self)
        return S.While(self.condition, body)


def _is_zero(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 0
