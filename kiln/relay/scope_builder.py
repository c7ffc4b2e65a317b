"""``ScopeBuilder`` (TVM's ``relay.ScopeBuilder``): write a chain of ``let`` bindings and ``if`` branches as
statements, then get the nested expression.

Examples
--------
>>> from kiln import relay
>>> sb = relay.ScopeBuilder()
>>> x = relay.var("x", shape=(2,))
>>> y = sb.let("y", relay.add(x, x))
>>> sb.ret(relay.multiply(y, y))
>>> print(sb.get().body)  # doctest: +SKIP
"""

from ..error import KilnError
from .expr import If, Let, var

__all__ = ["ScopeBuilder"]


class _Scope:
    """The bindings of one block and the expression it returns."""

    def __init__(self):
        self.bindings = []
        self.ret = None


class _Branch:
    """The context manager ``if_scope``/``else_scope`` return: a new block while inside, handed back on exit."""

    def __init__(self, builder, on_exit):
        self.builder, self.on_exit = builder, on_exit

    def __enter__(self):
        self.builder._scopes.append(_Scope())
        return self

    def __exit__(self, kind, *exc):
        scope = self.builder._scopes.pop()
        if kind is None:
            self.on_exit(self.builder._close(scope, "an if/else branch"))


class ScopeBuilder:
    """Builds ``let`` chains and ``if`` expressions block by block (see the module docstring)."""

    def __init__(self):
        self._scopes = [_Scope()]
        self._pending_if = None

    def let(self, name_or_var, value):
        """Bind ``value`` to a new variable (``name_or_var`` a name, a ``(name, type)`` pair or a Var); returns it."""
        if isinstance(name_or_var, str):
            bound = var(name_or_var)
        elif isinstance(name_or_var, tuple):
            bound = var(name_or_var[0], name_or_var[1])
        else:
            bound = name_or_var
        self._scopes[-1].bindings.append((bound, value))
        return bound

    def if_scope(self, cond):
        """``with sb.if_scope(cond):`` starts the true branch; an ``else_scope`` must follow."""
        def done(true_branch):
            self._pending_if = (cond, true_branch)

        return _Branch(self, done)

    def else_scope(self):
        """``with sb.else_scope():`` the false branch of the last ``if_scope``; the ``if`` becomes the value of the
        enclosing block (bind it with ``let`` or return it with ``ret``, as TVM's builder does)."""
        if self._pending_if is None:
            raise KilnError("ScopeBuilder.else_scope: no if_scope before it")
        cond, true_branch = self._pending_if
        self._pending_if = None

        def done(false_branch):
            self._scopes[-1].bindings.append((None, If(cond, true_branch, false_branch)))

        return _Branch(self, done)

    def ret(self, value):
        """Make ``value`` the result of the current block."""
        scope = self._scopes[-1]
        if scope.ret is not None:
            raise KilnError("ScopeBuilder.ret: the block already returned a value")
        scope.ret = value

    def get(self):
        """The expression the outermost block built."""
        if len(self._scopes) != 1:
            raise KilnError("ScopeBuilder.get: an if/else block is still open")
        return self._close(self._scopes[0], "the scope")

    @staticmethod
    def _close(scope, what):
        body = scope.ret
        bindings = list(scope.bindings)
        if body is None:
            if bindings and bindings[-1][0] is None:  # a trailing if is the block's value
                body = bindings.pop()[1]
            else:
                raise KilnError(f"ScopeBuilder: {what} has no value (call ret)")
        for bound, value in reversed(bindings):
            body = Let(bound if bound is not None else var("_"), value, body)
        return body
