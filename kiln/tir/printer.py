"""Print TIR as TVMScript-like text: ``str(prim_func)``, ``str(stmt)``, ``str(expr)``.

The output reads like TVM's ``func.script()``::

    # from kiln.script import tir as T
    @T.prim_func
    def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        T.func_attr({"global_symbol": "main"})
        for i in T.serial(128):
            B[i] = A[i] + T.float32(1.0)

Expressions print with Python operator precedence (parentheses only where needed); ``//`` and ``%`` are FloorDiv and
FloorMod, integer ``Div``/``Mod`` (truncating) print as ``T.truncdiv``/``T.truncmod``. Distinct variables or buffers
that share a name get suffixes (``i``, ``i_1``), so the text never confuses two of them.
``kiln.script.from_source`` parses it back (blocks print as TVM prints them: axes, ``T.reads``/``T.writes``,
``T.init``).
"""

import math

from ..runtime.packed_func import register_func
from . import dtype as _dt
from . import expr as E
from . import stmt as S
from . import stmt as tir_stmt
from . import stmt_block as SB
from . import stmt_realize as SR
from .stmt_functor import post_order_visit

_BINARY = {  # node -> (symbol, precedence)
    E.Add: ("+", 5), E.Sub: ("-", 5), E.Mul: ("*", 6), E.FloorDiv: ("//", 6), E.FloorMod: ("%", 6),
    E.EQ: ("==", 4), E.NE: ("!=", 4), E.LT: ("<", 4), E.LE: ("<=", 4), E.GT: (">", 4), E.GE: (">=", 4),
    E.And: ("and", 2), E.Or: ("or", 1),
}
_KIND = {S.ForKind.SERIAL: "serial", S.ForKind.PARALLEL: "parallel", S.ForKind.VECTORIZED: "vectorized",
         S.ForKind.UNROLLED: "unroll", S.ForKind.THREAD_BINDING: "thread_binding"}
_ATOM = 10
_AXIS = {0: "spatial", 2: "reduce", 3: "scan", 4: "opaque"}


class _Names:
    """Unique printed names for variables and buffers (one namespace, as in Python source)."""

    def __init__(self):
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.keep: list = []

    def get(self, obj, hint) -> str:
        name = self.names.get(id(obj))
        if name is not None:
            return name
        base = _identifier(hint)
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        self.names[id(obj)] = name
        self.keep.append(obj)  # keep alive: ids must stay unique while printing
        return name


def _identifier(hint) -> str:
    text = "".join(c if c.isalnum() or c == "_" else "_" for c in str(hint)) or "v"
    return "v_" + text if text[0].isdigit() else text


class TIRPrinter:
    """Turns TIR nodes into text; one instance per printed unit, so names stay consistent across it."""

    def __init__(self):
        self.names = _Names()
        self.lines: list[str] = []
        self.data_owner: dict[int, object] = {}  # id(data var) -> the buffer declared over it (prints A.data)
        self.views: dict[int, list] = {}  # id(data var) -> buffers to declare with T.Buffer(..., data=) after it

    # ---- expressions
    def expr(self, e, prec=0) -> str:
        text, p = self._expr(e)
        return f"({text})" if p < prec else text

    def var(self, v) -> str:
        owner = self.data_owner.get(id(v))
        if owner is not None:
            return f"{self.buffer(owner)}.data"
        return self.names.get(v, v.name_hint)

    def buffer(self, b) -> str:
        return self.names.get(b, b.name)

    def own(self, b):
        """Declare ``b`` as the owner of its data variable."""
        self.data_owner.setdefault(id(b.data), b)

    def declare_views(self, data, indent):
        """Declare the buffers viewing ``data`` that nothing else declares (``T.Buffer(..., data=...)``)."""
        for b in self.views.pop(id(data), ()):
            self.emit(indent, f"{self.buffer(b)} = T.Buffer({self._buffer_type(b)}, data={self.var(b.data)})")

    def _expr(self, e):
        kind = type(e)
        if kind in _BINARY:
            sym, p = _BINARY[kind]
            # left-associative: the right operand needs parentheses at equal precedence
            return f"{self.expr(e.a, p)} {sym} {self.expr(e.b, p + 1)}", p
        if kind is E.Div:
            if _dt.is_float(e.dtype):
                return f"{self.expr(e.a, 6)} / {self.expr(e.b, 7)}", 6
            return f"T.truncdiv({self.expr(e.a)}, {self.expr(e.b)})", _ATOM
        if kind is E.Mod:
            return f"T.truncmod({self.expr(e.a)}, {self.expr(e.b)})", _ATOM
        if kind in (E.Min, E.Max):
            return f"T.{kind.__name__.lower()}({self.expr(e.a)}, {self.expr(e.b)})", _ATOM
        if isinstance(e, E.Var):
            return self.var(e), _ATOM
        if kind is E.IntImm:
            if e.dtype == "int32":
                return (str(e.value), _ATOM) if e.value >= 0 else (str(e.value), 7)
            if e.dtype == "bool":
                return f"T.bool({bool(e.value)})", _ATOM
            return f"T.{e.dtype}({e.value})", _ATOM
        if kind is E.FloatImm:
            value = e.value
            text = repr(value) if math.isfinite(value) else f'"{value}"'
            return f"T.{e.dtype}({text})", _ATOM
        if kind is E.StringImm:
            return _quote(e.value), _ATOM
        if kind is E.Cast:
            return f'T.Cast("{e.dtype}", {self.expr(e.value)})', _ATOM
        if kind is E.Not:
            return f"not {self.expr(e.a, 3)}", 3
        if kind is E.Select:
            return f"T.Select({self.expr(e.condition)}, {self.expr(e.true_value)}, {self.expr(e.false_value)})", _ATOM
        if kind is E.Ramp:
            return f"T.Ramp({self.expr(e.base)}, {self.expr(e.stride)}, {e.lanes})", _ATOM
        if kind is E.Broadcast:
            return f"T.Broadcast({self.expr(e.value)}, {e.lanes})", _ATOM
        if kind is E.Let:
            return f"T.Let({self.var(e.var)}, {self.expr(e.value)}, {self.expr(e.body)})", _ATOM
        if kind is E.Call:
            return self._call(e), _ATOM
        if kind is E.BufferLoad:
            return f"{self.buffer(e.buffer)}[{self._indices(e.indices)}]", _ATOM
        if kind is E.ProducerLoad:
            name = getattr(e.producer, "name", "producer")
            return f"{self.names.get(e.producer, name)}[{self._indices(e.indices)}]", _ATOM
        if kind is E.Reduce:
            axes = ", ".join(self.var(iv.var) for iv in e.axis)
            src = ", ".join(self.expr(s) for s in e.source)
            return f"T.reduce({_reducer_name(e)}, [{src}], axis=[{axes}], where={self.expr(e.condition)})", _ATOM
        return f"<{type(e).__name__}>", _ATOM

    def _indices(self, indices) -> str:
        parts = []
        for i in indices:
            if isinstance(i, E.Ramp) and isinstance(i.stride, E.IntImm) and i.stride.value == 1:
                stop = self.expr(i.base + i.lanes)
                parts.append(f"{self.expr(i.base)}:{stop}")
            else:
                parts.append(self.expr(i))
        return ", ".join(parts)

    def _call(self, e) -> str:
        name = e.op.name
        args = [self.expr(a) for a in e.args]
        if name in ("tir.call_extern", "tir.call_pure_extern", "tir.call_llvm_intrin", "tir.call_llvm_pure_intrin"):
            return f'T.{name[4:]}("{e.dtype}", {", ".join(args)})'
        if name.startswith("tir."):
            return f"T.{name[4:]}({', '.join(args)})"
        return f'T.call_intrin("{e.dtype}", "{name}", {", ".join(args)})'

    # ---- statements
    def emit(self, indent, text):
        self.lines.append("    " * indent + text)

    def stmt(self, s, indent=0):
        """Append the lines of ``s`` at ``indent``; chains of statements that keep the indent are handled in a loop."""
        while s is not None:
            s = self._stmt(s, indent)

    def _stmt(self, s, indent):
        """Print one statement; return a statement that continues at the same indent (or None)."""
        kind = type(s)
        if kind is S.SeqStmt:
            for part in s.seq:
                self.stmt(part, indent)
            return None
        if kind is S.For:
            grid = _grid(s)
            if len(grid) > 1:  # TVM's sugar: nested plain loops with independent extents print as one T.grid
                names = ", ".join(self.var(loop.loop_var) for loop in grid)
                self.emit(indent, f"for {names} in T.grid({', '.join(self.expr(loop.extent) for loop in grid)}):")
                self.stmt(grid[-1].body, indent + 1)
                return None
            self.emit(indent, f"for {self.var(s.loop_var)} in {self._loop_range(s)}:")
            self.stmt(s.body, indent + 1)
            return None
        if kind is S.BufferStore:
            self.emit(indent, f"{self.buffer(s.buffer)}[{self._indices(s.indices)}] = {self.expr(s.value)}")
            return None
        if kind is S.LetStmt:
            self.emit(indent, f"{self.var(s.var)}: {_type_ann(s.var)} = {self.expr(s.value)}")
            return s.body
        if kind is S.Allocate:
            extents = ", ".join(self.expr(x) for x in s.extents)
            cond = "" if _is_true(s.condition) else f", {self.expr(s.condition)}"
            self.emit(indent, f'{self.var(s.buffer_var)} = T.allocate([{extents}], "{s.dtype}", "{s.scope}"{cond})')
            self.declare_views(s.buffer_var, indent)
            return s.body
        if kind is S.DeclBuffer:
            b = s.buffer
            self.own(b)
            self.emit(indent, f"{self.buffer(b)} = T.decl_buffer({self._buffer_type(b)}, data={self.var(b.data)})")
            return s.body
        if kind is S.IfThenElse:
            self.emit(indent, f"if {self.expr(s.condition)}:")
            self.stmt(s.then_case, indent + 1)
            if s.else_case is not None:
                self.emit(indent, "else:")
                self.stmt(s.else_case, indent + 1)
            return None
        if kind is S.Evaluate:
            self.emit(indent, f"T.evaluate({self.expr(s.value)})")
            return None
        if kind is S.AttrStmt:
            node = s.node
            if isinstance(node, E.PrimExpr):
                target = self.expr(node)
            elif isinstance(node, E.IterVar):
                target = self.var(node.var)
            else:
                target = _quote(str(node)) if isinstance(node, str) else \
                repr(node) if isinstance(node, int | float) else type(node).__name__
            self.emit(indent, f'with T.attr({target}, "{s.attr_key}", {self.expr(s.value)}):')
            self.stmt(s.body, indent + 1)
            return None
        if kind is S.AssertStmt:
            self.emit(indent, f"assert {self.expr(s.condition)}, {self.expr(s.message)}")
            return s.body
        if kind is S.While:
            self.emit(indent, f"while {self.expr(s.condition)}:")
            self.stmt(s.body, indent + 1)
            return None
        if kind is SB.BlockRealize:
            self._block(s, indent)
            return None
        if kind is SR.Prefetch:
            ranges = ", ".join(f"T.Range({self.expr(r.min)}, {self.expr(r.min + r.extent)})" for r in s.bounds)
            self.emit(indent, f"T.prefetch({self.buffer(s.buffer)}, [{ranges}])")
            return None
        if kind is SR.BufferRealize:
            region = self.region(SB.BufferRegion(s.buffer, s.bounds))
            self.emit(indent, f'with T.realize({region}, "{s.buffer.scope()}", {self.expr(s.condition)}):')
            self.stmt(s.body, indent + 1)
            return None
        self.emit(indent, f"<{type(s).__name__}>")
        return None

    def region(self, r) -> str:
        """``A[i, 0:4]``: a buffer region as a subscript."""
        parts = []
        for rng in r.region:
            if isinstance(rng.extent, E.IntImm) and rng.extent.value == 1:
                parts.append(self.expr(rng.min))
            else:
                parts.append(f"{self.expr(rng.min)}:{self.expr(rng.min + rng.extent)}")
        return f"{self.buffer(r.buffer)}[{', '.join(parts)}]"

    def _block(self, realize, indent):
        block = realize.block
        if block.name_hint == "root" and not block.iter_vars and not block.alloc_buffers and not block.match_buffers \
                and not len(block.annotations) and block.init is None:
            self.stmt(block.body, indent)  # TVM omits an empty root block; the parser adds it back
            return
        self.emit(indent, f"with T.block({_quote(block.name_hint)}):")
        indent += 1
        for iv, value in zip(block.iter_vars, realize.iter_values, strict=True):
            kind = _AXIS.get(int(iv.iter_type), "opaque")
            dom = iv.dom
            text = self.expr(dom.extent) if _is_zero(dom.min) else \
                f"({self.expr(dom.min)}, {self.expr(dom.min + dom.extent)})"
            dtype = "" if iv.var.dtype == "int32" else f', dtype="{iv.var.dtype}"'
            self.emit(indent, f"{self.var(iv.var)} = T.axis.{kind}({text}, {self.expr(value)}{dtype})")
        if not _is_true(realize.predicate):
            self.emit(indent, f"T.where({self.expr(realize.predicate)})")
        self.emit(indent, f"T.reads({', '.join(self.region(r) for r in block.reads)})")
        self.emit(indent, f"T.writes({', '.join(self.region(r) for r in block.writes)})")
        if len(block.annotations):
            items = ", ".join(f"{_quote(k)}: {_py(v)}" for k, v in block.annotations.items())
            self.emit(indent, f"T.block_attr({{{items}}})")
        for b in block.alloc_buffers:
            self.own(b)
            self.emit(indent, f"{self.buffer(b)} = T.alloc_buffer({self._buffer_type(b)})")
        for m in block.match_buffers:
            self.own(m.buffer)
            self.emit(indent, f"{self.buffer(m.buffer)} = T.match_buffer({self.region(m.source)}, "
                              f"{self._buffer_type(m.buffer)})")
        if block.init is not None:
            self.emit(indent, "with T.init():")
            self.stmt(block.init, indent + 1)
        self.stmt(block.body, indent)

    def _loop_range(self, s) -> str:
        kind = _KIND[s.kind]
        if s.kind == S.ForKind.SERIAL and _is_zero(s.min) and not len(s.annotations):
            return f"range({self.expr(s.extent)})"
        if _is_zero(s.min):
            args = self.expr(s.extent)
        else:
            args = f"{self.expr(s.min)}, {self.expr(s.min + s.extent)}"
        if s.kind == S.ForKind.THREAD_BINDING and s.thread_binding is not None:
            args += f', thread="{s.thread_binding.thread_tag}"'
        if len(s.annotations):
            ann = ", ".join(f'"{k}": {_py(v)}' for k, v in s.annotations.items())
            args += f", annotations={{{ann}}}"
        return f"T.{kind}({args})"

    def _find_views(self, f):
        """Buffers the body accesses that no statement declares: views of other memory."""
        declared = {id(b) for b in f.buffer_map.values()}
        used: list = []

        def note(n):
            if isinstance(n, S.DeclBuffer):
                declared.add(id(n.buffer))
            elif isinstance(n, SB.Block):
                declared.update(id(b) for b in n.alloc_buffers)
                declared.update(id(m.buffer) for m in n.match_buffers)
            elif isinstance(n, E.BufferLoad | S.BufferStore):
                used.append(n.buffer)

        post_order_visit(f.body, note)
        seen = set()
        for b in used:
            if id(b) not in declared and id(b) not in seen:
                seen.add(id(b))
                self.views.setdefault(id(b.data), []).append(b)

    def _buffer_type(self, b) -> str:
        shape = ", ".join(self.expr(x) for x in b.shape)
        text = f'({shape}{"," if len(b.shape) == 1 else ""}), "{b.dtype}"'
        if b.strides:
            text += f", strides=({', '.join(self.expr(x) for x in b.strides)},)"
        if not _is_zero(b.elem_offset):
            text += f", elem_offset={self.expr(b.elem_offset)}"
        if b.scope() != "global":
            text += f', scope="{b.scope()}"'
        return text

    # ---- functions
    def function(self, f) -> str:
        from .analysis import undefined_vars

        name = f.attrs.get("global_symbol", "main")
        private = "global_symbol" not in f.attrs
        param_ids = {id(p) for p in f.params}
        # a buffer whose shape uses a variable the signature does not bind prints as a handle and a match_buffer
        # after the variable's declaration, as TVM prints it
        matched = [(p, buf) for p, buf in f.buffer_map.items()
                   if any(id(v) not in param_ids for e in _buffer_exprs(buf) for v in undefined_vars(e))]
        matched_ids = {id(p) for p, _ in matched}
        for buf in f.buffer_map.values():
            self.own(buf)
        self._find_views(f)
        params = []
        for p in f.params:
            buf = f.buffer_map.get(p)
            if buf is not None and id(p) not in matched_ids:
                params.append(f"{self.buffer(buf)}: T.Buffer({self._buffer_type(buf)})")
            else:
                params.append(f"{self.var(p)}: {_type_ann(p)}")
        ret = f" -> {_type_name(str(f.ret_type))}" if f.ret_type is not None else ""
        self.lines.append("# from tvm.script import tir as T")
        self.lines.append("")
        self.lines.append("@T.prim_func(private=True)" if private else "@T.prim_func")
        self.lines.append(f"def {_identifier(name)}({', '.join(params)}){ret}:")
        # the parser names the global symbol after the function, so TVM prints it only when it differs
        attrs = {k: v for k, v in f.attrs.items() if not (k == "global_symbol" and v == _identifier(name))}
        if attrs:
            items = ", ".join(f'"{k}": {_py(v)}' for k, v in attrs.items())
            self.emit(1, f"T.func_attr({{{items}}})")
        bound = param_ids | {id(b.data) for b in f.buffer_map.values()}
        shapes = [_buffer_exprs(b) for b in f.buffer_map.values()]
        for v in undefined_vars(tir_stmt.stmt_seq(*(tir_stmt.Evaluate(e) for e in sum(shapes, ())), f.body),
                                f.params):
            if id(v) not in bound and v.dtype != "handle":
                self.emit(1, f"{self.var(v)} = {_type_ann(v)}()")
        for p, buf in matched:
            self.emit(1, f"{self.buffer(buf)} = T.match_buffer({self.var(p)}, {self._buffer_type(buf)})")
        allocated = set()
        post_order_visit(f.body, lambda n: allocated.add(id(n.buffer_var)) if isinstance(n, S.Allocate) else None)
        for key in [k for k in self.views if k not in allocated]:
            self.declare_views(self.views[key][0].data, 1)
        self.stmt(f.body, 1)
        return "\n".join(self.lines)


def _grid(loop) -> list:
    """The nest of serial loops from 0, without annotations, whose extents use no variable of the nest."""
    from .analysis import undefined_vars

    out: list = []
    while isinstance(loop, S.For) and loop.kind == S.ForKind.SERIAL and _is_zero(loop.min) and \
            not len(loop.annotations):
        if any(any(v is o.loop_var for o in out) for v in undefined_vars(loop.extent)):
            break
        out.append(loop)
        loop = loop.body
    return out


def _buffer_exprs(buf) -> tuple:
    return (*buf.shape, *buf.strides, buf.elem_offset)


def _reducer_name(e) -> str:
    result = e.combiner.result[0] if e.combiner.result else None
    return {E.Add: "sum", E.Min: "min", E.Max: "max", E.Mul: "prod"}.get(type(result), "reducer")


def _type_name(dtype) -> str:
    return "T.handle" if dtype == "handle" else f"T.{dtype}"


def _type_ann(v) -> str:
    ann = v.type_annotation
    if v.dtype == "handle" and isinstance(ann, E.PointerType):
        return f'T.handle("{ann.element_type}", "{ann.storage_scope}")'
    return _type_name(v.dtype)


def _quote(text) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _py(value) -> str:
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, bool):
        return "T.bool(True)" if value else "T.bool(False)"
    if isinstance(value, tuple):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    if isinstance(value, E.PrimExpr):
        return expr_to_str(value)
    return str(value)


def _is_zero(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 0


def _is_true(e) -> bool:
    return isinstance(e, E.IntImm) and e.dtype == "bool" and e.value == 1


def expr_to_str(e) -> str:
    """The text of one expression."""
    return TIRPrinter().expr(e)


def stmt_to_str(s) -> str:
    """The text of one statement (no function header)."""
    p = TIRPrinter()
    p.stmt(s)
    return "\n".join(p.lines)


@register_func("tir.script")
def script(func) -> str:
    """The TVMScript-like text of a PrimFunc (also registered as the global function ``tir.script``)."""
    return TIRPrinter().function(func)
