import time

import numpy as np
import pytest

from kiln import relay
from kiln.ir import assert_structural_equal, structural_equal, structural_hash


def _conv_fn(pad=1, name="x"):
    x = relay.var(name, shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    return relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w, padding=(pad, pad))))


def test_alpha_equivalent_functions_are_equal_and_hash_equal():
    f, g = _conv_fn(name="x"), _conv_fn(name="renamed")
    assert structural_equal(f, g)
    assert structural_hash(f) == structural_hash(g)


def test_attr_difference_names_path():
    with pytest.raises(ValueError, match=r"<root>\.body\.args\[0\]\.attrs"):
        assert_structural_equal(_conv_fn(1), _conv_fn(2))
    assert not structural_equal(_conv_fn(1), _conv_fn(2))


def test_free_vars_need_map_free_vars():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    assert not structural_equal(relay.add(x, x), relay.add(y, y))
    assert structural_equal(relay.add(x, x), relay.add(y, y), map_free_vars=True)
    assert structural_hash(relay.add(x, x), map_free_vars=True) == structural_hash(relay.add(y, y), map_free_vars=True)
    z = relay.var("z", shape=(2,))
    # x+x vs y+z: the second use must agree with the first mapping
    assert not structural_equal(relay.add(x, x), relay.add(y, z), map_free_vars=True)
    assert structural_equal(relay.add(x, x), relay.add(x, x))


def test_copies_of_a_free_variable_are_that_variable():
    """Two expressions typed separately over the same ``relay.var`` compare equal without map_free_vars (TVM's
    ``Var.vid``): InferType's copies keep the vid. Another variable of the same name and type differs."""
    x, w = relay.var("x", shape=(1, 2, 4, 4)), relay.var("w", shape=(3, 2, 1, 1))

    def body():
        return relay.nn.relu(relay.nn.conv2d(x, w))

    a, b = relay.infer_type(body()), relay.infer_type(body())
    assert structural_equal(a, b) and structural_hash(a) == structural_hash(b)
    assert structural_equal(a, body())
    other = relay.var("x", shape=(1, 2, 4, 4))
    assert not structural_equal(relay.add(x, x), relay.add(other, other))
    assert not structural_equal(relay.add(x, other), relay.add(x, x))


def test_bound_variable_mapping_is_consistent():
    a, b = relay.var("a", shape=(2,)), relay.var("b", shape=(2,))
    f = relay.Function([a, b], relay.subtract(a, b))
    c, d = relay.var("c", shape=(2,)), relay.var("d", shape=(2,))
    g = relay.Function([c, d], relay.subtract(d, c))
    assert not structural_equal(f, g)


def test_type_annotation_compared():
    a = relay.var("a", shape=(2,))
    b = relay.var("a", shape=(3,))
    assert not structural_equal(relay.Function([a], a), relay.Function([b], b))


def test_constants_compare_by_value():
    assert structural_equal(relay.const(np.ones((2, 2), "float32")), relay.const(np.ones((2, 2), "float32")))
    assert not structural_equal(relay.const(np.ones((2, 2), "float32")), relay.const(np.zeros((2, 2), "float32")))
    assert not structural_equal(relay.const(1.0), relay.const(1))  # dtype differs
    h1 = structural_hash(relay.const(np.arange(4, dtype="float32")))
    assert h1 == structural_hash(relay.const(np.arange(4, dtype="float32")))


def test_let_binding():
    x = relay.var("x", shape=(2,))
    v1, v2 = relay.var("v"), relay.var("w")
    e1 = relay.Let(v1, relay.add(x, x), relay.multiply(v1, v1))
    e2 = relay.Let(v2, relay.add(x, x), relay.multiply(v2, v2))
    assert structural_equal(e1, e2)
    assert structural_hash(e1) == structural_hash(e2)


def test_shared_dag_is_linear():
    x = relay.var("x", shape=(2,))
    y = relay.var("x", shape=(2,))
    e1, e2 = x, y
    for _ in range(300):  # 2**300 paths: only linear algorithms finish
        e1, e2 = relay.add(e1, e1), relay.add(e2, e2)
    start = time.perf_counter()
    assert structural_equal(relay.Function([x], e1), relay.Function([y], e2))
    assert structural_hash(relay.Function([x], e1)) == structural_hash(relay.Function([y], e2))
    assert time.perf_counter() - start < 1.0


def test_ten_thousand_chain():
    x = relay.var("x", shape=(4,))
    y = x
    for _ in range(10000):
        y = relay.add(y, relay.const(1.0))
    f = relay.Function([x], y)
    assert structural_equal(f, f)
    assert isinstance(structural_hash(f), int)


def test_scalars_and_containers():
    assert structural_equal((1, 2, "a"), (1, 2, "a"))
    assert not structural_equal((1, 2), (1, 2, 3))
    assert not structural_equal(1, 1.0)
    assert structural_equal(float("nan"), float("nan"))
    assert structural_equal({"a": 1}, {"a": 1})


def test_let_variable_annotations_are_hashed():
    """``let %v: int32`` and ``let %v: int64`` differ, in equality and in the hash (issue 13); alpha-equivalent
    bindings still hash alike."""
    def let(dtype, name="v"):
        v = relay.var(name, dtype=dtype)
        return relay.Let(v, relay.const(1, dtype), v)

    assert not structural_equal(let("int32"), let("int64"))
    assert structural_hash(let("int32")) != structural_hash(let("int64"))
    assert structural_hash(let("int32")) == structural_hash(let("int32", "w"))


def test_immediate_attributes_are_their_values():
    """As TVM's runtime.convert normalizes them: a TIR immediate attribute equals the Python value (issue 13)."""
    from kiln import tir

    f = relay.Function([relay.var("x", shape=(2,))], relay.const(1.0))
    assert structural_equal(f.with_attr("Primitive", tir.IntImm("int32", 1)), f.with_attr("Primitive", 1))
    assert f.with_attr("Compiler", tir.StringImm("ccompiler")).attrs["Compiler"] == "ccompiler"
    assert f.with_attr("flag", tir.IntImm("bool", 1)).attrs["flag"] is True


def test_shared_dataflow_nodes_are_structure():
    """As in TVM, a dataflow node shared by two users differs from two equal copies, for equality and hashing."""
    from kiln import relay

    x = relay.var("x")
    y0 = relay.add(x, x)
    shared, shared_again = relay.add(y0, y0), relay.add(relay.add(x, x), relay.add(x, x))
    y1 = relay.add(x, x)
    assert structural_equal(shared, relay.add(y1, y1))
    assert structural_hash(shared) == structural_hash(relay.add(y1, y1))
    assert not structural_equal(shared, shared_again) and not structural_equal(shared_again, shared)
    assert structural_hash(shared) != structural_hash(shared_again)
    # constants and projections are not dataflow nodes of their own: copies of them are equal
    c = relay.const(1.0)
    assert structural_equal(relay.Tuple([c, c]), relay.Tuple([relay.const(1.0), relay.const(1.0)]))


def test_function_attributes_holding_dicts_keyed_by_variables():
    from kiln import relay

    def fn(keyed_by_vid, value=1):
        x = relay.var("x", shape=(10,))
        return relay.Function([x], x).with_attr("dict", {x.vid if keyed_by_vid else x: value})

    for by_vid in (True, False):
        assert structural_equal(fn(by_vid), fn(by_vid)) and structural_hash(fn(by_vid)) == structural_hash(fn(by_vid))
        assert not structural_equal(fn(by_vid), fn(by_vid, value=2))


def test_typed_copy_of_a_free_variable_is_the_same_variable():
    from kiln.relay.testing import run_infer_type

    x = relay.var("x", shape=(3,))
    typed = run_infer_type(relay.add(x, x))
    assert typed.args[0] is not x  # inference made a typed copy: still the variable x, as in TVM (same vid)
    assert structural_equal(typed.args[0], x) and structural_equal(typed, run_infer_type(relay.add(x, x)))
    assert structural_hash(typed.args[0]) == structural_hash(x)
    assert not structural_equal(relay.add(x, x), relay.add(relay.var("x", shape=(3,)), x))


def test_free_variables_in_an_expression_of_a_binding_field_are_bound():
    """A buffer shape ``(x * 8,)`` binds ``x`` as TVM's DefEqual does; later uses must agree with that binding."""
    from kiln import tir

    def func(use_other):
        x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
        buf = tir.decl_buffer((x * 8,), "float32", "A")
        a = tir.Var("a", "handle")
        body = tir.BufferStore(buf, tir.const(0, "float32"), [y if use_other else x])
        return tir.PrimFunc([a], body, buffer_map={a: buf})

    assert structural_equal(func(False), func(False))
    assert structural_hash(func(False)) == structural_hash(func(False))
    assert not structural_equal(func(False), func(True))


def test_first_mismatch_paths_name_each_side():
    """get_first_structural_mismatch reports TVM's ObjectPaths: common elements first, then the missing one."""
    from kiln import tir
    from kiln.ir.base import get_first_structural_mismatch
    from kiln.runtime import ObjectPath

    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    f0 = tir.PrimFunc([x, y], tir.Evaluate(x + x))
    x1, y1 = tir.Var("x", "int32"), tir.Var("y", "int32")
    f1 = tir.PrimFunc([x1, y1], tir.Evaluate(x1 + y1))
    root = ObjectPath.root()
    assert get_first_structural_mismatch(f0, f1) == (root.attr("body").attr("value").attr("b"),) * 2
    assert get_first_structural_mismatch(f0, f0) is None
    z = tir.Var("z", "int32")
    f2 = tir.PrimFunc([x1, y1, z], tir.Evaluate(x1 + x1))
    lhs, rhs = get_first_structural_mismatch(f0, f2)
    assert lhs == root.attr("params").missing_array_element(2)
    assert rhs == root.attr("params").array_index(2)
    assert str(rhs) == "<root>.params[2]" and lhs != rhs


def test_size_variables_in_parameter_types_are_bound_by_the_parameters():
    """Two copies of a function, each with its own size variable ``b``, are equal (TVM's DefEqual); one that uses
    two variables where the other uses one twice is not."""
    from kiln import te

    def fn(*dims):
        params = [relay.var(f"p{i}", shape=(d, 4)) for i, d in enumerate(dims)]
        return relay.Function(params, relay.Tuple(params))

    b, c = te.size_var("b"), te.size_var("b")
    assert structural_equal(fn(b, b), fn(c, c)) and structural_hash(fn(b, b)) == structural_hash(fn(c, c))
    assert not structural_equal(fn(b, b), fn(b, c))
    assert not structural_equal(fn(b, 4), fn(4, 4))
    # outside a binding site a size variable is itself only
    assert not structural_equal(relay.var("x", shape=(b,)), relay.var("x", shape=(c,)))


def test_hash_of_maps_covers_every_entry():
    from kiln.ir import structural_hash
    from kiln.runtime import convert

    x = convert({"x": [1, 2, 3], "y": 2})
    y = convert({"y": 2, "x": [1, 2, 3]})
    z = convert({"y": 2, "x": [1, 2, 3, 4]})
    assert structural_hash(x) == structural_hash(y)
    assert structural_hash(x) != structural_hash(z)
    assert structural_hash({"a": 1, "b": 2}) != structural_hash({"a": 1, "b": 3})


def test_mismatch_path_names_the_module_function():
    import pytest

    from kiln import tir
    from kiln.ir import IRModule, assert_structural_equal

    def module(n):
        buf = tir.decl_buffer((1,), "int32", "A")
        i, a = tir.Var("i", "int32"), tir.Var("a", "handle")
        body = tir.For(i, 0, n, tir.ForKind.SERIAL, tir.BufferStore(buf, buf[0] + 1, [0]))
        return IRModule({"func": tir.PrimFunc([a], body, buffer_map={a: buf})})

    assert_structural_equal(module(16), module(16))
    with pytest.raises(ValueError, match=r'<root>\.functions\[I\.GlobalVar\("func"\)\]\.body\.extent\.value'):
        assert_structural_equal(module(16), module(32))
