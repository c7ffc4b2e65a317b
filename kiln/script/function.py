"""Parse a ``@T.prim_func`` function (and the functions of an ``@I.ir_module`` class) into ``tir.PrimFunc``s.

The source comes from ``inspect.getsource``; names the script uses resolve in the caller's locals (captured when the
decorator runs, so a size defined in the enclosing test function is visible), the function's closure, then its
globals, as TVM's parser resolves them.
"""

import ast
import inspect
import textwrap

from ..error import TIRError
from ..ir.type import PrimType
from ..tir import expr as E
from ..tir.buffer import Buffer
from ..tir.function import PrimFunc
from .parser import Parser, ScriptError
from .tir import frames as F


def _decorator_names(node) -> list:
    out = []
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        out.append(target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", ""))
    return out


def is_private(node) -> bool:
    """Whether the decorator says ``@T.prim_func(private=True)``."""
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call):
            for k in dec.keywords:
                if k.arg == "private" and isinstance(k.value, ast.Constant):
                    return bool(k.value.value)
    return False


def parse_prim_func(node, env, source_name="<tvmscript>", line_offset=0, extra_names=None) -> PrimFunc:
    """The PrimFunc of the ``ast.FunctionDef`` ``node``, with ``env`` the names visible to it."""
    parser = Parser(env, source_name, line_offset)
    if extra_names:
        parser.scopes[0].update(extra_names)
    frame = F.PrimFuncFrame(node.name)
    frame.enter()
    try:
        if node.returns is not None:
            ret = parser.eval(node.returns)
            if ret is not None:  # `-> None`: returns nothing
                frame.ret_type = PrimType(ret.dtype if hasattr(ret, "dtype") else str(ret))
        for arg in node.args.args:
            if arg.annotation is None:
                parser.error(arg, f"parameter {arg.arg} needs a type annotation (T.Buffer, T.handle, T.int32)")
            F.set_names([arg.arg])
            try:
                ann = parser.eval(arg.annotation)
                if callable(ann) and not isinstance(ann, Buffer):
                    ann = ann()
            finally:
                F.set_names([])
            if isinstance(ann, Buffer):
                var = E.Var(arg.arg, "handle")
                frame.params.append(var)
                frame.buffer_map[var] = ann
                parser.bind(arg.arg, ann)
            elif isinstance(ann, E.Var):
                frame.params.append(ann)
                parser.bind(arg.arg, ann)
            else:
                parser.error(arg, f"parameter {arg.arg}: unsupported annotation {type(ann).__name__}")
        body = parser.body(node.body)
    finally:
        F.unwind(frame)
    from .tir.block import complete_function

    body = complete_function(body, frame.root_alloc_buffers)
    attrs = dict(frame.attrs)
    if not is_private(node) and "global_symbol" not in attrs:
        attrs["global_symbol"] = frame.name
    return PrimFunc(frame.params, body, frame.ret_type, frame.buffer_map, attrs)


def _source(obj):
    try:
        lines, first = inspect.getsourcelines(obj)
    except (OSError, TypeError) as exc:
        raise TIRError(f"TVMScript: cannot read the source of {getattr(obj, '__name__', obj)}: {exc}") from exc
    text = textwrap.dedent("".join(lines))
    return ast.parse(text), inspect.getsourcefile(obj) or "<tvmscript>", first - 1


def capture_env(obj, caller_locals) -> dict:
    """The names a script sees: the caller's locals over the closure over the globals."""
    env = dict(getattr(obj, "__globals__", None) or vars(inspect.getmodule(obj) or object()))
    code = getattr(obj, "__code__", None)
    if code is not None and obj.__closure__:
        for name, cell in zip(code.co_freevars, obj.__closure__, strict=True):
            try:
                env[name] = cell.cell_contents
            except ValueError:
                pass
    env.update(caller_locals or {})
    return env


def parse_decorated_function(func, caller_locals) -> PrimFunc:
    """The PrimFunc of a function decorated with ``@T.prim_func``."""
    tree, filename, offset = _source(func)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise ScriptError(f"{filename}: @T.prim_func decorates a function")
    return parse_prim_func(node, capture_env(func, caller_locals), filename, offset)


def parse_module_class(cls, caller_locals):
    """The IRModule of a class decorated with ``@I.ir_module``: one PrimFunc per ``@T.prim_func`` method."""
    from ..ir.expr import GlobalVar
    from ..ir.module import IRModule

    tree, filename, offset = _source(cls)
    node = tree.body[0]
    if not isinstance(node, ast.ClassDef):
        raise ScriptError(f"{filename}: @I.ir_module decorates a class")
    env = dict(vars(inspect.getmodule(cls)) if inspect.getmodule(cls) else {})
    env.update(caller_locals or {})
    defs = [n for n in node.body if isinstance(n, ast.FunctionDef)]
    gvars = {n.name: GlobalVar(n.name) for n in defs}
    functions = {}
    for fn in defs:
        if "prim_func" not in _decorator_names(fn):
            raise ScriptError(f"{filename}:{fn.lineno + offset}: kiln's TVMScript parses @T.prim_func methods only")
        functions[gvars[fn.name]] = parse_prim_func(fn, env, filename, offset, extra_names=gvars)
    return IRModule(functions)


def from_source(text, extra_vars=None):
    """Parse TVMScript text (what ``func.script()`` prints): a PrimFunc, or an IRModule for a class."""
    from .. import tir as _tir
    from . import ir as I  # noqa: N812
    from . import tir as T  # noqa: N812

    env = {"T": T, "I": I, "tir": _tir}
    try:
        import kiln

        env["tvm"] = kiln
    except ImportError:  # pragma: no cover
        pass
    env.update(extra_vars or {})
    tree = ast.parse(textwrap.dedent(text))
    nodes = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    if len(nodes) != 1:
        raise ScriptError("TVMScript source: expected one function or one class")
    node = nodes[0]
    if isinstance(node, ast.FunctionDef):
        return parse_prim_func(node, env)
    from ..ir.expr import GlobalVar
    from ..ir.module import IRModule

    defs = [n for n in node.body if isinstance(n, ast.FunctionDef)]
    gvars = {n.name: GlobalVar(n.name) for n in defs}
    return IRModule({gvars[fn.name]: parse_prim_func(fn, env, extra_names=gvars) for fn in defs})
