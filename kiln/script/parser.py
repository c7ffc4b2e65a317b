"""The TVMScript parser for TIR: a walk over Python's ``ast`` of a ``@T.prim_func`` (or ``@I.ir_module`` class).

Expressions are evaluated: a name is looked up in the parser's scopes (variables and buffers the script bound), then
in the function's closure and globals; calls call (``T.max(a, b)`` runs :func:`kiln.script.tir.max`), operators
apply Python's operators (TIR expressions overload them). Statements build TIR: ``for`` loops, ``with`` scopes,
assignments and ``if`` go through frames (:mod:`kiln.script.tir.frames`); a frame met as a statement or assigned
(``x = T.allocate(...)``, ``T.attr(...)`` without ``with``) wraps the remaining statements of its body. An ``if`` on a
Python value is decided while parsing, as TVM's parser does (meta-programming); on a TIR value it is an IfThenElse.
"""

import ast
import builtins
import operator

from ..error import TIRError
from ..tir import expr as E
from ..tir import op as _op
from ..tir import stmt as S
from ..tir.buffer import Buffer
from .tir import frames as F

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_CMPOPS = {
    ast.Eq: (operator.eq, _op.equal), ast.NotEq: (operator.ne, _op.not_equal), ast.Lt: (operator.lt, _op.less),
    ast.LtE: (operator.le, _op.less_equal), ast.Gt: (operator.gt, _op.greater),
    ast.GtE: (operator.ge, _op.greater_equal), ast.Is: (operator.is_, None), ast.IsNot: (operator.is_not, None),
    ast.In: (lambda a, b: a in b, None), ast.NotIn: (lambda a, b: a not in b, None),
}


def _is_tir(value) -> bool:
    return isinstance(value, E.PrimExpr | E.EqualOp)


def _expr_value(value):
    """A value usable as a TIR operand: regions used as values become (vector) loads."""
    from .tir.block import region_to_load

    return region_to_load(value)


class ScriptError(TIRError):
    """A TVMScript source that does not parse into TIR; the message names the line."""


class Parser:
    """Parses one function's ``ast.FunctionDef`` with the names of ``env`` (closure and globals) visible."""

    def __init__(self, env, source_name="<tvmscript>", line_offset=0):
        self.env = env
        self.scopes: list[dict] = [{}]
        self.source_name, self.line_offset = source_name, line_offset

    # ---- names
    def lookup(self, name, node):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.env:
            return self.env[name]
        if name == "range":
            from .tir import ops

            return ops.serial
        if hasattr(builtins, name):
            return getattr(builtins, name)
        self.error(node, f"name {name!r} is not defined")

    def bind(self, name, value):
        self.scopes[-1][name] = value

    def error(self, node, message):
        line = getattr(node, "lineno", 0) + self.line_offset
        raise ScriptError(f"{self.source_name}:{line}: {message}")

    # ---- expressions
    def eval(self, node):
        try:
            return self._eval(node)
        except ScriptError:
            raise
        except (TIRError, TypeError, ValueError, AttributeError, IndexError, KeyError) as exc:
            self.error(node, f"{type(exc).__name__}: {exc}")

    def _eval(self, node):  # noqa: C901  (one branch per expression kind)
        kind = type(node)
        if kind is ast.Constant:
            return node.value
        if kind is ast.Name:
            return self.lookup(node.id, node)
        if kind is ast.Attribute:
            return getattr(self.eval(node.value), node.attr)
        if kind is ast.Call:
            func = self.eval(node.func)
            args = []
            for a in node.args:
                if isinstance(a, ast.Starred):
                    args.extend(self.eval(a.value))
                else:
                    args.append(self.eval(a))
            kwargs = {}
            for k in node.keywords:
                if k.arg is None:
                    kwargs.update(self.eval(k.value))
                else:
                    kwargs[k.arg] = self.eval(k.value)
            return func(*args, **kwargs)
        if kind is ast.BinOp:
            a, b = _expr_value(self.eval(node.left)), _expr_value(self.eval(node.right))
            if isinstance(node.op, ast.Div) and _is_tir(a) | _is_tir(b):
                a, b = E.convert(a), E.convert(b)
                if not (E._dt.is_float(a.dtype) or E._dt.is_float(b.dtype)):
                    return _op.div(a, b)  # integer `/` in TVMScript is truncating division, as in TVM's parser
            return _BINOPS[type(node.op)](a, b)
        if kind is ast.UnaryOp:
            value = _expr_value(self.eval(node.operand))
            if isinstance(node.op, ast.Not):
                return _op.logical_not(value) if _is_tir(value) else not value
            if isinstance(node.op, ast.USub):
                return -value
            if isinstance(node.op, ast.UAdd):
                return value
            return ~value
        if kind is ast.BoolOp:
            values = [_expr_value(self.eval(v)) for v in node.values]
            if not any(_is_tir(v) for v in values):
                return all(values) if isinstance(node.op, ast.And) else builtins.any(values)
            combine = _op.logical_and if isinstance(node.op, ast.And) else _op.logical_or
            out = E.convert(values[0])
            for v in values[1:]:
                out = combine(out, v)
            return out
        if kind is ast.Compare:
            return self._compare(node)
        if kind is ast.IfExp:
            cond = self.eval(node.test)
            if _is_tir(cond):
                return E.Select(E.convert(cond), self.eval(node.body), self.eval(node.orelse))
            return self.eval(node.body) if cond else self.eval(node.orelse)
        if kind is ast.Subscript:
            return self._subscript(node)
        if kind is ast.Tuple:
            return tuple(self.eval(e) for e in node.elts)
        if kind is ast.List:
            return [self.eval(e) for e in node.elts]
        if kind is ast.Dict:
            return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values, strict=True)}
        if kind is ast.Slice:
            return slice(*(None if p is None else self.eval(p) for p in (node.lower, node.upper, node.step)))
        if kind is ast.Lambda:
            return self._lambda(node)
        if kind is ast.JoinedStr:
            return "".join(str(self.eval(v.value)) if isinstance(v, ast.FormattedValue) else v.value
                           for v in node.values)
        self.error(node, f"unsupported expression {kind.__name__}")

    def _compare(self, node):
        left = _expr_value(self.eval(node.left))
        result = None
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _expr_value(self.eval(right_node))
            py_op, tir_op = _CMPOPS[type(op)]
            value = tir_op(left, right) if tir_op is not None and (_is_tir(left) or _is_tir(right)) else \
                py_op(left, right)
            if isinstance(value, E.EqualOp):
                value = value.asobject()
            if result is None:
                result = value
            elif _is_tir(result) or _is_tir(value):
                result = _op.logical_and(result, value)
            else:
                result = result and value
            left = right
        return result

    def _subscript(self, node):
        value = self.eval(node.value)
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if isinstance(value, Buffer):
            from .tir.block import buffer_subscript

            return buffer_subscript(value, [self.eval(p) for p in parts])
        return value[self.eval(index)]

    def _lambda(self, node):
        names = [a.arg for a in node.args.args]

        def fn(*args):
            self.scopes.append(dict(zip(names, args, strict=True)))
            try:
                return self.eval(node.body)
            finally:
                self.scopes.pop()

        return fn

    # ---- statements
    def body(self, nodes) -> S.Stmt:
        """Parse a statement list; frames opened by bare statements wrap what follows them."""
        self.scopes.append({})
        try:
            out: list = []
            open_frames: list = []
            for node in nodes:
                result = self.stmt(node)
                if isinstance(result, F.Frame):
                    open_frames.append((result, out))
                    out = []
                elif isinstance(result, list):
                    out.extend(result)
                elif result is not None:
                    out.append(result)
            body = S.stmt_seq(*out)
            while open_frames:
                frame, before = open_frames.pop()
                body = S.stmt_seq(*before, frame.exit(body))
            return body
        finally:
            self.scopes.pop()

    def stmt(self, node):
        method = getattr(self, "stmt_" + type(node).__name__.lower(), None)
        if method is None:
            self.error(node, f"unsupported statement {type(node).__name__}")
        try:
            return method(node)
        except ScriptError:
            raise
        except (TIRError, TypeError, ValueError, AttributeError, IndexError, KeyError) as exc:
            self.error(node, f"{type(exc).__name__}: {exc}")

    def _open(self, frame, target):
        """Enter ``frame`` and bind its value to the ``target`` (a name, a tuple of names, or None)."""
        F.set_names(_target_names(target))
        try:
            value = frame.enter()
        finally:
            F.set_names([])
        if target is not None:
            self.assign(target, value)
        return value

    def stmt_for(self, node):
        frame = self.eval(node.iter)
        if not isinstance(frame, F.ForFrame | F.GridFrame):
            self.error(node.iter, "a TIR loop iterates over range, T.serial/parallel/vectorized/unroll/grid/"
                                  "thread_binding")
        self.scopes.append({})
        try:
            self._open(frame, node.target)
            body = self.body(node.body)
        finally:
            self.scopes.pop()
        return frame.exit(body)

    def stmt_with(self, node):
        self.scopes.append({})
        try:
            frames = []
            for item in node.items:
                frame = self.eval(item.context_expr)
                if not isinstance(frame, F.Frame):
                    self.error(item.context_expr, "a with statement needs a TIR scope (T.block, T.attr, ...)")
                self._open(frame, item.optional_vars)
                frames.append(frame)
            body = self.body(node.body)
        finally:
            self.scopes.pop()
        for frame in reversed(frames):
            body = frame.exit(body)
        return body

    def stmt_while(self, node):
        frame = F.WhileFrame(E.convert(self.eval(node.test)))
        frame.enter()
        return frame.exit(self.body(node.body))

    def stmt_if(self, node):
        cond = self.eval(node.test)
        if not _is_tir(cond):
            return self.body(node.body if cond else node.orelse) if (node.orelse or cond) else None
        then = self.body(node.body)
        other = self.body(node.orelse) if node.orelse else None
        return S.IfThenElse(E.convert(cond), then, other)

    def stmt_assert(self, node):
        frame = F.AssertFrame(self.eval(node.test), self.eval(node.msg) if node.msg is not None else "")
        frame.enter()
        return frame

    def stmt_expr(self, node):
        value = self.eval(node.value)
        if value is None or isinstance(value, str):
            return None  # a recording call such as T.func_attr, or a docstring
        if isinstance(value, F.Frame):
            self._open(value, None)
            return value
        if isinstance(value, S.Stmt):
            return value
        if isinstance(value, E.PrimExpr | int | bool):
            return S.Evaluate(E.convert(value))
        self.error(node, f"a statement evaluated to a {type(value).__name__}")

    def stmt_pass(self, node):
        return None

    def stmt_return(self, node):
        from .tir.ops import ret

        return S.Evaluate(ret(self.eval(node.value)))

    def stmt_assign(self, node):
        if len(node.targets) != 1:
            self.error(node, "chained assignment a = b = c is not TIR")
        target = node.targets[0]
        if isinstance(target, ast.Subscript):
            return self._store(target, self.eval(node.value))
        F.set_names(_target_names(target))
        try:
            value = self.eval(node.value)
        finally:
            F.set_names([])
        return self._bind_value(target, value)

    def stmt_augassign(self, node):
        current = _expr_value(self.eval(_load(node.target)))
        value = _BINOPS[type(node.op)](current, _expr_value(self.eval(node.value)))
        if isinstance(node.target, ast.Subscript):
            return self._store(node.target, value)
        return self._bind_value(node.target, value)

    def stmt_annassign(self, node):
        F.set_names(_target_names(node.target))
        try:
            var = self.eval(node.annotation)
            if callable(var):
                var = var()
        finally:
            F.set_names([])
        if not isinstance(var, E.Var):
            self.error(node.annotation, "the annotation of a binding must be a type (T.int32 ...)")
        self.assign(node.target, var)
        if node.value is None:
            return None
        frame = F.LetFrame(self.eval(node.value), var)
        frame.enter()
        return frame

    def _bind_value(self, target, value):
        from .tir.ops import meta_var

        if isinstance(value, meta_var):
            self.assign(target, value.value)
            return None
        if isinstance(value, F.Frame):
            self._open(value, target)
            return value
        if isinstance(target, ast.Name) and (isinstance(value, E.PrimExpr) and not self._is_new_var(value)
                                             or isinstance(value, int | float | bool) and not
                                             isinstance(value, type)):
            frame = F.LetFrame(value)
            self._open(frame, target)
            return frame
        self.assign(target, value)
        return None

    def _is_new_var(self, value):
        if not isinstance(value, E.Var):
            return False
        return not any(v is value for scope in self.scopes for v in scope.values())

    def _store(self, target, value):
        buffer = self.eval(target.value)
        if not isinstance(buffer, Buffer):
            self.error(target, f"cannot store into a {type(buffer).__name__}")
        parts = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        from .tir.block import store_indices

        return S.BufferStore(buffer, _expr_value(value), store_indices(buffer, [self.eval(p) for p in parts]))

    def assign(self, target, value):
        """Bind the names of ``target`` (a Name or a Tuple/List of targets) to ``value``."""
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
        elif isinstance(target, ast.Tuple | ast.List):
            values = list(value)
            if len(values) != len(target.elts):
                self.error(target, f"{len(target.elts)} names for {len(values)} values")
            for t, v in zip(target.elts, values, strict=True):
                self.assign(t, v)
        else:
            self.error(target, f"cannot assign to a {type(target).__name__}")


def _target_names(target) -> list:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for t in target.elts for n in _target_names(t)]
    return []


def _load(target):
    node = ast.fix_missing_locations(ast.copy_location(_with_load_ctx(target), target))
    return node


def _with_load_ctx(target):
    import copy

    node = copy.deepcopy(target)
    for sub in ast.walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = ast.Load()
    return node
