"""Golden checks of the Relay text printer: TVM's exact spellings, graph normal form, scopes, metadata."""

import re
import time

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.ir import IRModule
from kiln.relay.printer import astext


def _conv_module():
    x = relay.var("x", shape=(1, 3, 56, 56))
    w = relay.const(np.zeros((64, 3, 3, 3), "float32"))
    y = relay.nn.conv2d(x, w, padding=(1, 1), channels=64, kernel_size=(3, 3))
    return IRModule.from_expr(relay.nn.relu(y))


def test_spec_conv2d_line_and_module_layout():
    text = str(_conv_module())
    lines = text.splitlines()
    assert lines[0] == '#[version = "0.0.5"]'
    assert lines[1] == "def @main(%x: Tensor[(1, 3, 56, 56), float32]) {"
    assert lines[2] == "  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1, 1, 1], channels=64, kernel_size=[3, 3]);"
    assert lines[3] == "  nn.relu(%0)"
    assert lines[4] == "}"
    assert "#[metadata]" in text


def test_typed_module_annotations():
    text = str(relay.infer_type(_conv_module()))
    assert "def @main(%x: Tensor[(1, 3, 56, 56), float32]) -> Tensor[(1, 64, 56, 56), float32] {" in text
    assert ("%0 = nn.conv2d(%x, meta[relay.Constant][0] /* ty=Tensor[(64, 3, 3, 3), float32] */, padding=[1, 1, 1, 1], "
            "channels=64, kernel_size=[3, 3]) /* ty=Tensor[(1, 64, 56, 56), float32] */;") in text
    assert "  nn.relu(%0) /* ty=Tensor[(1, 64, 56, 56), float32] */\n}" in text


def test_attribute_spellings():
    x = relay.var("x", shape=(1, 4, 8, 8))
    g = relay.var("g", shape=(4,))
    bn = relay.nn.batch_norm(x, g, g, g, g, epsilon=2e-5, scale=False)[0]
    s = relay.sum(bn, axis=(1,), keepdims=True)
    p = relay.nn.pad(s, ((0, 0), (0, 0), (1, 1), (2, 2)))
    q = relay.nn.max_pool2d(p, pool_size=(2, 2), layout="NCHW", ceil_mode=True)
    r = relay.nn.leaky_relu(q, alpha=0.2)
    t = relay.layout_transform(r, "NCHW", "NHWC")
    text = astext(relay.Function([x, g], t))
    assert "nn.batch_norm(%x, %g, %g, %g, %g, epsilon=2e-05f, scale=False)" in text
    assert "sum(%1, axis=[1], keepdims=True)" in text
    assert "pad_width=[[0, 0], [0, 0], [1, 1], [2, 2]]" in text
    assert "pool_size=[2, 2], ceil_mode=True)" in text
    assert "nn.leaky_relu(%4, alpha=0.2f)" in text
    assert 'src_layout="NCHW", dst_layout="NHWC"' in text


def test_default_attributes_are_not_printed():
    x = relay.var("x", shape=(1, 4, 8, 8))
    text = astext(relay.nn.softmax(relay.nn.conv2d(x, relay.var("w", shape=(4, 4, 1, 1)))))
    assert "nn.conv2d(%x, %w);" in text and "nn.softmax(%0)" in text


@pytest.mark.parametrize("value,dtype,expected", [
    (1.0, "float32", "1f"), (1, "int32", "1"), (1, "int64", "1i64"), (1.0, "float64", "1f64"),
    (True, "bool", "True"), (0.5, "float16", "0.5f16"), (-3, "int16", "-3i16"), (1e-5, "float32", "1e-05f"),
    (float("inf"), "float32", "inff"), (-2.5, "float32", "-2.5f"),
])
def test_scalar_constants_inline(value, dtype, expected):
    x = relay.var("x", shape=(), dtype=dtype)
    text = astext(relay.Tuple([x, relay.const(value, dtype)]))
    assert text.endswith(f"(%x, {expected})")


def test_non_simple_scalar_goes_to_metadata():
    text = astext(relay.Tuple([relay.const(3, "int8")]))
    assert "(meta[relay.Constant][0],)" in text and "#[metadata]" in text


def test_float_that_six_digits_cannot_hold_prints_exactly():
    value = np.float32(1.0) / np.float32(3.0)
    text = astext(relay.const(value))
    assert text == "0.33333334f"


def test_primitive_function_and_closure_call():
    x = relay.var("x", shape=(1, 8))
    p0 = relay.var("p0", shape=(1, 8))
    fused = relay.Function([p0], relay.exp(relay.nn.relu(p0))).with_attr("Primitive", 1)
    mod = relay.infer_type(IRModule.from_expr(relay.Function([x], relay.Call(fused, [x]))))
    text = str(mod)
    assert "%1 = fn (%p0: Tensor[(1, 8), float32], Primitive=1) -> Tensor[(1, 8), float32] {" in text
    assert "    %0 = nn.relu(%p0) /* ty=Tensor[(1, 8), float32] */;" in text
    assert "  } /* ty=fn (Tensor[(1, 8), float32]) -> Tensor[(1, 8), float32] */;" in text
    assert "  %1(%x) /* ty=Tensor[(1, 8), float32] */" in text


def test_let_if_tuple_projection_and_global_call():
    x = relay.var("x", shape=(2,))
    c = relay.var("c", shape=(), dtype="bool")
    v = relay.var("v")
    body = relay.If(c, relay.Tuple([v, x]), relay.Tuple([x, v]))
    f = relay.Function([x, c], relay.TupleGetItem(relay.Let(v, relay.add(x, x), body), 1))
    mod = IRModule({"f": f})
    y = relay.var("y", shape=(2,))
    mod["main"] = relay.Function([y], relay.Call(relay.GlobalVar("f"), [y, relay.const(True)]))
    text = str(mod)
    assert text.index("def @main") < text.index("def @f")
    assert "}\n\ndef @f(" in text
    assert "@f(%y, True)" in text
    assert "  %0 = (\n    let %v = add(%x, %x);\n    if (%c) {\n      (%v, %x)\n    } else {\n      (%x, %v)\n    }\n  );" in text
    assert "  %0.1\n}" in text


def test_one_tuple_and_empty_tuple():
    x = relay.var("x")
    assert astext(relay.Tuple([x])) == "free_var %x;\n(%x,)"
    assert astext(relay.Tuple([])) == "()"


def test_shared_subexpression_bound_once():
    x = relay.var("x", shape=(3,))
    a = relay.exp(x)
    text = astext(relay.Function([x], relay.add(a, a)))
    assert text.count("exp(") == 1 and "add(%0, %0)" in text


def test_node_shared_by_both_branches_is_bound_before_the_if():
    x = relay.var("x", shape=(3,))
    c = relay.var("c", shape=(), dtype="bool")
    shared = relay.exp(x)
    text = astext(relay.Function([x, c], relay.If(c, relay.nn.relu(shared), relay.negative(shared))))
    assert text.index("exp(%x)") < text.index("if (%c)")


def test_colliding_names_get_suffixes():
    a, b = relay.var("x", shape=(1,)), relay.var("x", shape=(1,))
    text = astext(relay.Function([a, b], relay.add(a, b)))
    assert text.startswith("fn (%x: Tensor[(1), float32], %x1: Tensor[(1), float32]) {")
    assert "add(%x, %x1)" in text


def test_unusual_names():
    names = ["input.1", "0", "conv/W:0", ""]
    params = [relay.var(n, shape=(1,)) for n in names]
    text = astext(relay.Function(params, relay.Tuple(params)))
    assert '%input.1: Tensor[(1), float32], %v0: Tensor[(1), float32], %"conv/W:0": ' in text
    assert "%v: Tensor[(1), float32]" in text


def test_free_vars_of_an_expression():
    x = relay.var("x", shape=(2, 2))
    text = astext(relay.nn.relu(x))
    assert text == "free_var %x: Tensor[(2, 2), float32];\nnn.relu(%x)"
    assert str(relay.nn.relu(x)) == text


def test_metadata_can_be_omitted():
    text = astext(_conv_module(), show_meta_data=False)
    assert "#[metadata]" not in text and "meta data section omitted" in text


def test_functions_printed_main_first_then_by_name():
    x = relay.var("x", shape=(1,))
    mod = IRModule({"zeta": relay.Function([x], x), "alpha": relay.Function([x], x), "main": relay.Function([x], x)})
    order = re.findall(r"def @(\w+)", str(mod))
    assert order == ["main", "alpha", "zeta"]


def test_long_chain_prints_without_recursion():
    x = relay.var("x", shape=(4,))
    y = x
    for _ in range(10000):
        y = relay.nn.relu(y)
    start = time.perf_counter()
    text = str(IRModule.from_expr(y))
    elapsed = time.perf_counter() - start
    lines = text.splitlines()
    assert lines[2] == "  %0 = nn.relu(%x);" and lines[-2] == "  nn.relu(%9998)"
    assert elapsed < 5.0


def test_long_let_chain_prints_without_recursion():
    x = relay.var("x", shape=(4,))
    vs = [relay.var(f"v{i}") for i in range(10000)]
    body = vs[-1]
    for i in range(len(vs) - 1, -1, -1):
        body = relay.Let(vs[i], relay.nn.relu(vs[i - 1] if i else x), body)
    text = astext(relay.Function([x], body))
    assert text.count("let %") == 10000 and text.rstrip().endswith("%v9999\n}")


def test_str_of_module_uses_the_registered_printer():
    assert kiln.get_global_func("relay.ir.astext") is not None
    assert str(_conv_module()).startswith('#[version = "0.0.5"]\ndef @main(')


def test_module_of_prim_funcs_prints_as_tvmscript_module():
    import kiln
    from kiln import te

    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1, name="B")
    text = str(kiln.lower(te.create_schedule(B.op), [A, B], name="addone"))
    assert "@I.ir_module\nclass Module:\n    @T.prim_func\n    def addone(" in text
    assert "        for i in range(4):" in text


def test_transpose_prints_its_axes_even_when_none():
    """transpose's ``axes`` has no default in TVM, so its printer always shows it; the text reads back."""
    x = relay.var("x", shape=(2, 3))
    assert "transpose(%x, axes=None)" in relay.transpose(x).astext()
    assert "axes=[1, 0]" in relay.transpose(x, (1, 0)).astext()
    assert "axis=" not in relay.squeeze(relay.var("y", shape=(1, 3))).astext()
    mod = IRModule.from_expr(relay.Function([x], relay.transpose(x)))
    kiln.ir.assert_structural_equal(relay.infer_type(relay.parse(mod.astext()))["main"], relay.infer_type(mod)["main"])
