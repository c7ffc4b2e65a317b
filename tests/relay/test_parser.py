"""The Relay text parser: round trips of printed IR, hand-written TVM text, diagnostics and spans."""

import time

import numpy as np
import pytest

from kiln import relay
from kiln.error import DiagnosticError
from kiln.ir import IRModule, Span, TensorType, assert_structural_equal, structural_equal


def _round_trip(mod):
    """parse(str(mod)) equals mod typed (the parser type-checks, as TVM's), from the untyped and the typed text,
    and printing the result gives the typed module's text."""
    text = str(mod)
    parsed = relay.parse(text)
    typed = relay.infer_type(mod)
    assert_structural_equal(parsed, typed)
    assert_structural_equal(relay.parse(str(typed)), typed)
    assert str(parsed) == str(IRModule(typed.functions, attrs=mod.attrs))
    return parsed


X = relay.var("x", shape=(1, 4, 8, 8))
W = relay.var("w", shape=(8, 4, 3, 3))
V4 = relay.var("v4", shape=(4,))
M = relay.var("m", shape=(4, 6))
B3 = relay.var("b3", shape=(2, 4, 6))

OP_CASES = {
    "conv2d": lambda: relay.nn.conv2d(X, W, strides=(2, 2), padding=(1, 1), dilation=(1, 1), channels=8,
                                      kernel_size=(3, 3), out_dtype="float32"),
    "conv2d_nhwc": lambda: relay.nn.conv2d(relay.var("xh", shape=(1, 8, 8, 4)), relay.var("wh", shape=(3, 3, 4, 8)),
                                           padding=(0, 1, 2, 1), data_layout="NHWC", kernel_layout="HWIO"),
    "grouped_conv": lambda: relay.nn.conv2d(X, relay.var("wg", shape=(4, 1, 3, 3)), groups=4, dilation=(2, 2)),
    "bias_add": lambda: relay.nn.bias_add(X, relay.var("b", shape=(8,)), axis=-1),
    "leaky_relu": lambda: relay.nn.leaky_relu(X, alpha=0.125),
    "max_pool2d": lambda: relay.nn.max_pool2d(X, pool_size=(3, 3), strides=(2, 2), padding=(1, 1), ceil_mode=True),
    "avg_pool2d": lambda: relay.nn.avg_pool2d(X, pool_size=(2, 2), dilation=(2, 2), count_include_pad=True),
    "global_max_pool2d": lambda: relay.nn.global_max_pool2d(relay.var("xh", shape=(1, 8, 8, 4)), layout="NHWC"),
    "dense": lambda: relay.nn.dense(M, relay.var("wd", shape=(3, 6)), units=3, out_dtype="float32"),
    "matmul": lambda: relay.nn.matmul(M, relay.var("wm", shape=(5, 6)), transpose_b=True),
    "batch_matmul": lambda: relay.nn.batch_matmul(B3, relay.var("y3", shape=(2, 6, 5)), transpose_b=False),
    "batch_norm": lambda: relay.nn.batch_norm(X, V4, V4, V4, V4, axis=1, epsilon=2e-5, center=False, scale=False)[0],
    "layer_norm": lambda: relay.nn.layer_norm(X, relay.var("g8", shape=(8,)), relay.var("b8", shape=(8,)), axis=3,
                                              epsilon=1e-6),
    "softmax": lambda: relay.nn.softmax(X, axis=1),
    "log_softmax": lambda: relay.nn.log_softmax(X, axis=2),
    "dropout": lambda: relay.nn.dropout(X, rate=0.25),
    "pad": lambda: relay.nn.pad(X, ((0, 0), (0, 0), (1, 2), (3, 4)), pad_value=0.5),
    "pad_edge": lambda: relay.nn.pad(X, ((0, 0), (1, 1), (0, 0), (0, 0)), pad_mode="edge"),
    "lrn": lambda: relay.nn.lrn(X, size=3, axis=1, bias=1.5, alpha=1e-4, beta=0.5),
    "resize2d": lambda: relay.image.resize2d(X, (16, 12), method="nearest_neighbor",
                                            coordinate_transformation_mode="asymmetric", rounding_method="floor"),
    "clip": lambda: relay.clip(X, -1.5, 6.0),
    "cast": lambda: relay.cast(X, "float16"),
    "reshape": lambda: relay.reshape(X, (1, -1)),
    "transpose": lambda: relay.transpose(X, (0, 2, 3, 1)),
    "squeeze": lambda: relay.squeeze(X, axis=[0]),
    "expand_dims": lambda: relay.expand_dims(X, 1, num_newaxis=2),
    "concatenate": lambda: relay.concatenate([X, X], axis=1),
    "split": lambda: relay.split(X, 2, axis=1)[1],
    "split_indices": lambda: relay.split(X, (1, 3), axis=1)[2],
    "take": lambda: relay.take(X, relay.const(np.array([0, 2], "int32")), axis=1, mode="wrap"),
    "strided_slice": lambda: relay.strided_slice(X, (0, 1), (1, 4), strides=(1, 2), axes=(0, 1)),
    "sum": lambda: relay.sum(X, axis=(1, 2), keepdims=True),
    "mean_exclude": lambda: relay.mean(X, axis=1, exclude=True),
    "argmax": lambda: relay.argmax(X, axis=1, keepdims=True, select_last_index=True),
    "where": lambda: relay.where(relay.var("c", shape=(1, 4, 8, 8), dtype="bool"), X, X),
    "full": lambda: relay.full(relay.const(2.0), shape=(2, 3), dtype="float32"),
    "zeros": lambda: relay.zeros((2, 3), "int64"),
    "layout_transform": lambda: relay.layout_transform(X, "NCHW", "NCHW2c"),
}


@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_operator_round_trip(name):
    expr = OP_CASES[name]()
    call = expr.tuple_value if isinstance(expr, relay.TupleGetItem) else expr
    if call.op.get_attr("attrs_type") is not None:
        assert call.attrs.non_default_items(), "the case should exercise attributes"
    _round_trip(IRModule.from_expr(expr))


def _resnet_block():
    x = relay.var("data", shape=(1, 3, 16, 16))
    w = relay.const(np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype("float32"))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1), channels=8, kernel_size=(3, 3)))
    y = relay.add(y, relay.const(np.arange(8, dtype="float32").reshape(1, 8, 1, 1)))
    return IRModule.from_expr(relay.nn.softmax(relay.nn.batch_flatten(relay.nn.global_avg_pool2d(y))))


def test_module_with_tensor_constants_round_trips_data_exactly():
    mod = _resnet_block()
    parsed = _round_trip(mod)
    consts = [e for e in _nodes(parsed["main"]) if isinstance(e, relay.Constant)]
    assert len(consts) == 2 and consts[0].data.dtype == "float32"


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int32", "int64", "uint8", "bool"])
def test_constants_of_several_dtypes(dtype):
    rng = np.random.default_rng(1)
    tensor = (rng.standard_normal((2, 3)) * 10).astype(dtype)
    scalar = np.array(tensor.flat[0], dtype=dtype)
    mod = IRModule.from_expr(relay.Tuple([relay.const(tensor, dtype), relay.const(scalar, dtype)]))
    parsed = _round_trip(mod)
    fields = parsed["main"].body.fields
    assert fields[1].data.dtype == dtype and fields[1].data.numpy() == scalar


@pytest.mark.parametrize("value", [1e-5, 0.1, 1 / 3, -0.0, 3.4e38, 1e-45, float("inf"), -float("inf"), float("nan")])
def test_float_scalars_are_exact(value):
    for dtype in ("float32", "float64", "float16"):
        with np.errstate(over="ignore"):  # 3.4e38 becomes inf in float16, which must round-trip too
            const = relay.const(np.array(value, dtype=dtype))
        back = relay.parse_expr(str(const))
        np.testing.assert_array_equal(back.data.numpy(), const.data.numpy())


def test_float_attributes_are_exact():
    x = relay.var("x", shape=(2,))
    mod = IRModule.from_expr(relay.clip(x, 1 / 3, 1e10 + 0.5))
    _round_trip(mod)


def test_lets_ifs_closures_tuples():
    x = relay.var("x", shape=(2,))
    c = relay.var("c", shape=(), dtype="bool")
    v = relay.var("v")
    f = relay.var("f")
    p = relay.var("p", shape=(2,))
    closure = relay.Function([p], relay.multiply(p, x))
    shared = relay.exp(x)
    body = relay.If(c, relay.Tuple([relay.Call(f, [shared]), v]), relay.Tuple([v, relay.negative(shared)]))
    expr = relay.Let(f, closure, relay.Let(v, relay.add(x, x), body))
    _round_trip(IRModule.from_expr(relay.Function([x, c], relay.TupleGetItem(expr, 0))))


def test_nested_let_as_call_argument_and_let_value():
    x = relay.var("x", shape=(2,))
    a, b = relay.var("a"), relay.var("b")
    inner = relay.Let(a, relay.exp(x), relay.add(a, a))
    outer = relay.Let(b, relay.Let(a, relay.sqrt(x), a), relay.multiply(inner, b))
    _round_trip(IRModule.from_expr(relay.Function([x], outer)))


def test_recursive_closure_let():
    x = relay.var("x", shape=(), dtype="int32")
    f = relay.var("f", relay.FuncType([TensorType((), "int32")], TensorType((), "int32")))
    n = relay.var("n", shape=(), dtype="int32")
    body = relay.If(relay.const(True), n, relay.Call(f, [n]))
    mod = IRModule.from_expr(relay.Function([x], relay.Let(f, relay.Function([n], body), relay.Call(f, [x]))))
    parsed = relay.parse(str(mod))
    assert_structural_equal(parsed, relay.infer_type(mod))


def test_primitive_functions_and_multiple_globals():
    x = relay.var("x", shape=(1, 8))
    p0, p1 = relay.var("p0", shape=(1, 8)), relay.var("p0", shape=(1, 8))
    f0 = relay.Function([p0], relay.exp(relay.nn.relu(p0))).with_attr("Primitive", 1)
    f1 = relay.Function([p1], relay.sigmoid(p1)).with_attrs({"Primitive": 1, "Compiler": "ccompiler"})
    y = relay.var("y", shape=(1, 8))
    mod = IRModule({"helper": relay.Function([y], relay.negative(y))})
    main_body = relay.Call(relay.GlobalVar("helper"), [relay.Call(f1, [relay.Call(f0, [x])])])
    mod["main"] = relay.Function([x], main_body)
    parsed = _round_trip(mod)
    assert "%p01: Tensor[(1, 8), float32], Compiler=\"ccompiler\", Primitive=1" in str(parsed)


def test_names_that_collide_or_need_quoting():
    names = ["x", "x", "x1", "input.1", "input", "0", "a:b", "t"]
    params = [relay.var(n, shape=(2,)) for n in names[:-1]]
    t = relay.var("t", relay.TupleType([TensorType((2,)), TensorType((2,))]))
    body = relay.Tuple([*params, relay.TupleGetItem(t, 1)])
    mod = IRModule.from_expr(relay.Function([*params, t], body))
    parsed = _round_trip(mod)
    assert [p.name_hint for p in parsed["main"].params][:5] == ["x", "x1", "x11", "input.1", "input1"]


def test_dotted_names_that_read_as_projections():
    x, x0, x0b = relay.var("x", shape=(2,)), relay.var("x.0", shape=(2,)), relay.var("x.0", shape=(2,))
    mod = IRModule.from_expr(relay.Function([x, x0, x0b], relay.Tuple([x0b, x0, x])))
    parsed = _round_trip(mod)
    assert [p.name_hint for p in parsed["main"].params] == ["x", "x.0_1", "x.0_2"]


def test_dotted_name_projection():
    t = relay.var("t.0", relay.TupleType([TensorType((2,)), relay.TupleType([TensorType((3,))])]))
    mod = IRModule.from_expr(relay.Function([t], relay.TupleGetItem(relay.TupleGetItem(t, 1), 0)))
    _round_trip(mod)
    parsed = relay.parse('def @main(%t: (float32, (float32, float32))) { %t.1.0 }')
    assert isinstance(parsed["main"].body, relay.TupleGetItem) and parsed["main"].body.index == 0


def test_module_attributes_round_trip():
    mod = _resnet_block().with_attr("executor", "graph")
    assert relay.parse(str(mod)).attrs["executor"] == "graph"


def test_handwritten_tvm_text():
    text = """
    #[version = "0.0.5"]
    // a comment
    def @main(%data: Tensor[(1, 3, 4, 4), float32], %w: Tensor[(2, 3, 1, 1), float32]) -> Tensor[(1, 2, 4, 4), float32] {
      %0 = nn.conv2d(%data, %w, channels=2, kernel_size=[1, 1]) /* ty=Tensor[(1, 2, 4, 4), float32] */;
      %1 = multiply(%0, -2f /* ty=float32 */);   /* nested /* comment */ */
      nn.relu(%1 + 1f)
    }
    """
    mod = relay.parse(text)
    x = relay.var("data", shape=(1, 3, 4, 4))
    w = relay.var("w", shape=(2, 3, 1, 1))
    y = relay.multiply(relay.nn.conv2d(x, w, channels=2, kernel_size=(1, 1)), relay.const(-2.0))
    expected = relay.Function([x, w], relay.nn.relu(relay.add(y, relay.const(1.0))), TensorType((1, 2, 4, 4)))
    assert_structural_equal(mod["main"], expected)


def test_infix_operators_and_negation():
    expr = relay.parse_expr("free_var %a: float32; free_var %b: float32; -%a + %b * 2f - 1f / %b")
    a, b = relay.var("a", "float32"), relay.var("b", "float32")
    expected = relay.subtract(relay.add(relay.negative(a), relay.multiply(b, relay.const(2.0))),
                              relay.divide(relay.const(1.0), b))
    assert structural_equal(expr, expected, map_free_vars=True)


def test_parse_expr_round_trip_with_free_vars():
    x = relay.var("x", shape=(2, 2))
    expr = relay.nn.softmax(relay.add(x, relay.const(np.ones((2, 2), "float32"))))
    assert structural_equal(relay.parse_expr(str(expr)), expr, map_free_vars=True)


def test_init_module_and_meta_table():
    x = relay.var("x", shape=(2,))
    helper = IRModule({"helper": relay.Function([x], relay.exp(x))})
    const = relay.const(np.arange(2, dtype="float32"))
    text = "def @main(%y: Tensor[(2), float32]) { @helper(add(%y, meta[relay.Constant][0])) }"
    mod = relay.parse(text, helper, {"relay.Constant": [const]})
    assert {gv.name_hint for gv in mod.functions} == {"helper", "main"}
    assert mod["main"].body.args[0].args[1] is const
    assert structural_equal(relay.fromtext(str(mod)), mod)


def test_spans_point_at_the_source():
    mod = relay.parse("def @main(%x: float32) {\n  %0 = exp(%x);\n  add(%0, 1f)\n}", source_name="m.relay")
    body = mod["main"].body
    assert body.span == Span("m.relay", 3, 3, 3, 14)
    assert body.args[0].span.line == 2 and body.args[0].span.column == 8
    assert mod["main"].params[0].span.source_name == "m.relay"


@pytest.mark.parametrize("text,line,column,message", [
    ("def @main(%x: float32) {\n  nn.relux(%x)\n}", 2, 3, "unknown operator `nn.relux`"),
    ("def @main(%x: Tensor[(1, 2, 4, 4), float32]) {\n  nn.softmax(%x, axes=1)\n}", 2, 18, "unknown attribute axes"),
    ("def @main(%x: float32) {\n  exp(%y)\n}", 2, 7, "unbound variable %y"),
    ("def @main(%x: float32) {\n  %0 = exp(%x)\n  %0\n}", 3, 3, "expected `;`"),
    ("def @main(%x: float32) {\n  %1\n}", 2, 3, "%1 is not bound"),
    ("def @main(%x: float32) {\n  @other(%x)\n}", 2, 3, "unknown global function @other"),
    ("def @main(%x: Tensor[(2), floaty]) { %x }", 1, 27, "unknown type or dtype `floaty`"),
    ("def @main(%x: float32) { exp(%x) $ }", 1, 34, "unexpected character '\\$'"),
    ("def @main(%x: float32) {\n  /* open", 2, 3, "unterminated comment"),
    ("def @main(%x: float32) { nn.conv2d(%x, %x, padding=[1, 2, 3]) }", 1, 26, "invalid attributes for operator"),
    ("def @main(%x: float32) { reshape(%x) }", 1, 26, "missing attributes newshape"),
    ("def @main(%x: float32) { nn.conv2d(%x, %x, channels=\"a\") }", 1, 26, "invalid attributes for operator"),
    ("fn (%x) { %x }", 1, 1, "expected `def`"),
    ("def @main(%x: float32) { meta[relay.Constant][0] }", 1, 26, "metadata table"),
    ("def @main(%x: Tensor[(1, 1, 4, 4), float32]) { nn.max_pool2d(%x, pool_size=[1, 1], strides=[1e400, 1]) }",
     1, 48,
     "invalid attributes for operator nn.max_pool2d"),  # found by the bad-input probe: it was an OverflowError
    ("def @main(%x: float32) { exp(%x) ", 1, 34, "expected `}`"),
])
def test_diagnostics_carry_line_and_column(text, line, column, message):
    with pytest.raises(DiagnosticError, match=message) as info:
        relay.parse(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert f"line {line}, column {column}" in str(info.value)


def test_long_chain_parses_without_recursion():
    x = relay.var("x", shape=(4,))
    y = x
    for i in range(10000):
        y = relay.add(y, relay.const(float(i))) if i % 2 else relay.nn.relu(y)
    mod = IRModule.from_expr(y)
    text = str(mod)
    from kiln.relay.parser import Parser

    start = time.perf_counter()
    untyped = Parser(text, "from_string", None).parse_module(None)  # the parser alone: relay.parse also types it
    elapsed = time.perf_counter() - start
    assert_structural_equal(untyped, mod)
    assert_structural_equal(relay.parse(text), relay.infer_type(mod))
    assert elapsed < 5.0


def test_long_let_chain_parses_without_recursion():
    x = relay.var("x", shape=(4,))
    vs = [relay.var(f"v{i}") for i in range(10000)]
    body = vs[-1]
    for i in range(len(vs) - 1, -1, -1):
        body = relay.Let(vs[i], relay.nn.relu(vs[i - 1] if i else x), body)
    mod = IRModule.from_expr(relay.Function([x], body))
    assert_structural_equal(relay.parse(str(mod)), relay.infer_type(mod))


def _nodes(expr):
    out = []
    relay.post_order_visit(expr, out.append)
    return out


def _random_expr(rng, pool, depth, cond):
    """A random graph mixing shared nodes, tuples, lets, ifs and closures (some primitive)."""
    k = rng.random()
    if depth <= 0 or k < 0.15:
        return rng.choice(pool)
    sub = lambda scope=pool: _random_expr(rng, scope, depth - 1, cond)
    if k < 0.35:
        return relay.add(sub(), sub())
    if k < 0.45:
        node = relay.exp(sub())
        pool.append(node)  # later users anywhere (other branches, closures) share it
        return node
    if k < 0.55:
        return relay.TupleGetItem(relay.Tuple([sub(), sub()]), rng.randrange(2))
    if k < 0.7:
        v = relay.var("v")
        return relay.Let(v, sub(), sub(pool + [v]))
    if k < 0.85:
        return relay.If(cond, sub(), sub())
    p = relay.var("p", shape=(2,))
    fn = relay.Function([p], sub(pool + [p]))
    if rng.random() < 0.3:
        fn = fn.with_attr("Primitive", 1)
    return relay.Call(fn, [sub()])


def test_random_graphs_round_trip():
    import random

    for seed in range(150):
        rng = random.Random(seed)
        x, c = relay.var("x", shape=(2,)), relay.var("c", shape=(), dtype="bool")
        body = _random_expr(rng, [x, relay.exp(x)], 6, c)
        mod = IRModule.from_expr(relay.Function([x, c], body))
        typed = relay.infer_type(mod)
        parsed = relay.parse(str(mod))
        assert_structural_equal(parsed, typed)
        assert str(parsed) == str(typed)
        assert_structural_equal(relay.parse(str(typed)), typed)


def test_deeply_nested_text_is_a_diagnostic():
    text = "def @main(%x: float32) { " + "exp(" * 5000 + "%x" + ")" * 5000 + " }"
    with pytest.raises(DiagnosticError, match="nested too deeply"):
        relay.parse(text)


def test_damaged_metadata_section_is_a_diagnostic():
    """Found by the bad-input probe: a metadata constant whose data does not fill its shape raised numpy's
    ValueError from inside the parser."""
    x = relay.var("x", shape=(2, 2))
    text = IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(np.ones((2, 2), "float32"))))).astext()
    damaged = text.replace('"shape": [2, 2]', '"shape": [2, 0]')
    assert damaged != text
    with pytest.raises(DiagnosticError, match=r"invalid metadata section: .*relay.Constant\): an array of shape "
                                              r"\[2, 0\] and dtype float32 needs 0 bytes, its data has 16"):
        relay.parse(damaged)
