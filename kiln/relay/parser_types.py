"""The Relay text parser's types, type definitions and pattern matching (a mixin of :class:`kiln.relay.parser.Parser`)::

    typedef := type Name[A, ...] { Ctor(type, ...), ... } | extern type Name[A, ...]
    type    := dtype | Tensor[(d, ...), dtype] | (type, ...) | fn [A, ...](type, ...) -> type | A | Name[type, ...]
             | ref(type) | _
    match   := match atom { pattern => expr-or-{block}, ... }       (match? for a partial match)
    pattern := _ | %x[: type] | Ctor[(pattern, ...)] | (pattern, ...)

Names: type variables (``A``) are bound by ``def @f[A]``, ``fn [A]``, ``fn [A](...) -> ...`` types and type
definitions, and looked up innermost first, through the parser's undo log as local variables are. Data type names
(``List``) and constructor names (``Cons``) are global to the text, plus those of the initial module; a data type
may be named before its definition (``type List[A] { Cons(A, List[A]) }``), a constructor only after it.
"""

from ..error import KilnError
from ..ir.adt import Constructor, TypeData
from ..ir.span import Span
from ..ir.type import Any, TensorType, TupleType
from ..ir.type_poly import FuncType, GlobalTypeVar, IncompleteType, RelayRefType, TypeCall, TypeVar
from .adt import Clause, Match, PatternConstructor, PatternTuple, PatternVar, PatternWildcard
from .expr import Var
from .text_literals import number_value


class TypeParsing:
    """Parsing of types, type definitions, patterns and ``match`` (mixed into the parser; uses its token helpers,
    ``bind``/``leave`` scopes and ``locals`` table)."""

    def init_types(self, init_module=None):
        """Start the tables of type variables, data types and constructors (those of ``init_module`` included)."""
        self.type_vars: dict = {}
        self.type_names: dict = {}
        self.type_refs: list = []  # data type names used, checked to be defined at the end
        self.ctors: dict = {}
        if init_module is not None:
            for gtv, data in init_module.type_definitions.items():
                self.type_names[gtv.name_hint] = gtv
                for ctor in data.constructors:
                    self.ctors[ctor.name_hint] = ctor

    # ------------------------------------------------------------------------------------------- type definitions
    def parse_type_def(self, extern=False) -> TypeData:
        """``type Name[A, ...] { Ctor(types), ... }`` (after ``extern``: no constructors)."""
        start = self.expect_ident("type")
        name_tok = self.expect("IDENT", "the name of the data type")
        name = name_tok[1]
        known = self.type_names.get(name)
        if known is not None and getattr(self, "defined_types", {}).get(name):
            raise self.error(f"type {name} is defined twice", name_tok)
        gtv = known or GlobalTypeVar(name, span=Span(self.source_name, name_tok[2], name_tok[3]))
        self.type_names[name] = gtv
        marker = len(self.undo)
        type_vars = self.parse_type_params() if self.peek()[0] == "[" else []
        ctors = []
        if not extern:
            self.expect("{", f"`{{` opening the constructors of {name}")
            while self.peek()[0] != "}":
                ctor_tok = self.expect("IDENT", "a constructor name")
                if ctor_tok[1] in self.ctors or any(c.name_hint == ctor_tok[1] for c in ctors):
                    raise self.error(f"a constructor named {ctor_tok[1]} is already defined", ctor_tok)
                inputs = []
                if self.accept("("):
                    while self.peek()[0] != ")":
                        inputs.append(self.parse_type())
                        if not self.accept(","):
                            break
                    self.expect(")", "`,` or `)` in the constructor's field types")
                ctors.append(Constructor(ctor_tok[1], inputs, gtv,
                                         span=Span(self.source_name, ctor_tok[2], ctor_tok[3])))
                if not self.accept(","):
                    break
            self.expect("}", f"`}}` closing the constructors of {name}")
        self.leave(marker)
        for ctor in ctors:
            self.ctors[ctor.name_hint] = ctor
        try:
            data = TypeData(gtv, type_vars, ctors)
        except KilnError as exc:
            raise self.error(str(exc), start) from None
        return data

    def parse_type_params(self) -> list:
        """``[A, B]``: new type variables, bound in the current scope."""
        self.expect("[")
        params = []
        while self.peek()[0] != "]":
            tok = self.expect("IDENT", "a type parameter name")
            tv = TypeVar(tok[1], span=Span(self.source_name, tok[2], tok[3]))
            self.bind(self.type_vars, tok[1], tv)
            params.append(tv)
            if not self.accept(","):
                break
        self.expect("]", "`,` or `]` after a type parameter")
        return params

    # ------------------------------------------------------------------------------------------------------ types
    def parse_type(self):
        """A type (see the module docstring); ``_`` is a type left to inference."""
        tok = self.peek()
        if tok[0] == "(":
            self.pos += 1
            fields = []
            while self.peek()[0] != ")":
                fields.append(self.parse_type())
                if not self.accept(","):
                    break
            self.expect(")", "`,` or `)` in a tuple type")
            return TupleType(fields)
        if tok[0] != "IDENT":
            raise self.error(f"expected a type, found {self.describe(tok)}", tok)
        self.pos += 1
        word = tok[1]
        if word == "Tensor":
            return self._parse_tensor_type()
        if word == "fn":
            return self._parse_func_type()
        if word == "_":
            return IncompleteType()
        if word == "ref" and self.peek()[0] == "(":
            self.pos += 1
            value = self.parse_type()
            self.expect(")", "`)` closing the reference type")
            return RelayRefType(value)
        tv = self.type_vars.get(word)
        if tv is not None:
            return tv
        gtv = self.type_names.get(word)
        if gtv is None:
            try:
                return TensorType((), word)
            except KilnError:
                gtv = self.type_names[word] = GlobalTypeVar(word)  # a data type defined further down
        self.type_refs.append((word, tok))
        if self.accept("["):
            args = []
            while self.peek()[0] != "]":
                args.append(self.parse_type())
                if not self.accept(","):
                    break
            self.expect("]", "`,` or `]` in the type arguments")
            return TypeCall(gtv, args)
        return gtv

    def _parse_tensor_type(self):
        self.expect("[", "`[` after `Tensor`")
        self.expect("(", "`(` opening the shape")
        shape: list = []
        while self.peek()[0] != ")":
            if self.accept("?"):
                shape.append(Any())
            else:
                dim = self.expect("NUM", "a dimension (a non-negative integer)")
                try:
                    value, _ = number_value(dim[1])
                except ValueError:
                    value = None
                if not isinstance(value, int):
                    raise self.error(f"a dimension must be an integer, found {dim[1]}", dim)
                shape.append(value)
            if not self.accept(","):
                break
        self.expect(")", "`,` or `)` in the shape")
        self.expect(",", "`,` before the dtype")
        dtype = self.expect("IDENT", "a dtype such as float32")
        self.expect("]", "`]` closing the tensor type")
        return self.tensor_type(shape, dtype)

    def tensor_type(self, shape, dtype_tok):
        """``Tensor[shape, dtype]``, or a diagnostic naming the unknown dtype."""
        try:
            return TensorType(tuple(shape), dtype_tok[1])
        except KilnError:
            raise self.error(f"unknown type or dtype `{dtype_tok[1]}`", dtype_tok) from None

    def _parse_func_type(self):
        marker = len(self.undo)
        type_params = self.parse_type_params() if self.peek()[0] == "[" else []
        self.expect("(", "`(` after `fn`")
        args = []
        while self.peek()[0] != ")":
            args.append(self.parse_type())
            if not self.accept(","):
                break
        self.expect(")", "`,` or `)` in a function type")
        self.expect("->", "`->` before the return type")
        ret = self.parse_type()
        self.leave(marker)
        return FuncType(args, ret, type_params)

    def check_type_refs(self):
        """Every data type named in the text is defined (here or in the initial module)."""
        defined = getattr(self, "defined_types", {})
        for name, tok in self.type_refs:
            if name not in defined:
                raise self.error(f"unknown type `{name}`", tok)

    # --------------------------------------------------------------------------------------------------- matching
    def parse_match(self):
        """``match (expr) { clauses }`` or ``match? ...`` (the ``match`` keyword is the current token)."""
        start = self.advance()
        complete = not self.accept("?")
        # the matched value is an atom: `match %x {`, `match (%x) {`, `match (%xs, %ys) {`
        data = self.parse_postfix(self.parse_atom(), self.peek())
        self.expect("{", "`{` opening the clauses")
        clauses = []
        while self.peek()[0] != "}":
            marker = len(self.undo)
            pattern = self.parse_pattern()
            self.expect("=", "`=>` after the pattern")
            self.expect(">", "`=>` after the pattern")
            if self.accept("{"):
                rhs = self.parse_block()
                self.expect("}", "`}` closing the clause")
            elif self.peek()[0] == "GRAPH" and self.peek(1)[0] == "=":  # `%0 = ...; expr` without braces
                rhs = self.parse_block()
            else:
                rhs = self.parse_expr()
            self.leave(marker)
            clauses.append(Clause(pattern, rhs))
            if not self.accept(","):
                break
        self.expect("}", "`,` or `}` after a clause")
        return Match(data, clauses, complete, span=self.span(start))

    def parse_pattern(self):
        """A pattern; its variables are bound in the current scope."""
        tok = self.peek()
        kind = tok[0]
        if kind == "IDENT" and tok[1] == "_":
            self.pos += 1
            return PatternWildcard()
        if kind in ("LOCAL", "QLOCAL"):
            self.pos += 1
            ttype = self.parse_type() if self.accept(":") else None
            var = Var(tok[1], None if isinstance(ttype, IncompleteType) else ttype, span=self.span(tok))
            self.bind(self.locals, tok[1], var)
            return PatternVar(var)
        if kind == "(":
            return PatternTuple(self._parse_sub_patterns())
        if kind == "IDENT":
            ctor = self.ctors.get(tok[1])
            if ctor is None:
                raise self.error(f"undefined constructor `{tok[1]}` (a pattern variable is written `%{tok[1]}`)", tok)
            self.pos += 1
            subs = self._parse_sub_patterns() if self.peek()[0] == "(" else []
            try:
                return PatternConstructor(ctor, subs)
            except KilnError as exc:
                raise self.error(str(exc), tok) from None
        raise self.error(f"expected a pattern, found {self.describe(tok)}", tok)

    def _parse_sub_patterns(self) -> list:
        self.expect("(")
        subs = []
        while self.peek()[0] != ")":
            subs.append(self.parse_pattern())
            if not self.accept(","):
                break
        self.expect(")", "`,` or `)` in the patterns")
        return subs
