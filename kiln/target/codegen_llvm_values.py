"""Values the LLVM generator emits once: a pure expression (index arithmetic, casts, ramps, broadcasts; no loads
or calls) already emitted where the current point of the code sees it is not emitted again.

The unrolled register tiles of a kernel compute the same index arithmetic for every column and every tap, and a
packed function's prologue reads the same DLTensor fields through the same addresses: emitted each time, the IR
doubles, and LLVM's time on it (most of a model's build) with it. Values are keyed structurally (kind, dtype and the
operands' keys; a variable by identity) and kept in one scope per region of structured control flow: a scope's
values dominate the code after them in the same region and every region nested in it, so a loop body or a branch
gets a scope of its own that ends with it. Binding a variable again (a sibling loop's variable, a let evaluated
twice) forgets every value, since some may read the old binding.
"""

import contextlib

from ..tir import expr as E
from .codegen_base import BINARY_KINDS

#: The expressions without side effects that are emitted once: kind -> operand fields (with the dtype, and the
#: lanes of ramps and broadcasts through the dtype, they make the value's key)
PURE_KINDS = {kind: ("a", "b") for kind in (*BINARY_KINDS, E.And, E.Or)}
PURE_KINDS.update({E.Not: ("a",), E.Cast: ("value",), E.Broadcast: ("value",), E.Ramp: ("base", "stride"),
                   E.Select: ("condition", "true_value", "false_value")})


class EmittedValues:
    """One function's emitted values: a stack of scopes (key -> LLVM value) and the structural keys of expressions."""

    def __init__(self):
        self.scopes: list[dict] = [{}]
        self.keys: dict = {}  # id(expr) -> (expr, its key or None); the expr is kept alive with its id

    def get(self, key):
        for scope in reversed(self.scopes):
            value = scope.get(key)
            if value is not None:
                return value
        return None

    def forget_all(self):
        for scope in self.scopes:
            scope.clear()


class ValueReuse:
    """The generator's side (mixed into :class:`~kiln.target.codegen_llvm.LLVMGenerator`, whose function state has
    an :class:`EmittedValues` as ``values``)."""

    @contextlib.contextmanager
    def nested_region(self):
        """Emit a region that the code after it does not run through (a loop body, a branch): the values emitted
        inside are reused only inside."""
        scopes = self.state.values.scopes
        scopes.append({})
        try:
            yield
        finally:
            scopes.pop()

    def value_key(self, e):
        """A structural key of a pure expression (equal keys: equal values where both are in scope), else None."""
        keys = self.state.values.keys
        hit = keys.get(id(e))
        if hit is not None:
            return hit[1]
        kind = type(e)
        key = None
        if kind is E.Var or kind is E.SizeVar:
            key = id(e)
        elif kind is E.IntImm or kind is E.FloatImm:
            key = (kind, e.dtype, e.value)
        elif kind in PURE_KINDS:
            parts = [self.value_key(getattr(e, field)) for field in PURE_KINDS[kind]]
            if None not in parts:
                key = (kind, e.dtype, *parts)
        keys[id(e)] = (e, key)
        return key

    def reuse(self, key, make):
        """The value emitted for ``key`` where this point of the code sees it, else ``make()``'s, recorded."""
        values = self.state.values
        value = values.get(key)
        if value is None:
            value = values.scopes[-1][key] = make()
        return value

    def visit_expr(self, e):
        """Emit ``e``, or reuse its value (module docstring)."""
        if type(e) not in PURE_KINDS:
            return super().visit_expr(e)
        key = self.value_key(e)
        if key is None:
            return super().visit_expr(e)
        return self.reuse(key, lambda: super(ValueReuse, self).visit_expr(e))
