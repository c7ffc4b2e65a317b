"""Unary natural numbers for tests of recursion and pattern matching (TVM's ``relay.testing.nat``): the data type
``nat`` of ``nat.rly`` (``zero``, ``succ(n)``) converted to and from Python ints."""

from ..evaluator import ConstructorValue


def get_type(prelude, name):
    """``(global_type_var, *constructors)`` of the data type ``name`` of the prelude's module."""
    return prelude.mod.get_type(name)


def _nat(prelude):
    if "nat" not in {gtv.name_hint for gtv in prelude.mod.type_definitions}:
        prelude.mod.import_from_std("nat.rly")
    return prelude.mod.get_type("nat")


def count(prelude, n) -> int:
    """The Python int a nat value (a ConstructorValue the interpreter returned) stands for."""
    _, zero, succ = _nat(prelude)
    total = 0
    while n.tag == succ.tag:
        n, total = n.fields[0], total + 1
    if n.tag != zero.tag:
        raise ValueError(f"count: a value made by tag {n.tag} is not a nat")
    return total


def make_nat_value(prelude, n) -> ConstructorValue:
    """The nat value of the Python int ``n`` (to pass to an executor)."""
    _, zero, succ = _nat(prelude)
    value = ConstructorValue(zero.tag, [], zero)
    for _ in range(n):
        value = ConstructorValue(succ.tag, [value], succ)
    return value


def make_nat_expr(prelude, n):
    """The Relay expression ``succ(...succ(zero))`` of the Python int ``n``."""
    if n < 0:
        raise ValueError(f"make_nat_expr: {n} is negative")
    _, zero, succ = _nat(prelude)
    expr = zero()
    for _ in range(n):
        expr = succ(expr)
    return expr
