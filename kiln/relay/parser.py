"""The Relay text parser: ``relay.parse(text)`` (alias ``fromtext``) and ``relay.parse_expr(text)``.

Reads what :mod:`kiln.relay.printer` writes (and TVM's text format in general)::

    module := [#[version = "0.0.5"]] {def @name(params [, attr=value...]) [-> type] { block }} [#[metadata] json]
    block  := {%n = expr; | let %x[: type] = expr; | free_var %x[: type];} expr
    expr   := term {(+ | - | * | /) term}          (add, subtract, multiply, divide)
    term   := [-] atom {(args [, key=value...]) | .index}
    atom   := %x | %n | @f | op.name | literal | meta[key][i] | (block) | () | (e,) | (e, e...)
            | fn (params [, attrs]) [-> type] { block } | if (expr) { block } else { block }

How it works: a hand-written recursive-descent parser over the token list from :mod:`kiln.relay.lexer`. A block's
statements are read in a loop and its lets are folded into nested ``Let`` nodes from the end, so a 10,000-line
function needs no recursion. Names live in two tables (locals ``%x`` and graph bindings ``%0``) with an undo log:
entering a scope remembers the log length, leaving it restores shadowed entries, so lookups stay O(1). Every
expression gets a :class:`kiln.ir.Span` (source name, line, column, end). Errors raise
:class:`kiln.error.DiagnosticError` with the line and column of the offending token and what was expected there.
"""

import dataclasses

from ..error import DiagnosticError, KilnError
from ..ir import diagnostics
from ..ir.adt import Constructor
from ..ir.attrs import Attrs, DictAttrs, make_node
from ..ir.expr import GlobalVar, RelayExpr
from ..ir.json import load_json
from ..ir.module import IRModule
from ..ir.op import Op
from ..ir.span import Span
from ..ir.type import IncompleteType, TensorType
from ..runtime.ndarray import array as nd_array
from .expr import Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from .function import Function
from .lexer import tokenize
from .parser_types import TypeParsing
from .text_literals import index_prefixes, literal_array, number_value

_MISSING = object()
# infix operators: (operator, precedence); all associate to the left
_BINARY = {"==": ("equal", 1), "!=": ("not_equal", 1), "<": ("less", 2), ">": ("greater", 2),
           "<=": ("less_equal", 2), ">=": ("greater_equal", 2), "+": ("add", 3), "-": ("subtract", 3),
           "*": ("multiply", 4), "/": ("divide", 4)}
_BLOCK_START = ("let", "free_var")
_REF_FORMS = {"ref": 1, "ref_read": 1, "ref_write": 2}


def _describe(tok) -> str:
    kind, value = tok[0], tok[1]
    if kind == "EOF":
        return "end of input"
    if kind in ("LOCAL", "QLOCAL"):
        return f"%{value}"
    if kind == "GRAPH":
        return f"%{value}"
    if kind == "GLOBAL":
        return f"@{value}"
    if kind == "META":
        return f"meta[{value[0]}][{value[1]}]"
    if kind == "PROJ":
        return f".{value}"
    if kind == "METADATA":
        return "#[metadata]"
    if kind == "VERSION":
        return "#[version]"
    return f"`{value}`"


class Parser(TypeParsing):
    """Parses one text; see the module docstring. Use :func:`parse` or :func:`parse_expr`."""

    describe = staticmethod(_describe)

    def __init__(self, text, source_name="from_string", meta_table=None):
        if not isinstance(text, str):
            raise KilnError(f"relay.parse expects the text as a str, got {type(text).__name__}")
        self.source_name = source_name
        self.tokens = tokenize(text)
        self.pos = 0
        self.meta = dict(meta_table or {})
        last = self.tokens[-4] if len(self.tokens) > 3 else None  # before the three EOF tokens
        if last is not None and last[0] == "METADATA":
            self._load_metadata(last)
        self.locals: dict = {}
        self.graph: dict = {}
        self.undo: list = []
        self.global_refs: list = []
        self.literals: dict = {}
        self.defined_types: dict = {}
        self.init_types()

    def _load_metadata(self, tok):
        try:
            table = load_json(tok[1])
        except KilnError as exc:
            raise DiagnosticError(f"invalid metadata section: {exc}", tok[2], tok[3]) from None
        if not isinstance(table, dict):
            raise DiagnosticError("the metadata section must map type keys to lists of nodes", tok[2], tok[3])
        for key, nodes in table.items():
            self.meta.setdefault(key, list(nodes) if isinstance(nodes, list | tuple) else nodes)

    # ---------------------------------------------------------------------------------------------- token helpers
    def peek(self, ahead=0):
        return self.tokens[self.pos + ahead]  # ahead <= 2: the token list ends with three EOF tokens

    def advance(self):
        tok = self.tokens[self.pos]
        if tok[0] != "EOF":
            self.pos += 1
        return tok

    def error(self, message, tok=None):
        tok = tok or self.peek()
        return DiagnosticError(message, tok[2], tok[3])

    def expect(self, kind, what=None):
        tok = self.peek()
        if tok[0] != kind:
            raise self.error(f"expected {what or '`' + kind + '`'}, found {_describe(tok)}", tok)
        self.pos += 1
        return tok

    def expect_ident(self, word):
        tok = self.peek()
        if tok[0] != "IDENT" or tok[1] != word:
            raise self.error(f"expected `{word}`, found {_describe(tok)}", tok)
        self.pos += 1
        return tok

    def accept(self, kind):
        if self.tokens[self.pos][0] == kind:
            return self.advance()
        return None

    def span(self, start):
        """The span from token ``start`` to the last consumed token."""
        end = self.tokens[self.pos - 1] if self.pos else start
        return Span(self.source_name, start[2], start[3], end[2], end[4])

    # ----------------------------------------------------------------------------------------------------- scopes
    def bind(self, table, key, value):
        self.undo.append((table, key, table.get(key, _MISSING)))
        table[key] = value

    def leave(self, marker):
        undo = self.undo
        while len(undo) > marker:
            table, key, old = undo.pop()
            if old is _MISSING:
                del table[key]
            else:
                table[key] = old

    # ---------------------------------------------------------------------------------------------------- module
    def parse_module(self, init_module=None) -> IRModule:
        """``[#[version]] {def | type | extern type} [#[metadata]]`` -> IRModule (definitions added to a copy of
        ``init_module``)."""
        self.accept("VERSION")
        self.init_types(init_module)
        mod = IRModule(init_module.functions if init_module is not None else None,
                       init_module.type_definitions if init_module is not None else None,
                       attrs=init_module.attrs if init_module is not None else None)
        self.defined_types = {gtv.name_hint: data for gtv, data in mod.type_definitions.items()}
        defined: dict = {}
        while self.peek()[0] not in ("EOF", "METADATA"):
            start = self.peek()
            if start[0] == "GLOBAL":
                raise self.error(f"cannot parse the definition of @{start[1]}: only Relay functions (`def`) are "
                                 "read back, not lowered PrimFuncs", start)
            if start[0] == "IDENT" and start[1] in ("type", "extern"):
                if start[1] == "extern":
                    self.advance()
                data = self.parse_type_def(extern=start[1] == "extern")
                self.defined_types[data.header.name_hint] = data
                mod[data.header] = data
                continue
            if start[0] != "IDENT" or start[1] != "def":
                raise self.error(f"expected `def`, `type` or `extern type`, found {_describe(start)}", start)
            self.advance()
            name_tok = self.expect("GLOBAL", "a global function name such as `@main`")
            if name_tok[1] in defined:
                raise self.error(f"@{name_tok[1]} is defined twice", name_tok)
            self.graph = {}
            marker = len(self.undo)
            type_params = self.parse_type_params() if self.peek()[0] == "[" else ()
            func = self.parse_function_rest(start, type_params)
            self.leave(marker)
            gv = GlobalVar(name_tok[1], span=Span(self.source_name, name_tok[2], name_tok[3]))
            defined[name_tok[1]] = func
            mod[gv] = func
        self.accept("METADATA")
        self.expect("EOF", "end of input")
        for name, tok in self.global_refs:
            if name not in mod:
                raise self.error(f"unknown global function @{name}", tok)
        self.check_type_refs()
        attrs = self.meta.get("attributes")
        if attrs:
            mod = IRModule(mod.functions, mod.type_definitions, attrs=attrs[0])
        return mod

    def parse_whole_expr(self):
        """``[#[version]] block [#[metadata]]`` -> expression."""
        self.accept("VERSION")
        expr = self.parse_block()
        self.accept("METADATA")
        self.expect("EOF", "end of input")
        return expr

    # ------------------------------------------------------------------------------------------------- functions
    def parse_function_rest(self, start, type_params=()) -> Function:
        """``(params [, attrs]) [-> type] { block }`` after ``def @name[A...]`` or ``fn [A...]``."""
        self.expect("(")
        marker = len(self.undo)
        params, attrs = [], {}
        if self.peek()[0] != ")":
            while True:
                tok = self.peek()
                if tok[0] == "IDENT" and self.peek(1)[0] == "=":
                    self.pos += 2
                    attrs[tok[1]] = self.parse_attr_value()
                elif attrs:
                    raise self.error(f"expected a function attribute `key=value` after the attributes, found "
                                     f"{_describe(tok)}", tok)
                else:
                    params.append(self.parse_var_decl("a parameter such as `%x: Tensor[(1), float32]`"))
                if not self.accept(","):
                    break
        self.expect(")", "`,` or `)` after a parameter")
        ret_type = self.parse_type() if self.accept("->") else None
        self.expect("{", "`{` opening the function body")
        body = self.parse_block()
        self.expect("}", "`}` closing the function body")
        self.leave(marker)
        if isinstance(ret_type, IncompleteType):
            ret_type = None
        return Function(params, body, ret_type, attrs=DictAttrs.make(attrs), type_params=tuple(type_params),
                        span=self.span(start))

    def parse_var_decl(self, what, bind=True) -> Var:
        """``%x[: type]``: a new variable, bound in the current scope unless ``bind`` is False."""
        tok = self.peek()
        if tok[0] not in ("LOCAL", "QLOCAL"):
            raise self.error(f"expected {what}, found {_describe(tok)}", tok)
        self.pos += 1
        virtual_device = None
        if self.accept("{"):  # `%x {virtual_device=meta[VirtualDevice][0]}`: where the value lives
            while not self.accept("}"):
                key = self.peek()
                if key[0] != "IDENT" or key[1] != "virtual_device" or self.peek(1)[0] != "=":
                    raise self.error(f"expected `virtual_device=...` in the attributes of %{tok[1]}, found "
                                     f"{_describe(key)}", key)
                self.pos += 2
                virtual_device = self.parse_attr_value()
                self.accept(",")
        ttype = self.parse_type() if self.accept(":") else None
        if isinstance(ttype, IncompleteType):  # `%x: _` declares no type
            ttype = None
        var = Var(tok[1], ttype, span=self.span(tok), virtual_device_=virtual_device)
        if bind:
            self.bind(self.locals, tok[1], var)
        return var

    # ----------------------------------------------------------------------------------------------------- blocks
    def parse_block(self):
        """Statements then a final expression; lets become nested Let nodes built from the end (no recursion)."""
        marker = len(self.undo)
        lets = []
        while True:
            tok = self.peek()
            kind = tok[0]
            if kind == "GRAPH" and self.peek(1)[0] == "=":
                self.pos += 2
                value = self.parse_expr()
                self.expect(";", f"`;` after the binding of %{tok[1]}")
                self.bind(self.graph, tok[1], value)
            elif kind == "IDENT" and tok[1] == "let":
                self.pos += 1
                name_tok = self.peek()
                var = self.parse_var_decl("a variable after `let`", bind=False)
                if self.peek()[0] == "=" and self.peek(1)[0:2] == ("IDENT", "fn"):
                    self.bind(self.locals, name_tok[1], var)  # a closure may call itself
                self.expect("=", "`=` after the let variable")
                value = self.parse_expr()
                self.expect(";", "`;` after the let value")
                self.bind(self.locals, name_tok[1], var)
                lets.append((var, value, tok))
            elif kind == "IDENT" and tok[1] == "free_var":
                self.pos += 1
                self.parse_var_decl("a variable after `free_var`")
                self.expect(";", "`;` after the free variable")
            else:
                expr = self.parse_expr()
                if not self.accept(";"):
                    body = expr
                    break
                lets.append((Var("_"), expr, tok))  # `e1; e2` evaluates e1 for its effect, then e2
        self.leave(marker)
        for var, value, tok in reversed(lets):
            body = Let(var, value, body, span=Span(self.source_name, tok[2], tok[3]))
        return body

    # ------------------------------------------------------------------------------------------------ expressions
    def parse_expr(self, min_prec=1):
        """An expression with infix ``== != < > <= >= + - * /`` (precedence climbing)."""
        start = self.peek()
        lhs = self.parse_unary()
        while True:
            entry = _BINARY.get(self.tokens[self.pos][0])
            if entry is None or entry[1] < min_prec:
                return lhs
            self.pos += 1
            rhs = self.parse_expr(entry[1] + 1)
            lhs = Call(Op.get(entry[0]), (lhs, rhs), span=self.span(start))

    def parse_unary(self):
        tok = self.peek()
        if tok[0] == "-":
            self.pos += 1
            if self.peek()[0] == "NUM":
                return self.parse_postfix(self.parse_literal(negative=True, start=tok), tok)
            operand = self.parse_unary()
            if type(operand) is Constant and operand.data.ndim == 0:  # `--1` is the literal 1, as in TVM
                value = -operand.data.numpy()
                return Constant(nd_array(value), span=self.span(tok), checked_type_=operand.checked_type_)
            return Call(Op.get("negative"), (operand,), span=self.span(tok))
        return self.parse_postfix(self.parse_atom(), tok)

    def parse_postfix(self, expr, start):
        tokens = self.tokens
        while True:
            kind = tokens[self.pos][0]
            if kind == "(":
                expr = self.parse_call(expr, start)
            elif kind == "PROJ":
                self.pos += 1
                expr = TupleGetItem(expr, tokens[self.pos - 1][1], span=self.span(start))
            elif type(expr) is Constructor and not expr.inputs:  # `Nil` is the value the constructor makes
                return Call(expr, (), span=self.span(start))
            else:
                return expr

    def parse_atom(self):
        tok = self.peek()
        kind = tok[0]
        if kind == "GRAPH":
            self.pos += 1
            value = self.graph.get(tok[1])
            if value is None:
                raise self.error(f"%{tok[1]} is not bound (expected `%{tok[1]} = ...;` before its use)", tok)
            return value
        if kind == "LOCAL":
            self.pos += 1
            return self.resolve_local(tok)
        if kind == "QLOCAL":
            self.pos += 1
            var = self.locals.get(tok[1])
            if var is None:
                raise self.error(f"unbound variable %{tok[1]!r}", tok)
            return var
        if kind == "GLOBAL":
            self.pos += 1
            self.global_refs.append((tok[1], tok))
            return GlobalVar(tok[1], span=self.span(tok))
        if kind == "NUM":
            return self.parse_literal()
        if kind == "META":
            self.pos += 1
            node = self.meta_node(tok)
            if not isinstance(node, RelayExpr):
                raise self.error(f"meta[{tok[1][0]}][{tok[1][1]}] is a {type(node).__name__}, not an expression", tok)
            return node
        if kind == "(":
            return self.parse_paren()
        if kind == "IDENT":
            word = tok[1]
            if word == "fn":
                self.pos += 1
                marker = len(self.undo)
                type_params = self.parse_type_params() if self.peek()[0] == "[" else ()
                func = self.parse_function_rest(tok, type_params)
                self.leave(marker)
                return func
            if word == "if":
                return self.parse_if()
            if word == "match":
                return self.parse_match()
            if word in _REF_FORMS and self.peek(1)[0] == "(":
                return self.parse_ref(word)
            ctor = self.ctors.get(word)
            if ctor is not None:
                self.pos += 1
                return ctor
            if word in ("True", "False"):
                self.pos += 1
                return Constant(nd_array(literal_array(word == "True", "bool")), span=self.span(tok))
            if word in ("let", "free_var", "def", "else"):
                raise self.error(f"`{word}` cannot start an expression here", tok)
            self.pos += 1
            try:
                return Op.get(word)
            except KilnError:
                raise self.error(f"unknown operator `{word}`", tok) from None
        raise self.error(f"expected an expression, found {_describe(tok)}", tok)

    def resolve_local(self, tok):
        """``%name``, or ``%name.0.1`` read as projections of ``%name`` when the dotted name is not bound."""
        name = tok[1]
        var = self.locals.get(name)
        if var is not None:
            return var
        for prefix in index_prefixes(name):
            var = self.locals.get(prefix)
            if var is not None:
                expr = var
                for index in name[len(prefix) + 1 :].split("."):
                    expr = TupleGetItem(expr, int(index), span=self.span(tok))
                return expr
        raise self.error(f"unbound variable %{name}", tok)

    def parse_literal(self, negative=False, start=None):
        tok = self.advance()
        key = (tok[1], negative)
        cached = self.literals.get(key)
        if cached is None:
            try:
                value, dtype = number_value(tok[1], negative)
                arr = literal_array(value, dtype)
            except (ValueError, TypeError, OverflowError) as exc:
                raise self.error(f"invalid number {tok[1]}: {exc}", tok) from None
            cached = self.literals[key] = (arr, TensorType((), arr.dtype.name))
        # a new Constant per occurrence, as in the printed graph; only the decoding is shared
        return Constant(nd_array(cached[0]), span=self.span(start or tok), checked_type_=cached[1])

    def meta_node(self, tok):
        key, index = tok[1]
        table = self.meta.get(key)
        if table is None:
            raise self.error(f"meta[{key}][{index}] refers to a metadata table {key!r} that the text does not have "
                             "(print with show_meta_data=True or pass init_meta_table)", tok)
        if not 0 <= index < len(table):
            raise self.error(f"meta[{key}][{index}] is out of range: the metadata has {len(table)} {key} entries",
                             tok)
        return table[index]

    def parse_paren(self):
        start = self.advance()
        tok = self.peek()
        if (tok[0] == "IDENT" and tok[1] in _BLOCK_START) or (tok[0] == "GRAPH" and self.peek(1)[0] == "="):
            expr = self.parse_block()
            self.expect(")", "`)` closing the let block")
            return expr
        if self.accept(")"):
            return Tuple((), span=self.span(start))
        first = self.parse_expr()
        if self.accept(")"):
            return first
        fields = [first]
        while self.accept(","):
            if self.peek()[0] == ")":
                break
            fields.append(self.parse_expr())
        self.expect(")", "`,` or `)` in a tuple")
        return Tuple(fields, span=self.span(start))

    def parse_ref(self, word):
        """``ref(e)``, ``ref_read(e)``, ``ref_write(e, v)``."""
        start = self.advance()
        self.expect("(")
        operands = [self.parse_expr()]
        for _ in range(_REF_FORMS[word] - 1):
            self.expect(",", f"`,` between the operands of {word}")
            operands.append(self.parse_expr())
        self.expect(")", f"`)` closing {word}")
        make = {"ref": RefCreate, "ref_read": RefRead, "ref_write": RefWrite}[word]
        return make(*operands, span=self.span(start))

    def parse_if(self):
        start = self.advance()
        self.expect("(", "`(` after `if`")
        cond = self.parse_expr()
        self.expect(")", "`)` closing the condition")
        branches = []
        for i in range(2):
            if i:
                self.expect_ident("else")
            self.expect("{", "`{` opening a branch")
            marker = len(self.undo)
            branches.append(self.parse_block())
            self.leave(marker)
            self.expect("}", "`}` closing a branch")
        return If(cond, branches[0], branches[1], span=self.span(start))

    def parse_call(self, callee, start):
        self.expect("(")
        args, kwargs, attrs = [], {}, None
        if self.peek()[0] != ")":
            while True:
                tok = self.peek()
                if tok[0] == "IDENT" and self.peek(1)[0] == "=":
                    self.pos += 2
                    if tok[1] in kwargs:
                        raise self.error(f"attribute {tok[1]} is given twice", tok)
                    kwargs[tok[1]] = (self.parse_attr_value(), tok)
                elif tok[0] == "META" and isinstance(self.meta_node(tok), Attrs):
                    self.pos += 1
                    attrs = self.meta_node(tok)
                elif kwargs:
                    raise self.error(f"expected an attribute `key=value` after the attributes, found "
                                     f"{_describe(tok)}", tok)
                else:
                    args.append(self.parse_expr())
                if not self.accept(","):
                    break
        self.expect(")", "`,` or `)` in the argument list")
        if isinstance(callee, Op):
            attrs = self.make_attrs(callee, kwargs, start) if attrs is None else attrs
        elif "attrs_type_key" in kwargs:  # attributes of a function's call name their record, as TVM prints them
            key, tok = kwargs.pop("attrs_type_key")
            try:
                attrs = make_node(key, **{k: v for k, (v, _) in kwargs.items()})
            except KilnError as exc:
                raise self.error(f"invalid call attributes: {exc}", tok) from None
        elif kwargs:
            name, tok = next(iter(kwargs.items()))
            raise self.error(f"attribute {name} given to a call of a non-operator (without attrs_type_key)", tok[1])
        return Call(callee, tuple(args), attrs, span=self.span(start))

    def make_attrs(self, op, kwargs, start):
        """Build ``op``'s attribute record from ``key=value`` arguments (its defaults for the others)."""
        attrs_type = op.get_attr("attrs_type")
        if attrs_type is None:
            if kwargs:
                name, (_, tok) = next(iter(kwargs.items()))
                raise self.error(f"operator {op.name} takes no attributes, got {name}", tok)
            return None
        known = {f.name for f in dataclasses.fields(attrs_type)}
        for name, (_, tok) in kwargs.items():
            if name not in known:
                raise self.error(f"unknown attribute {name} of operator {op.name} ({attrs_type.__name__} has "
                                 f"{', '.join(sorted(known))})", tok)
        missing = [f.name for f in dataclasses.fields(attrs_type) if f.name not in kwargs
                   and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        if missing:
            raise self.error(f"operator {op.name}: missing attributes {', '.join(missing)}", start)
        try:
            return attrs_type(**{k: v for k, (v, _) in kwargs.items()})
        except (KilnError, ValueError, TypeError, ArithmeticError) as exc:  # 1e400 where an int goes: inf
            raise self.error(f"invalid attributes for operator {op.name}: {exc}", start) from None

    def parse_attr_value(self):
        """``1``, ``-2``, ``1e-05f``, ``"NHWC"``, ``True``, ``None``, ``[1, [2, 3]]``, ``meta[...][i]``."""
        tok = self.peek()
        kind = tok[0]
        if kind == "-" and self.peek(1)[0] == "NUM":
            self.pos += 1
            return self._attr_number(self.advance(), True)
        if kind == "NUM":
            return self._attr_number(self.advance(), False)
        if kind == "STR":
            self.pos += 1
            return tok[1]
        if kind == "IDENT" and tok[1] in ("True", "False", "None"):
            self.pos += 1
            return {"True": True, "False": False, "None": None}[tok[1]]
        if kind in ("[", "("):
            close = "]" if kind == "[" else ")"
            self.pos += 1
            items = []
            while self.peek()[0] != close:
                items.append(self.parse_attr_value())
                if not self.accept(","):
                    break
            self.expect(close, f"`,` or `{close}` in a list attribute")
            return tuple(items)
        if kind == "META":
            self.pos += 1
            return self.meta_node(tok)
        raise self.error(f"expected an attribute value (number, string, True/False/None or [...]), found "
                         f"{_describe(tok)}", tok)

    def _attr_number(self, tok, negative):
        try:
            value, dtype = number_value(tok[1], negative)
        except ValueError as exc:
            raise self.error(f"invalid number {tok[1]}: {exc}", tok) from None
        return float(value) if dtype is not None and dtype.startswith("float") else value


def parse(text, init_module=None, init_meta_table=None, source_name="from_string") -> IRModule:
    """Parse a module in the Relay text format (what ``str(mod)`` prints) and type it with InferType, as TVM does.

    Parameters
    ----------
    text : str
        The module text: ``def`` functions, optionally the version header and the metadata section.
    init_module : IRModule, optional
        Functions (and data types) the text may use (``@f``); the result holds them plus the parsed ones. A str here
        is taken as ``source_name``, the arguments then being in TVM's order ``parse(source, source_name,
        init_module, init_meta_table)``.
    init_meta_table : dict, optional
        ``{"relay.Constant": [c0, c1, ...]}`` resolving ``meta[relay.Constant][i]`` when the text has no metadata.
    source_name : str
        The name spans carry.

    Returns
    -------
    mod : IRModule
        Typed: unannotated variables and return types are filled in, every node has its checked type.

    Raises
    ------
    DiagnosticError
        With the line and column of the first problem and what was expected there.
    TypeInferenceError
        When the program does not type-check.

    Examples
    --------
    >>> mod = parse(str(IRModule.from_expr(relay.nn.relu(relay.var("x", shape=(2,))))))   # doctest: +SKIP
    """
    if isinstance(init_module, str):  # TVM's order: parse(source, source_name, init_module, init_meta_table)
        tvm_meta = source_name if isinstance(source_name, dict) else None
        source_name, init_module, init_meta_table = init_module, init_meta_table, tvm_meta
    parser = Parser(text, source_name, init_meta_table)
    mod = _guarded(parser, parser.parse_module, init_module)
    # as TVM's ParseModule: the parsed module is type-checked, so the text means the typed program (a type error is
    # an error of the text) and it compares equal to what a pass returns
    from .transform.infer_type import infer_type

    return infer_type(mod)


def fromtext(text, source_name="from_string") -> IRModule:
    """Alias of :func:`parse` (TVM's ``relay.fromtext``)."""
    return parse(text, source_name=source_name)


def parse_expr(text, init_meta_table=None, source_name="from_string"):
    """Parse one expression: optional ``free_var`` lines and bindings, then the expression.

    Examples
    --------
    >>> parse_expr("free_var %x: float32; add(%x, 1f)")   # doctest: +SKIP
    """
    parser = Parser(text, source_name, init_meta_table)
    return _guarded(parser, parser.parse_whole_expr)


def _guarded(parser, method, *args):
    """Run a parse method, reporting nesting beyond Python's recursion limit as a diagnostic, not a crash."""
    try:
        try:
            return method(*args)
        except RecursionError:
            raise parser.error("expressions are nested too deeply to parse; bind inner expressions with "
                               "`%n = ...;`") from None
    except DiagnosticError as exc:
        diagnostics.report(exc)
