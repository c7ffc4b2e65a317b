"""The pattern language of ``relay.dataflow_pattern`` (TVM's): pattern nodes and the functions that build them.

A pattern describes a piece of a dataflow graph: ``is_op("nn.conv2d")(wildcard(), is_constant())`` matches a
convolution of anything by a constant; ``|`` makes alternatives, ``+ - * /`` build calls of the arithmetic
operators, ``has_attr``/``has_type``/``has_dtype``/``has_shape`` constrain what is matched, and
``a.dominates(b, path)`` matches ``a`` when every path from ``b`` to it goes through nodes matching ``path``.

Pattern nodes are compared by identity: using one pattern object twice in a pattern requires the same expression at
both places (``is_op("add")(x, x)`` with ``x = wildcard()`` matches ``a + a``, not ``a + b``).
"""

from ...error import KilnError
from ...ir.op import Op

__all__ = ["DFPattern", "ExprPattern", "VarPattern", "ConstantPattern", "CallPattern", "FunctionPattern",
           "IfPattern", "LetPattern", "TuplePattern", "TupleGetItemPattern", "AltPattern", "WildcardPattern",
           "TypePattern", "DataTypePattern", "ShapePattern", "AttrPattern", "DominatorPattern", "is_var",
           "is_constant", "is_expr", "is_op", "is_tuple", "is_tuple_get_item", "is_if", "is_let", "wildcard",
           "has_type", "has_dtype", "has_shape", "has_attr", "dominates"]


class DFPattern:
    """Base of pattern nodes (see the module docstring)."""

    __slots__ = ("__weakref__",)

    def __call__(self, *args):
        return CallPattern(self, list(args))

    def __or__(self, other):
        return AltPattern(self, other)

    def __add__(self, other):
        return is_op("add")(self, other)

    def __sub__(self, other):
        return is_op("subtract")(self, other)

    def __mul__(self, other):
        return is_op("multiply")(self, other)

    def __truediv__(self, other):
        return is_op("divide")(self, other)

    def has_attr(self, attrs) -> "AttrPattern":
        """This pattern, where the matched call, operator or function has ``attrs`` (a dict)."""
        return AttrPattern(self, attrs)

    def has_type(self, ttype) -> "TypePattern":
        """This pattern, where the matched expression has type ``ttype``."""
        return TypePattern(self, ttype)

    def has_dtype(self, dtype) -> "DataTypePattern":
        """This pattern, where the matched tensor has dtype ``dtype``."""
        return DataTypePattern(self, dtype)

    def has_shape(self, shape) -> "ShapePattern":
        """This pattern, where the matched tensor has shape ``shape``."""
        return ShapePattern(self, shape)

    def match(self, expr) -> bool:
        """Whether this pattern matches ``expr``."""
        from .matcher import match

        return match(self, expr)

    def partition(self, expr, attrs=None, check=lambda x: True):
        """``expr`` with each match of this pattern made a function call (see :func:`partition`)."""
        from .rewrite import partition

        return partition(self, expr, attrs, check)

    def dominates(self, parent, path=None) -> "DominatorPattern":
        """This pattern as the child of a dominator pattern whose parent is ``parent`` and whose nodes in between
        match ``path`` (any node when None)."""
        return DominatorPattern(parent, wildcard() if path is None else path, self)

    def optional(self, option_constructor) -> "AltPattern":
        """This pattern, or ``option_constructor(self)`` (an optional trailing operator)."""
        return self | option_constructor(self)

    def __str__(self):
        return _describe(self)

    __repr__ = __str__


def _pattern(value) -> DFPattern:
    """A pattern from a pattern, or an expression (matched as itself)."""
    if isinstance(value, DFPattern):
        return value
    from ...ir.expr import RelayExpr

    if isinstance(value, RelayExpr | Op):
        return ExprPattern(value)
    raise KilnError(f"dataflow_pattern: expected a pattern or an expression, got {type(value).__name__}")


class ExprPattern(DFPattern):
    """Matches ``expr`` itself: an operator by identity, any other expression structurally."""

    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr


class VarPattern(DFPattern):
    """Matches a variable, named ``name_hint`` unless that is empty."""

    __slots__ = ("name_hint",)

    def __init__(self, name_hint=""):
        self.name_hint = name_hint

    @property
    def name(self):
        return self.name_hint


class ConstantPattern(DFPattern):
    """Matches any constant."""

    __slots__ = ()


class CallPattern(DFPattern):
    """Matches a call of what ``op`` matches on arguments ``args`` match (any arguments when None)."""

    __slots__ = ("op", "args")

    def __init__(self, op, args=None):
        self.op = _pattern(op)
        self.args = None if args is None else [_pattern(a) for a in args]


class FunctionPattern(DFPattern):
    """Matches a function whose parameters match ``params`` (any when None) and whose body matches ``body``."""

    __slots__ = ("params", "body")

    def __init__(self, params, body):
        self.params = None if params is None else [_pattern(p) for p in params]
        self.body = _pattern(body)


class IfPattern(DFPattern):
    """Matches ``if (cond) {true_branch} else {false_branch}``."""

    __slots__ = ("cond", "true_branch", "false_branch")

    def __init__(self, cond, true_branch, false_branch):
        self.cond, self.true_branch, self.false_branch = map(_pattern, (cond, true_branch, false_branch))


class LetPattern(DFPattern):
    """Matches ``let var = value; body``."""

    __slots__ = ("var", "value", "body")

    def __init__(self, var, value, body):
        self.var, self.value, self.body = map(_pattern, (var, value, body))


class TuplePattern(DFPattern):
    """Matches a tuple whose fields match ``fields`` (any tuple when None)."""

    __slots__ = ("fields",)

    def __init__(self, fields):
        self.fields = None if fields is None else [_pattern(f) for f in fields]

    def __getitem__(self, index):
        return self.fields[index]

    def __len__(self):
        return len(self.fields)

    def astype(self, _):
        raise KilnError("a TuplePattern cannot be cast")


class TupleGetItemPattern(DFPattern):
    """Matches field ``index`` (any field when None or -1) of what ``tuple_value`` matches."""

    __slots__ = ("tuple", "index")

    def __init__(self, tuple_value, index=None):
        self.tuple = _pattern(tuple_value)
        self.index = -1 if index is None else int(index)


class AltPattern(DFPattern):
    """Matches what ``left`` or (else) ``right`` matches."""

    __slots__ = ("left", "right")

    def __init__(self, left, right):
        self.left, self.right = _pattern(left), _pattern(right)


class WildcardPattern(DFPattern):
    """Matches anything (or, after :meth:`redirect_to`, what another pattern matches: recursive patterns)."""

    __slots__ = ("pattern",)

    def __init__(self):
        self.pattern = None

    def redirect_to(self, pat):
        """Make this wildcard match only what ``pat`` matches (``pat`` may contain this wildcard)."""
        self.pattern = _pattern(pat)


class TypePattern(DFPattern):
    """Matches what ``pattern`` matches when its type is ``type``."""

    __slots__ = ("pattern", "type")

    def __init__(self, pattern, ttype):
        self.pattern, self.type = _pattern(pattern), ttype


class DataTypePattern(DFPattern):
    """Matches what ``pattern`` matches when it is a tensor of dtype ``dtype``."""

    __slots__ = ("pattern", "dtype")

    def __init__(self, pattern, dtype):
        self.pattern, self.dtype = _pattern(pattern), str(dtype)


class ShapePattern(DFPattern):
    """Matches what ``pattern`` matches when it is a tensor of shape ``shape``."""

    __slots__ = ("pattern", "shape")

    def __init__(self, pattern, shape):
        self.pattern, self.shape = _pattern(pattern), tuple(shape)


class AttrPattern(DFPattern):
    """Matches what ``pattern`` matches when its attributes include ``attrs`` (a dict)."""

    __slots__ = ("pattern", "attrs")

    def __init__(self, pattern, attrs):
        if not isinstance(attrs, dict):
            raise KilnError(f"has_attr: attributes are given as a dict, got {type(attrs).__name__}")
        self.pattern, self.attrs = _pattern(pattern), dict(attrs)


class DominatorPattern(DFPattern):
    """Matches ``child`` where ``parent`` flows into it only through nodes matching ``path``, and ``child``
    post-dominates ``parent`` (every use of ``parent``'s value reaches ``child``)."""

    __slots__ = ("parent", "path", "child")

    def __init__(self, parent, path, child):
        self.parent, self.path, self.child = map(_pattern, (parent, path, child))


# ---------------------------------------------------------------------------------------------------- builders
def is_var(name="") -> VarPattern:
    """A variable (named ``name``, or any)."""
    return VarPattern(name)


def is_constant() -> ConstantPattern:
    """Any constant."""
    return ConstantPattern()


def is_expr(expr) -> ExprPattern:
    """The expression ``expr`` (structurally)."""
    return ExprPattern(expr)


def is_op(op_name) -> ExprPattern:
    """The operator ``op_name`` (call it with the argument patterns: ``is_op("add")(x, y)``)."""
    return ExprPattern(Op.get(op_name))


def is_tuple(fields) -> TuplePattern:
    """A tuple of ``fields`` (None: any tuple)."""
    return TuplePattern(fields)


def is_tuple_get_item(tuple_value, index=None) -> TupleGetItemPattern:
    """Field ``index`` (any when None) of ``tuple_value``."""
    return TupleGetItemPattern(tuple_value, index)


def is_if(cond, true_branch, false_branch) -> IfPattern:
    return IfPattern(cond, true_branch, false_branch)


def is_let(var, value, body) -> LetPattern:
    return LetPattern(var, value, body)


def wildcard() -> WildcardPattern:
    """Anything."""
    return WildcardPattern()


def has_type(ttype, pattern=None) -> TypePattern:
    return TypePattern(wildcard() if pattern is None else pattern, ttype)


def has_dtype(dtype, pattern=None) -> DataTypePattern:
    return DataTypePattern(wildcard() if pattern is None else pattern, dtype)


def has_shape(shape, pattern=None) -> ShapePattern:
    return ShapePattern(wildcard() if pattern is None else pattern, shape)


def has_attr(attrs, pattern=None) -> AttrPattern:
    return AttrPattern(wildcard() if pattern is None else pattern, attrs)


def dominates(parent, path, child) -> DominatorPattern:
    """``child`` dominating ``parent`` through ``path`` (see :class:`DominatorPattern`)."""
    return DominatorPattern(parent, path, child)


def _describe(pattern, depth=0) -> str:
    """A one-line description of a pattern (for messages and ``str``)."""
    if depth > 8:
        return "..."

    def d(p):
        return _describe(p, depth + 1)

    kind = type(pattern)
    if kind is ExprPattern:
        expr = pattern.expr
        return expr.name if isinstance(expr, Op) else f"expr({type(expr).__name__})"
    if kind is WildcardPattern:
        return "*"
    if kind is VarPattern:
        return f"%{pattern.name_hint}" if pattern.name_hint else "var"
    if kind is ConstantPattern:
        return "const"
    if kind is CallPattern:
        args = "..." if pattern.args is None else ", ".join(d(a) for a in pattern.args)
        return f"{d(pattern.op)}({args})"
    if kind is TuplePattern:
        return "(...)" if pattern.fields is None else f"({', '.join(d(f) for f in pattern.fields)})"
    if kind is TupleGetItemPattern:
        return f"{d(pattern.tuple)}.{pattern.index if pattern.index >= 0 else '*'}"
    if kind is AltPattern:
        return f"({d(pattern.left)} | {d(pattern.right)})"
    if kind is TypePattern:
        return f"{d(pattern.pattern)} : {pattern.type}"
    if kind is DataTypePattern:
        return f"{d(pattern.pattern)} : dtype {pattern.dtype}"
    if kind is ShapePattern:
        return f"{d(pattern.pattern)} : shape {pattern.shape}"
    if kind is AttrPattern:
        return f"{d(pattern.pattern)} {{{', '.join(f'{k}={v!r}' for k, v in pattern.attrs.items())}}}"
    if kind is DominatorPattern:
        return f"dominates({d(pattern.parent)}, {d(pattern.path)}, {d(pattern.child)})"
    if kind is FunctionPattern:
        params = "..." if pattern.params is None else ", ".join(d(p) for p in pattern.params)
        return f"fn({params}) {{{d(pattern.body)}}}"
    if kind is IfPattern:
        return f"if ({d(pattern.cond)}) {{{d(pattern.true_branch)}}} else {{{d(pattern.false_branch)}}}"
    if kind is LetPattern:
        return f"let {d(pattern.var)} = {d(pattern.value)}; {d(pattern.body)}"
    return kind.__name__

