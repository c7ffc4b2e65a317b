"""Type inference beyond annotations: polymorphic functions, unannotated variables, data types, match, references."""

import pytest

from kiln import relay
from kiln.error import TypeInferenceError
from kiln.ir import FuncType, IRModule, RelayRefType, TensorType, TupleType, TypeVar, assert_structural_equal
from kiln.relay.prelude import Prelude

F32, I32 = TensorType((), "float32"), TensorType((), "int32")


def _identity():
    a = TypeVar("a")
    x = relay.Var("x", a)
    return relay.Function([x], x, a, [a]), a


def test_let_bound_polymorphic_function_at_two_types():
    ident, _ = _identity()
    f = relay.Var("f")
    body = relay.Let(f, ident, relay.Tuple([f(relay.const(1)), f(relay.Tuple([]))]))
    typed = relay.infer_type(body)
    assert_structural_equal(typed.checked_type, TupleType([I32, TupleType([])]))
    first_call = typed.body.fields[0]
    assert first_call.type_args == (I32,)


def test_polymorphic_functions_as_arguments_and_results():
    ident, a = _identity()
    b = TypeVar("b")
    f, y = relay.Var("f", FuncType([b], b)), relay.Var("y", b)
    apply = relay.Function([f, y], f(y), b, [b])
    assert relay.infer_type(apply(ident, relay.const(0.5))).checked_type == F32
    # a function returning the polymorphic identity at its own type parameter
    c = TypeVar("c")
    nested = relay.Function([], ident, FuncType([c], c), [c])
    assert relay.infer_type(nested).checked_type == FuncType([], FuncType([c], c), [c])


def test_unannotated_parameters_are_inferred_from_uses():
    x = relay.var("x")
    f = relay.Var("f")
    g = relay.Function([x], relay.add(x, x))  # typed only through the call below
    typed = relay.infer_type(relay.Let(f, g, f(relay.const(2.0))))
    assert typed.checked_type == F32
    assert typed.value.params[0].checked_type == F32
    assert typed.value.body.checked_type == F32  # the deferred relation of add ran once x was known
    # a variable called as a function gets a function type
    h = relay.var("h")
    n = relay.var("n", "int32")
    fn = relay.infer_type(relay.Function([n, h], h(n), I32))
    assert fn.checked_type == FuncType([I32, FuncType([I32], I32)], I32)


def test_holes_left_are_errors_naming_the_variable():
    with pytest.raises(TypeInferenceError, match="variable %u has no type annotation and its type cannot be inferred"):
        relay.infer_type(relay.Function([relay.var("u")], relay.const(1.0)))
    x = relay.var("x")
    with pytest.raises(TypeInferenceError, match="variable %x has no type annotation"):
        relay.infer_type(relay.Function([x], relay.exp(x)))  # nothing says what x is: exp waits in vain


def test_constructors_match_and_completeness():
    p = Prelude()
    mod = p.mod
    x = relay.var("x", "int32")
    mod["main"] = relay.Function([x], p.cons(x, p.nil()))
    typed = relay.transform.InferType()(mod)
    assert typed["main"].checked_type == FuncType([I32], p.l(I32))
    ys = relay.var("ys", p.l(F32))
    h, t = relay.Var("h"), relay.Var("t")
    head_or_zero = relay.Match(ys, [relay.Clause(relay.PatternConstructor(p.cons, [relay.PatternVar(h),
                                                                                     relay.PatternVar(t)]), h),
                                    relay.Clause(relay.PatternConstructor(p.nil), relay.const(0.0))])
    mod["first"] = relay.Function([ys], head_or_zero)
    typed = relay.transform.InferType()(mod)
    assert typed["first"].checked_type == FuncType([p.l(F32)], F32)
    assert typed["first"].body.clauses[0].lhs.patterns[1].var.checked_type == p.l(F32)
    incomplete = relay.Match(ys, [head_or_zero.clauses[1]])
    mod["bad"] = relay.Function([ys], incomplete)
    with pytest.raises(TypeInferenceError, match=r"match is not complete: no clause handles Cons\(_, _\)"):
        relay.transform.InferType()(mod)
    mod["bad"] = relay.Function([ys], relay.Match(ys, [head_or_zero.clauses[1]], complete=False))
    relay.transform.InferType()(mod)  # match? may be partial
    opt_pattern = relay.PatternConstructor(p.none)
    mod["bad"] = relay.Function([ys], relay.Match(ys, [relay.Clause(opt_pattern, relay.const(0.0))], False))
    short = relay.PatternConstructor(p.cons, [relay.PatternWildcard()])  # built freely, refused by inference
    mod["bad"] = relay.Function([ys], relay.Match(ys, [relay.Clause(short, relay.const(0.0))], False))
    with pytest.raises(TypeInferenceError, match="pattern Cons gives 1 sub-patterns, the constructor has 2 fields"):
        relay.transform.InferType()(mod)
    mod["bad"] = relay.Function([ys], relay.Match(ys, [relay.Clause(opt_pattern, relay.const(0.0))], False))
    with pytest.raises(TypeInferenceError,
                       match=r"pattern None makes values of type Option\[.*\], the matched value has type List\[float32"):
        relay.transform.InferType()(mod)


def test_recursive_polymorphic_function_gets_type_arguments():
    mod = Prelude().mod
    typed = relay.transform.InferType()(mod)
    length = typed["length"]
    a = length.type_params[0]
    recursive_call = length.body.clauses[0].rhs.args[1]
    assert recursive_call.type_args == (a,)


def test_references():
    x, y = relay.var("x", "float32"), relay.var("y", "float32")
    r = relay.RefCreate(x)
    assert relay.infer_type(r).checked_type == RelayRefType(F32)
    assert relay.infer_type(relay.RefRead(r)).checked_type == F32
    assert relay.infer_type(relay.RefWrite(r, y)).checked_type == TupleType([])
    cell = relay.var("cell")  # its type follows from the read and the write
    f = relay.infer_type(relay.Function([cell], relay.Tuple([relay.RefWrite(cell, x), relay.RefRead(cell)])))
    assert f.params[0].checked_type == RelayRefType(F32)
    with pytest.raises(TypeInferenceError, match="ref_read of a value of type float32, which is not a reference"):
        relay.infer_type(relay.RefRead(x))
    with pytest.raises(TypeInferenceError, match="ref_write of a value of type int32 into a reference of float32"):
        relay.infer_type(relay.RefWrite(r, relay.const(1)))


def test_infer_type_local_fills_the_expression_in_place():
    x = relay.var("x", shape=(2,))
    expr = relay.add(x, x)
    assert relay.transform.InferTypeLocal(expr) == TensorType((2,))
    assert expr.checked_type == TensorType((2,)) and expr.args[0].checked_type == TensorType((2,))


def test_unannotated_recursion_through_a_let_bound_closure():
    n = relay.var("n", "int32")
    loop = relay.Var("loop")
    body = relay.If(relay.equal(n, relay.const(0)), n, loop(relay.subtract(n, relay.const(1))))
    expr = relay.Let(loop, relay.Function([n], body), loop(relay.const(3)))
    typed = relay.infer_type(expr)
    assert typed.checked_type == I32
    assert typed.var.type_annotation == FuncType([I32], I32)


def test_module_functions_typed_with_mutual_calls():
    mod = IRModule()
    even, odd = relay.GlobalVar("even"), relay.GlobalVar("odd")
    n = relay.var("n", "int32")
    m = relay.var("m", "int32")
    mod[even] = relay.Function([n], relay.If(relay.equal(n, relay.const(0)), relay.const(True),
                                             odd(relay.subtract(n, relay.const(1)))), TensorType((), "bool"))
    mod[odd] = relay.Function([m], relay.If(relay.equal(m, relay.const(0)), relay.const(False),
                                            even(relay.subtract(m, relay.const(1)))))
    typed = relay.transform.InferType()(mod)
    assert typed["odd"].checked_type == FuncType([I32], TensorType((), "bool"))
