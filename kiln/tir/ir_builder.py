"""``tir.ir_builder``: build TIR statements imperatively (TVM's ``tvm.tir.ir_builder``).

A builder keeps a stack of open scopes, each a list of statements. ``with ib.for_range(...)``, ``if_scope``,
``else_scope``, ``while_loop`` and ``new_scope`` open a scope and, on leaving it, wrap what it collected into one
statement (a ``For``, ``IfThenElse``...) appended to the enclosing scope. ``allocate``, ``let`` and ``scope_attr``
wrap everything emitted after them in the same scope (an ``Allocate``, ``LetStmt``, ``AttrStmt`` whose body is the
rest), so they are kept in the list as functions from body to statement and applied when the scope closes.

``ib.allocate``, ``ib.pointer`` and ``ib.buffer_ptr`` return a :class:`BufferVar`: ``x[i]`` reads it (a
``BufferLoad``) and ``x[i] = v`` emits a ``BufferStore`` into the current scope; one index into a
multi-dimensional buffer is unravelled row-major.

Examples
--------
>>> ib = create()
>>> n = Var("n", "int32")
>>> A = ib.allocate("float32", n, name="A")
>>> with ib.for_range(0, n, name="i") as i:
...     A[i] = A[i] + 1.0
>>> type(ib.get()).__name__
'Allocate'
"""

from ..error import TIRError, TIRValueError
from .buffer import Buffer, decl_buffer
from .expr import Call, IntImm, IterVar, PrimExpr, StringImm, Var, convert
from .op import const, floordiv, floormod
from .op import max as _max
from .stmt import Allocate, AttrStmt, Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt, While

_KINDS = {"serial": ForKind.SERIAL, "parallel": ForKind.PARALLEL, "vectorize": ForKind.VECTORIZED,
          "unroll": ForKind.UNROLLED}


class WithScope:
    """A ``with`` scope: yields ``enter_value``, calls ``exit_cb`` on leaving (not when an exception leaves it)."""

    def __init__(self, enter_value, exit_cb):
        self._enter_value = enter_value
        self._exit_cb = exit_cb

    def __enter__(self):
        return self._enter_value

    def __exit__(self, ptype, value, trace):
        if ptype is None:
            self._exit_cb()


class BufferVar:
    """A buffer being built into: ``x[i]`` loads, ``x[i] = v`` emits a store (see the module docstring)."""

    def __init__(self, builder, buffer, content_type):
        self._builder = builder
        self._buffer = buffer
        self._content_type = content_type

    def asobject(self):
        """The underlying :class:`Buffer`."""
        return self._buffer

    @property
    def dtype(self):
        """The element type."""
        return self._content_type

    def _normalize_index(self, index):
        index = list(index) if isinstance(index, tuple | list) else [index]
        index = [i.var if isinstance(i, IterVar) else i for i in index]
        shape = self._buffer.shape
        if len(index) == 1 and len(shape) != 1:
            index = _unravel(convert(index[0]), shape)
        return index

    def __getitem__(self, index):
        return self._buffer[tuple(self._normalize_index(index))]

    def __setitem__(self, index, value):
        from .stmt import BufferStore

        index = self._normalize_index(index)
        value = convert(value)
        if value.dtype.split("x")[0] != self._content_type.split("x")[0]:
            raise TIRError(f"ir_builder: cannot store {value.dtype} into buffer {self._buffer.name} of "
                           f"{self._content_type}")
        self._builder.emit(BufferStore(self._buffer, value, index))


def _unravel(index, shape):
    """The row-major multi-index of flat ``index`` in ``shape``."""
    out = []
    for dim in reversed(shape[1:]):
        out.append(floormod(index, dim))
        index = floordiv(index, dim)
    out.append(index)
    return list(reversed(out))


class IRBuilder:
    """Builds a TIR statement scope by scope (see the module docstring)."""

    def __init__(self):
        self._seq_stack: list = [[]]
        self.nidx = 0

    def _pop_seq(self):
        """Close the innermost scope: its statements in order, each wrapper taking everything after it."""
        seq = self._seq_stack.pop()
        if not seq or callable(seq[-1]):
            seq.append(Evaluate(0))
        tail: list = []
        for item in reversed(seq):
            if callable(item):
                tail = [item(_as_stmt(tail))]
            else:
                tail.insert(0, item)
        return _as_stmt(tail)

    def emit(self, stmt):
        """Append a statement (a ``Call`` is evaluated), or a function from body to statement, to the scope."""
        if isinstance(stmt, Call):
            stmt = Evaluate(stmt)
        if not (isinstance(stmt, Stmt) or callable(stmt)):
            raise TIRError(f"ir_builder.emit: expected a Stmt, a Call or a function of the body, got "
                           f"{type(stmt).__name__}")
        self._seq_stack[-1].append(stmt)

    def scope_attr(self, node, attr_key, value):
        """Wrap the rest of the scope in ``AttrStmt(node, attr_key, value)`` (a thread extent is at least 1)."""
        node = StringImm(node) if isinstance(node, str) else node
        value = StringImm(value) if isinstance(value, str) else value
        if attr_key == "thread_extent":
            value = _max(1, value)
        self.emit(lambda body: AttrStmt(node, attr_key, value, body))

    def for_range(self, begin, end, name="i", dtype=None, kind="serial"):
        """A loop scope from ``begin`` to ``end`` (exclusive) of kind "serial", "parallel", "vectorize" or
        "unroll"; entering it gives the loop variable. Default names are i, j, k, then i_0, i_1...; the variable is
        int64 when a bound is."""
        if kind not in _KINDS:
            raise TIRValueError(f"ir_builder.for_range: unknown loop kind {kind!r} (expected one of "
                                f"{', '.join(_KINDS)})")
        if name == "i":
            name = "ijk"[self.nidx] if self.nidx < 3 else f"i_{self.nidx - 3}"
            self.nidx += 1
        if dtype is None:
            dtype = "int64" if "int64" in (_bound_dtype(begin), _bound_dtype(end)) else "int32"
        loop_var = Var(name, dtype)
        extent = end if _is_zero(begin) else convert(end) - begin
        self._seq_stack.append([])

        def exit_cb():
            self.emit(For(loop_var, begin, extent, _KINDS[kind], self._pop_seq()))

        return WithScope(loop_var, exit_cb)

    def while_loop(self, condition):
        """A ``While(condition)`` scope."""
        self._seq_stack.append([])

        def exit_cb():
            self.emit(While(condition, self._pop_seq()))

        return WithScope(None, exit_cb)

    def if_scope(self, cond):
        """An ``if cond`` scope; an :meth:`else_scope` may follow it."""
        self._seq_stack.append([])

        def exit_cb():
            self.emit(IfThenElse(cond, self._pop_seq(), None))

        return WithScope(None, exit_cb)

    def else_scope(self):
        """The else branch of the ``if_scope`` just closed."""
        prev = self._seq_stack[-1][-1] if self._seq_stack[-1] else None
        if not isinstance(prev, IfThenElse) or prev.else_case is not None:
            raise TIRError("ir_builder: else_scope can only follow an if_scope")
        self._seq_stack[-1].pop()
        self._seq_stack.append([])

        def exit_cb():
            self.emit(IfThenElse(prev.condition, prev.then_case, self._pop_seq()))

        return WithScope(None, exit_cb)

    def new_scope(self):
        """A plain scope: bounds what ``allocate``, ``let`` and ``scope_attr`` inside it wrap."""
        self._seq_stack.append([])

        def exit_cb():
            self.emit(self._pop_seq())

        return WithScope(None, exit_cb)

    def let(self, var_name, value):
        """Bind a new variable named ``var_name`` to ``value`` for the rest of the scope; returns it."""
        value = convert(value)
        var = Var(var_name, value.dtype)
        self.emit(lambda body: LetStmt(var, value, body))
        return var

    def allocate(self, dtype, shape, name="buf", axis_separators=None, scope=""):
        """Allocate a buffer of ``dtype`` and ``shape`` in ``scope`` for the rest of the scope; returns its
        :class:`BufferVar`."""
        shape = tuple(shape) if isinstance(shape, list | tuple) else (shape,)
        buffer = decl_buffer(shape, dtype, name, scope=scope, axis_separators=axis_separators)
        self.emit(lambda body: Allocate(buffer.data, dtype, shape, const(1, "bool"), body))
        return BufferVar(self, buffer, dtype)

    def pointer(self, content_type, name="ptr", scope=""):
        """A new pointer to ``content_type`` elements (a one-element buffer, indexed freely)."""
        return BufferVar(self, decl_buffer((1,), content_type, name, scope=scope), content_type)

    def buffer_ptr(self, buf):
        """The :class:`BufferVar` of an existing buffer."""
        if not isinstance(buf, Buffer):
            raise TIRError(f"ir_builder.buffer_ptr: expected a tir.Buffer, got {type(buf).__name__}")
        return BufferVar(self, buf, buf.dtype)

    def likely(self, expr):
        """``expr`` marked as likely true."""
        expr = convert(expr)
        return Call(expr.dtype, "tir.likely", (expr,))

    def get(self):
        """The statement built; every scope must be closed."""
        seq = self._pop_seq()
        if self._seq_stack:
            raise TIRError("ir_builder: cannot call get inside a construction scope")
        return seq


def _as_stmt(items):
    return items[0] if len(items) == 1 else SeqStmt(tuple(items))


def _is_zero(value):
    return isinstance(value, int | IntImm) and not isinstance(value, bool) and int(value) == 0


def _bound_dtype(expr):
    if isinstance(expr, PrimExpr):
        if not expr.dtype.startswith("int"):
            raise TIRError(f"ir_builder.for_range: a loop bound must be an integer, got {expr.dtype}")
        return expr.dtype
    if isinstance(expr, int):
        return "int32"
    raise TIRError(f"ir_builder.for_range: a loop bound must be an integer, got {type(expr).__name__}")


def create():
    """A new :class:`IRBuilder`."""
    return IRBuilder()
