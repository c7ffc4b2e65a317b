"""The text format's types, type definitions, pattern matching and references: parsing, printing, round trips."""

import pytest

from kiln import relay
from kiln.error import DiagnosticError
from kiln.ir import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    IRModule,
    RelayRefType,
    TensorType,
    TypeCall,
    TypeVar,
    assert_structural_equal,
    structural_equal,
)
from kiln.relay.prelude import Prelude

LIST = """#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}
"""


def _round_trip(mod):
    parsed = relay.parse(str(mod))
    assert_structural_equal(parsed, mod, map_free_vars=True)
    return parsed


def test_type_definitions_print_and_parse():
    mod = relay.parse(LIST + "extern type Handle[T]\ntype Unit { }\n")
    lst, cons, nil = mod.get_type("List")
    a = mod[lst].type_vars[0]
    assert cons.inputs == (a, TypeCall(lst, [a])) and nil.inputs == ()
    assert mod[GlobalTypeVar("Handle")].constructors == () and len(mod[GlobalTypeVar("Handle")].type_vars) == 1
    text = str(mod)
    assert LIST.split("\n", 1)[1] in text and "extern type Handle[T]" in text
    _round_trip(mod)


def test_type_definition_errors():
    with pytest.raises(DiagnosticError, match="type List is defined twice"):
        relay.parse(LIST + LIST.split("\n", 1)[1])
    with pytest.raises(DiagnosticError, match="constructor named Nil is already defined"):
        relay.parse(LIST + "type Other { Nil }")
    with pytest.raises(DiagnosticError, match="unknown type `Tree`"):
        relay.parse(LIST + "def @f(%t: Tree[int32]) { () }")
    with pytest.raises(DiagnosticError, match="undefined constructor `Leaf`"):
        relay.parse(LIST + "def @f(%xs: List[int32]) { match (%xs) { Leaf => 0 } }")


def test_polymorphic_definitions_match_and_constructor_values():
    text = LIST + """
def @length[A](%xs: List[A]) -> int32 {
  match (%xs) {
    Cons(_, %rest: List[A]) => {
      ();
      1 + @length(%rest)
    },
    Nil => 0,
  }
}

def @first[A](%xs: List[A], %default: A) -> A {
  match? %xs {
    Cons(%x, _) => %x
  }
}

def @pairs(%xs: List[int32]) -> fn [B](B) -> (B, int32) {
  fn [B](%b: B) -> (B, int32) { (%b, @length(%xs)) }
}

def @main() -> List[int32] {
  Cons(1, Nil)
}
"""
    mod = relay.parse(text)
    length = mod["length"]
    a = length.type_params[0]
    match = length.body
    assert isinstance(match, relay.Match) and match.complete
    rest = match.clauses[0].lhs.patterns[1].var
    assert rest.type_annotation == TypeCall(GlobalTypeVar("List"), [a])
    seq = match.clauses[0].rhs
    assert isinstance(seq, relay.Let) and structural_equal(seq.value, relay.Tuple([]))
    assert not mod["first"].body.complete
    assert isinstance(mod["main"].body.args[1], relay.Call) and not mod["main"].body.args[1].args  # `Nil` is Nil()
    assert mod["pairs"].ret_type.type_params[0].name_hint == "B"
    typed = relay.transform.InferType()(mod)
    assert typed["main"].checked_type == FuncType([], GlobalTypeVar("List")(TensorType((), "int32")))
    _round_trip(mod)
    _round_trip(typed)


def test_unapplied_constructor_prints_bare():
    mod = relay.parse(LIST + "def @main[A]() -> fn (A, List[A]) -> List[A] {\n  Cons\n}\n")
    assert "def @main[A]() -> fn (A, List[A]) -> List[A] {\n  Cons\n}" in str(mod)
    relay.transform.InferType()(mod)


def test_tuple_patterns_and_partial_match_print():
    mod = relay.parse(LIST + """
def @both(%xs: List[int32], %ys: List[int32]) -> bool {
  match? ((%xs, %ys)) {
    (Cons(_, _), Cons(_, _)) => True,
    (Nil, Nil) => False,
  }
}
""")
    text = str(mod)
    assert "match? (%0) {" in text and "(Cons(_, _), Cons(_, _)) => {" in text
    _round_trip(mod)


def test_references_and_sequences():
    expr = relay.parse_expr("free_var %x: float32; %0 = ref(%x); ref_write(%0, 1f); ref_read(%0)")
    assert isinstance(expr, relay.Let) and isinstance(expr.value, relay.RefWrite)
    assert isinstance(expr.body, relay.RefRead)
    typed = relay.infer_type(expr)
    assert typed.value.value.checked_type == TensorType((), "float32")
    assert "ref_write(%0, 1f)" in expr.astext() and "ref(%x)" in expr.astext()
    assert_structural_equal(relay.parse_expr(expr.astext()), expr, map_free_vars=True)
    mod = relay.parse('#[version = "0.0.5"]\ndef @main(%r: ref(int32)) { ref_read(%r) }')
    assert mod["main"].params[0].type_annotation == RelayRefType(TensorType((), "int32"))


def test_types_in_annotations():
    expr = relay.parse_expr("let %f: fn [T](T) -> T = fn [T](%t: T) -> T { %t }; let %u: _ = (); %f")
    ftype = expr.var.type_annotation
    assert isinstance(ftype, FuncType) and isinstance(ftype.type_params[0], TypeVar)
    assert ftype.arg_types[0] is ftype.type_params[0]
    assert expr.body.var.type_annotation is None  # `_` leaves the type to inference
    hole = relay.parse_expr("let %u: (_, int32) = (1, 2); %u").var.type_annotation
    assert isinstance(hole.fields[0], IncompleteType)
    assert relay.infer_type(expr).checked_type == ftype


def test_infix_comparisons_and_negative_literals():
    one = relay.const(1)
    assert structural_equal(relay.parse_expr("1 + 1 < 1 == 1"), relay.equal(relay.less(one + one, one), one))
    assert structural_equal(relay.parse_expr("1 == 1 < 1 + 1 * 1"),
                            relay.equal(one, relay.less(one, one + one * one)))
    assert structural_equal(relay.parse_expr("1 != 1 >= 1 <= 1 > 1"),
                            relay.not_equal(one, relay.greater(relay.less_equal(relay.greater_equal(one, one), one),
                                                               one)))
    assert int(relay.parse_expr("--10").data.numpy()) == 10
    assert int(relay.parse_expr("---10").data.numpy()) == -10


def test_prelude_text_round_trips():
    mod = Prelude().mod
    parsed = _round_trip(mod)
    assert parsed.get_type("List")[1].tag == mod.get_type("List")[1].tag
    assert isinstance(relay.parse(str(IRModule())), IRModule)


def test_a_clause_without_braces_may_start_with_graph_bindings():
    mod = relay.parse("""
        #[version = "0.0.5"]
        type Box[A] { B(A), }
        def @main(%b: Box[int32]) -> int32 {
          match (%b) {
            B(%x) => %0 = add(%x, 1); multiply(%0, %0),
          }
        }""")
    rhs = mod["main"].body.clauses[0].rhs
    assert rhs.op.name == "multiply" and rhs.args[0] is rhs.args[1]
