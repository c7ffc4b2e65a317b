"""The prelude and nat.rly: each function run by the interpreter against the same computation in Python."""

import numpy as np
import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.ir import FuncType, IRModule, TupleType, TypeVar
from kiln.relay.prelude import GLOBAL_DEFS, Prelude

RNG = np.random.default_rng(7)
I32 = relay.scalar_type("int32")


@pytest.fixture(scope="module")
def p():
    prelude = Prelude()
    prelude.mod.import_from_std("nat.rly")
    return prelude


def _list(p, values):
    expr = p.nil()
    for v in reversed(values):
        expr = p.cons(relay.const(int(v), "int32"), expr)
    return expr


def _values(value, p):
    out = []
    while value.tag == p.cons.tag:
        head = value.fields[0]
        out.append(head.numpy().item() if hasattr(head, "numpy") else head)
        value = value.fields[1]
    assert value.tag == p.nil.tag
    return out


def _run(p, expr):
    return relay.create_executor(mod=p.mod).evaluate(expr)


def _fn(body_of, *dtypes):
    params = [relay.var(f"a{i}", d) for i, d in enumerate(dtypes)]
    return relay.Function(params, body_of(*params))


def test_module_types_and_attributes(p):
    for name in GLOBAL_DEFS:
        assert getattr(p, name) == p.mod.get_global_var(name)
    a, b, c = TypeVar("a"), TypeVar("b"), TypeVar("c")
    assert p.mod[p.map_accuml].checked_type == FuncType(
        [FuncType([a, b], TupleType([a, c])), a, p.l(b)], TupleType([a, p.l(c)]), [a, b, c])
    assert p.mod[p.length].checked_type == FuncType([p.l(a)], I32, [a])
    p.mod.import_from_std("prelude.rly")  # a second import changes nothing
    assert len(p.mod.get_type("List")) == 3
    with pytest.raises(KilnError, match="no standard library file 'nope.rly'"):
        IRModule().import_from_std("nope.rly")


@pytest.mark.parametrize("trial", range(3))
def test_list_functions_against_python(p, trial):
    xs = RNG.integers(-9, 10, size=int(RNG.integers(1, 6))).tolist()
    ys = RNG.integers(-9, 10, size=int(RNG.integers(0, 4))).tolist()
    lx, ly = _list(p, xs), _list(p, ys)
    n = int(RNG.integers(0, len(xs)))
    assert _run(p, relay.Call(p.length, [lx])).numpy() == len(xs)
    assert _run(p, relay.Call(p.sum, [lx])).numpy() == sum(xs)
    assert _run(p, relay.Call(p.hd, [lx])).numpy() == xs[0]
    assert _values(_run(p, relay.Call(p.tl, [lx])), p) == xs[1:]
    assert _run(p, relay.Call(p.nth, [lx, relay.const(n)])).numpy() == xs[n]
    assert _values(_run(p, relay.Call(p.update, [lx, relay.const(n), relay.const(100)])), p) == \
        xs[:n] + [100] + xs[n + 1:]
    assert _values(_run(p, relay.Call(p.rev, [lx])), p) == xs[::-1]
    assert _values(_run(p, relay.Call(p.concat, [lx, _list(p, ys) if ys else lx])), p) == xs + (ys or xs)
    square = _fn(lambda x: x * x, "int32")
    assert _values(_run(p, relay.Call(p.map, [square, lx])), p) == [v * v for v in xs]
    positive = _fn(lambda x: relay.greater(x, relay.const(0)), "int32")
    assert _values(_run(p, relay.Call(p.filter, [positive, lx])), p) == [v for v in xs if v > 0]
    minus = _fn(lambda acc, x: acc - x, "int32", "int32")
    assert _run(p, relay.Call(p.foldl, [minus, relay.const(0), lx])).numpy() == -sum(xs)
    # foldr: x0 - (x1 - (... - acc))
    expected = 0
    for v in reversed(xs):
        expected = v - expected
    assert _run(p, relay.Call(p.foldr, [minus, relay.const(0), lx])).numpy() == expected
    expected = xs[-1]
    for v in reversed(xs[:-1]):
        expected = v - expected
    assert _run(p, relay.Call(p.foldr1, [minus, lx])).numpy() == expected
    if ys:
        pairs = _values(_run(p, relay.Call(p.zip, [lx, ly])), p)
        assert [(a.numpy().item(), b.numpy().item()) for a, b in pairs] == list(zip(xs, ys, strict=False))


def test_accumulating_maps(p):
    xs = [1, 2, 3]
    add_both = _fn(lambda acc, x: relay.Tuple([acc + x, acc + x]), "int32", "int32")
    state, out = _run(p, relay.Call(p.map_accumr, [add_both, relay.const(0), _list(p, xs)]))
    assert state.numpy() == 6 and _values(out, p) == [6, 5, 3]  # the state runs from the right
    add_to_state = _fn(lambda acc, x: relay.Tuple([acc + x, x]), "int32", "int32")
    state, out = _run(p, relay.Call(p.map_accuml, [add_to_state, relay.const(0), _list(p, xs)]))
    assert state.numpy() == 6 and _values(out, p) == [3, 2, 1]  # outputs last first, as TVM's prelude


def test_unfolds_trees_and_iteration(p):
    # count down from the seed: Some((n - 1, n)) while n > 0
    n = relay.var("n", "int32")
    step = relay.Function([n], relay.If(relay.greater(n, relay.const(0)),
                                         p.some(relay.Tuple([n - relay.const(1), n])),
                                         p.none()), p.optional(TupleType([I32, I32])))
    assert _values(_run(p, relay.Call(p.unfoldr, [step, relay.const(4)])), p) == [4, 3, 2, 1]
    assert _values(_run(p, relay.Call(p.unfoldl, [step, relay.const(4)])), p) == [1, 2, 3, 4]
    empty = relay.var("no_children", p.l(p.tree(I32)))  # typed: a bare Nil would leave its element type open
    tree = relay.Let(empty, p.nil(), p.rose(relay.const(1), p.cons(p.rose(relay.const(2), empty),
                                                                     p.cons(p.rose(relay.const(3), empty), empty))))
    assert _run(p, relay.Call(p.size, [tree])).numpy() == 3
    doubled = _run(p, relay.Call(p.tmap, [_fn(lambda v: v * relay.const(2), "int32"), tree]))
    assert doubled.fields[0].numpy() == 2
    assert [c.fields[0].numpy().item() for c in _values(doubled.fields[1], p)] == [4, 6]
    inc = _fn(lambda v: v + relay.const(1), "int32")
    assert _run(p, relay.Call(relay.Call(p.iterate, [inc, relay.const(5)]), [relay.const(10)])).numpy() == 15
    twice = relay.Call(p.compose, [inc, inc])
    assert _run(p, relay.Call(twice, [relay.const(1)])).numpy() == 3
    sub = _fn(lambda a, b: a - b, "int32", "int32")
    assert _run(p, relay.Call(relay.Call(p.flip, [sub]), [relay.const(1), relay.const(10)])).numpy() == 9


def test_nat(p):
    nat, zero, succ = p.mod.get_type("nat")

    def make(k):
        e = zero()
        for _ in range(k):
            e = succ(e)
        return e

    def count(value):
        k = 0
        while value.tag == succ.tag:
            value, k = value.fields[0], k + 1
        return k

    double, add = p.mod.get_global_var("nat_double"), p.mod.get_global_var("nat_add")
    assert count(_run(p, relay.Call(double, [make(3)]))) == 6
    assert count(_run(p, relay.Call(add, [make(2), make(5)]))) == 7
    xs = [4, 5, 6]
    nth = p.mod.get_global_var("nat_nth")
    assert _run(p, relay.Call(nth, [_list(p, xs), make(2)])).numpy() == 6
    update = p.mod.get_global_var("nat_update")
    assert _values(_run(p, relay.Call(update, [_list(p, xs), make(1), relay.const(0)])), p) == [4, 0, 6]
    it = p.mod.get_global_var("nat_iterate")
    double_it = relay.Call(it, [_fn(lambda v: v * relay.const(2), "int32"), make(3)])
    assert _run(p, relay.Call(double_it, [relay.const(1)])).numpy() == 8


def test_gradient_cells():
    mod = IRModule()
    mod.import_from_std("gradient.rly")
    _, raw, one, zero = mod.get_type("GradCell")
    a, b = relay.var("a", "float32"), relay.var("b", "float32")
    add, mul = relay.Function([a, b], a + b), relay.Function([a, b], a * b)
    ones, zeros = relay.Function([], relay.const(1.0)), relay.Function([], relay.const(0.0))
    value = mod.get_global_var("FromGradCell")
    add_cells, mul_cells = mod.get_global_var("AddGradCell"), mod.get_global_var("MultiplyGradCell")
    ex = relay.create_executor(mod=mod)
    two, three = raw(relay.const(2.0)), raw(relay.const(3.0))
    cases = [(relay.Call(add_cells, [add, two, three]), 5.0), (relay.Call(mul_cells, [mul, two, three]), 6.0),
             (relay.Call(mul_cells, [mul, two, one(ones)]), 2.0), (relay.Call(mul_cells, [mul, zero(zeros), three]), 0.0),
             (relay.Call(add_cells, [add, zero(zeros), three]), 3.0), (relay.Call(value, [one(ones)]), 1.0)]
    for expr, expected in cases:
        cell = expr if expr.op == value else relay.Call(value, [expr])
        assert ex.evaluate(cell).numpy() == expected


def test_core_declares_the_storage_type():
    """core.rly (what TVM's memory-op tests import) declares ``Storage`` without constructors; programs using the
    memory dialect parse in a module that imported it."""
    mod = IRModule()
    mod.import_from_std("core.rly")
    storage = mod.get_global_type_var("Storage")
    assert mod.type_definitions[storage].constructors == ()
    text = """#[version = "0.0.5"]
    def @main() { let %s = memory.alloc_storage(64i64, alignment=64, dtype_hint="float32"); 0 }"""
    assert "@main" in str(relay.parse(text, "from_string", mod))
