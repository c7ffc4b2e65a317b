"""FuseOps: structure against hand-written expected functions (TVM's test_pass_fuse_ops.py style) and results
against the reference interpreter."""

import numpy as np

from kiln import relay
from kiln.ir import assert_structural_equal
from kiln.relay.analysis.graph_partitioner import GraphPartitioner
from kiln.relay.analysis.indexed_graph import create_indexed_graph
from kiln.relay.analysis.post_dominator import post_dominator_tree
from kiln.relay.op.op import OpPattern
from kiln.relay.transform.fuse_ops import fuse_function


def fuse(func, level=2, **kwargs):
    return fuse_function(func, level, **kwargs)


def primitive(params, body):
    return relay.Function(params, body).with_attr("Primitive", 1)


def check(before, expected, level=2):
    assert_structural_equal(fuse(before, level), relay.infer_type(expected))


def test_fuse_simple_chain():
    x = relay.var("x", shape=(10, 20))
    y = relay.squeeze(relay.exp(relay.add(x, relay.const(1, "float32"))))
    before = relay.Function([x], y)
    p0 = relay.var("p0", shape=(10, 20))
    f = primitive([p0], relay.squeeze(relay.exp(relay.add(p0, relay.const(1, "float32")))))
    x2 = relay.var("x", shape=(10, 20))
    check(before, relay.Function([x2], relay.Call(f, [x2])))


def test_conv2d_diamond():
    dshape = (1, 16, 64, 64)
    x = relay.var("x", shape=dshape)
    w1, w2, w3 = (relay.var(f"w{i}", shape=(16, 16, k, k)) for i, k in ((1, 3), (2, 1), (3, 3)))
    y = relay.add(x, relay.const(1, "float32"))
    z = relay.nn.conv2d(y, w1, kernel_size=(3, 3), padding=(1, 1), channels=16)
    z1 = relay.add(z, relay.const(1, "float32"))
    z2 = relay.nn.conv2d(z1, w2, kernel_size=(1, 1), channels=16)
    z3 = relay.nn.conv2d(z1, w3, kernel_size=(3, 3), padding=(1, 1), channels=16)
    before = relay.Function([x, w1, w2, w3], relay.add(z2, z3))

    # segment 0: the add before the first conv stays alone (its post-dominator is a conv)
    p0 = relay.var("p0", shape=dshape)
    f0 = primitive([p0], relay.add(p0, relay.const(1, "float32")))
    # segment 1: conv + the element-wise add after it
    p0, p1 = relay.var("p0", shape=dshape), relay.var("p1", shape=(16, 16, 3, 3))
    c = relay.nn.conv2d(p0, p1, kernel_size=(3, 3), padding=(1, 1), channels=16)
    f1 = primitive([p0, p1], relay.add(c, relay.const(1, "float32")))
    # segment 2: the second branch's conv alone (the add already holds an anchor)
    p0, p1 = relay.var("p0", shape=dshape), relay.var("p1", shape=(16, 16, 3, 3))
    f2 = primitive([p0, p1], relay.nn.conv2d(p0, p1, kernel_size=(3, 3), padding=(1, 1), channels=16))
    # segment 3: the first branch's conv + the add joining the branches
    p0, p1, p2 = relay.var("p0", shape=dshape), relay.var("p1", shape=(16, 16, 1, 1)), relay.var("p2", shape=dshape)
    f3 = primitive([p0, p1, p2], relay.add(relay.nn.conv2d(p0, p1, kernel_size=(1, 1), channels=16), p2))

    x, w1, w2, w3 = relay.var("x", shape=dshape), *(relay.var(f"w{i}", shape=(16, 16, k, k)) for i, k in
                                                     ((1, 3), (2, 1), (3, 3)))
    a = relay.Call(f0, [x])
    b = relay.Call(f1, [a, w1])
    c = relay.Call(f2, [b, w3])
    expected = relay.Function([x, w1, w2, w3], relay.Call(f3, [b, w2, c]))
    check(before, expected)


def test_seed_network_conv_bias_relu_fuse_and_pool_alone():
    x = relay.var("data", shape=(1, 3, 32, 32))
    w1, b1 = relay.var("w1", shape=(8, 3, 3, 3)), relay.var("b1", shape=(8,))
    w2, b2 = relay.var("w2", shape=(8, 8, 3, 3)), relay.var("b2", shape=(8,))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w1, padding=(1, 1)), b1))
    y = relay.nn.max_pool2d(y, (2, 2), (2, 2))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(y, w2, padding=(1, 1)), b2))
    fused = fuse(relay.Function([x, w1, b1, w2, b2], y))
    last = fused.body
    assert last.op.is_primitive()
    ops = []
    relay.post_order_visit(last.op.body, lambda e: ops.append(e.op.name) if isinstance(e, relay.Call) else None)
    assert ops == ["nn.conv2d", "nn.bias_add", "nn.relu"]
    pool = last.args[0]
    assert isinstance(pool.op, relay.Function) and pool.op.body.op.name == "nn.max_pool2d"


def test_fuse_opt_level_zero_gives_one_op_per_function():
    x = relay.var("x", shape=(4, 4))
    y = relay.nn.relu(relay.exp(relay.add(x, x)))
    fused = fuse(relay.Function([x], y), level=0)
    count = []
    relay.post_order_visit(fused, lambda e: count.append(e) if isinstance(e, relay.Function) and e.is_primitive()
                           else None)
    assert len(count) == 3
    for fn in count:
        assert isinstance(fn.body, relay.Call) and isinstance(fn.body.args[0], relay.Var)


def test_max_depth_splits_long_chains():
    x = relay.var("x", shape=(8,))
    y = x
    for _ in range(20):
        y = relay.exp(y)
    fused = fuse(relay.Function([x], y), max_depth=8)
    sizes = []

    def count(e):
        if isinstance(e, relay.Function) and e.is_primitive():
            n = []
            relay.post_order_visit(e.body, lambda c: n.append(c) if isinstance(c, relay.Call) else None)
            sizes.append(len(n))

    relay.post_order_visit(fused, count)
    assert sum(sizes) == 20 and max(sizes) <= 8 and len(sizes) >= 3


def test_reduction_absorbs_injective_inputs_and_tuple_root():
    x = relay.var("x", shape=(4, 8))
    s = relay.sum(relay.exp(relay.add(relay.transpose(x), relay.const(1.0))), axis=1)
    t = relay.Tuple([s, relay.nn.relu(x)])
    fused = fuse(relay.Function([x], t))
    assert isinstance(fused.body, relay.Tuple)  # a root tuple is not wrapped in a function
    first = fused.body.fields[0]
    ops = []
    relay.post_order_visit(first.op.body, lambda e: ops.append(e.op.name) if isinstance(e, relay.Call) else None)
    # broadcast/element-wise producers join the reduction; the injective transpose does not (TVM's rule: its path
    # to the post-dominator crosses a group whose pattern is already a reduction)
    assert ops == ["add", "exp", "sum"]
    assert first.args[0].op.body.op.name == "transpose"


def test_opaque_ops_stay_alone():
    x = relay.var("x", shape=(2, 8))
    y = relay.exp(relay.cumsum(relay.exp(x), axis=1))
    fused = fuse(relay.Function([x], y))
    names = []

    def collect(e):
        if isinstance(e, relay.Function) and e.is_primitive():
            ops = []
            relay.post_order_visit(e.body, lambda c: ops.append(c.op.name) if isinstance(c, relay.Call) else None)
            names.append(ops)

    relay.post_order_visit(fused, collect)
    assert ["cumsum"] in names and len(names) == 3


def test_constants_are_arguments_unless_linked():
    x = relay.var("x", shape=(1, 2, 4, 4))
    w = relay.const(np.ones((2, 2, 1, 1), "float32"))
    y = relay.nn.relu(relay.nn.conv2d(x, w))
    fused = fuse(relay.Function([x], y))
    assert len(fused.body.op.params) == 2 and isinstance(fused.body.args[1], relay.Constant)
    linked = fuse(relay.Function([x], y), link_params=True)
    assert len(linked.body.op.params) == 1


def test_graph_and_dominator_tree():
    x = relay.var("x", shape=(4,))
    a = relay.exp(x)
    b, c = relay.log(a), relay.sqrt(a)
    out = relay.add(b, c)
    body = relay.infer_type(relay.Function([x], out)).body
    graph = create_indexed_graph(body)
    names = [getattr(getattr(n.ref, "op", None), "name", "var") for n in graph.post_dfs_order]
    assert names == ["var", "exp", "log", "sqrt", "add"]
    assert graph.post_dfs_order[-1].extern_ref
    dom = post_dominator_tree(graph)
    assert dom[1].parent.gnode is graph.post_dfs_order[4]  # exp is post-dominated by add (a diamond)
    assert dom[1].pattern == OpPattern.ELEMWISE
    groups = GraphPartitioner(2).partition(graph)
    roots = {id(g.find_root()) for g in groups[1:]}
    assert len(roots) == 1  # the whole diamond fuses


def test_diamond_results_match_interpreter():
    x = relay.var("x", shape=(1, 4, 8, 8))
    w = relay.var("w", shape=(4, 4, 3, 3))
    y = relay.nn.conv2d(x, w, padding=(1, 1))
    z = relay.add(relay.nn.relu(y), relay.sigmoid(y))
    before = relay.Function([x, w], relay.nn.max_pool2d(z, (2, 2)))
    after = fuse(before)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((1, 4, 8, 8)).astype("float32"), rng.standard_normal((4, 4, 3, 3)).astype("float32")]
    ref = relay.create_executor("debug", mod=relay.IRModule.from_expr(before)).evaluate()(*args).numpy()
    got = relay.create_executor("debug", mod=relay.IRModule.from_expr(after)).evaluate()(*args).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_pass_form_printed_like_tvm():
    import kiln

    x = relay.var("x", shape=(10, 20))
    y = relay.squeeze(relay.exp(relay.add(x, relay.const(1, "float32"))))
    mod = kiln.IRModule.from_expr(relay.Function([x], y))
    with kiln.transform.PassContext(opt_level=2):
        fused = relay.transform.FuseOps()(mod)
    text = str(fused)
    assert "%2 = fn (%p0: Tensor[(10, 20), float32], Primitive=1) -> Tensor[(10, 20), float32] {" in text
    assert "%0 = add(%p0, 1f" in text and "%2(%x)" in text
    assert_structural_equal(relay.parse(text), fused)


def test_pass_info_config_and_opt_level():
    import kiln

    p = relay.transform.FuseOps()
    assert (p.info.opt_level, p.info.name, list(p.info.required)) == (0, "FuseOps", ["InferType"])
    assert str(relay.transform.FuseOps(fuse_opt_level=2)) == "FuseOps(fuse_opt_level=2)"
    configs = kiln.transform.PassContext.list_configs()
    assert configs["relay.FuseOps.max_depth"] == {"type": "IntImm", "python_type": "int", "default": 256}
    x = relay.var("x", shape=(8,))
    y = x
    for _ in range(12):
        y = relay.exp(y)
    mod = kiln.IRModule.from_expr(relay.Function([x], y))
    with kiln.transform.PassContext(opt_level=2, config={"relay.FuseOps.max_depth": 4}):
        fused = relay.transform.FuseOps()(mod)
    funcs = []
    relay.post_order_visit(fused["main"], lambda e: funcs.append(e) if isinstance(e, relay.Function)
                           and e.is_primitive() else None)
    assert len(funcs) == 3
    with kiln.transform.PassContext(opt_level=0):  # fuse_opt_level=-1 takes the context's opt_level
        unfused = relay.transform.FuseOps()(mod)
    funcs = []
    relay.post_order_visit(unfused["main"], lambda e: funcs.append(e) if isinstance(e, relay.Function)
                           and e.is_primitive() else None)
    assert len(funcs) == 12


def test_resnet_and_transformer_fuse_preserve_results(check_pass):
    from kiln.relay.testing import resnet, transformer

    prep = [relay.transform.SimplifyInference(), relay.transform.CanonicalizeOps()]
    net = resnet.get_net(num_layers=8, image_shape=(3, 16, 16), num_classes=4)
    check_pass(net, prep + [relay.transform.FuseOps()], rtol=1e-3, atol=1e-3)
    check_pass(transformer.get_net(seq=4, hidden=16, heads=2, ffn=32), prep + [relay.transform.FuseOps()],
               rtol=1e-3, atol=1e-4)


def test_post_dominator_tree_comes_from_the_analysis_manager():
    import kiln

    x = relay.var("x", shape=(4,))
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.exp(x))))
    mod = relay.transform.InferType()(mod)
    with kiln.transform.PassContext(opt_level=2) as ctx:
        relay.transform.FuseOps()(mod)
        relay.transform.FuseOps(fuse_opt_level=1)(mod)
        stats = ctx.analysis_manager.stats["relay.PostDominatorTree"]
    assert stats["computed"] == 1 and stats["reused"] == 1


def test_target_max_function_args_limits_groups():
    import kiln
    from kiln.target import Target

    xs = [relay.var(f"x{i}", shape=(4,)) for i in range(8)]
    y = xs[0]
    for x in xs[1:]:
        y = relay.add(y, x)
    mod = kiln.IRModule.from_expr(relay.Function(xs, y))

    def largest(mod):
        sizes = []
        relay.post_order_visit(mod["main"], lambda e: sizes.append(len(e.params)) if isinstance(e, relay.Function)
                               and e.is_primitive() else None)
        return max(sizes)

    with kiln.transform.PassContext(opt_level=2):
        assert largest(relay.transform.FuseOps()(mod)) == 8
        with Target("llvm -max-function-args=3"):
            fused = relay.transform.FuseOps()(mod)
    assert largest(fused) <= 3
    from kiln.relay.testing import assert_same_results

    assert_same_results(mod, fused)


def test_functions_calling_global_functions_fuse_around_the_calls():
    """A rewritten call of a global function is typed from the module (recursion included)."""
    import kiln
    from kiln.relay.testing import assert_same_results

    mod = kiln.IRModule()
    count = relay.GlobalVar("count")
    n = relay.var("n", shape=(), dtype="int32")
    body = relay.If(relay.cast(n, "bool"), relay.Call(count, [n - relay.const(1)]) + relay.const(2), n)
    mod[count] = relay.Function([n], body, ret_type=relay.TensorType((), "int32"))
    m = relay.var("m", shape=(), dtype="int32")
    mod["main"] = relay.Function([m], relay.exp(relay.cast(relay.Call(count, [m * relay.const(2)]), "float32")))
    fused = relay.transform.FuseOps(fuse_opt_level=2)(relay.transform.InferType()(mod))
    calls = []
    relay.post_order_visit(fused["count"], lambda e: calls.append(e) if isinstance(e, relay.Call)
                           and isinstance(e.op, relay.Function) else None)
    assert len(calls) == 3 and all(c.op.is_primitive() for c in calls)  # cast, n - 1 and the + 2
    assert_same_results(mod, fused)


def test_stop_fusion_ends_a_group_and_leaves_no_kernel():
    """As TVM's FuseMutator: the annotation splits the chain and is dropped, so no kernel copies the value."""
    x = relay.var("x", shape=(10, 20))
    before = relay.Function([x], relay.exp(relay.annotation.stop_fusion(relay.add(x, relay.const(1, "float32")))))
    p0, p1 = relay.var("p0", shape=(10, 20)), relay.var("p01", shape=(10, 20))
    f1 = primitive([p0], relay.add(p0, relay.const(1, "float32")))
    f2 = primitive([p1], relay.exp(p1))
    x2 = relay.var("x", shape=(10, 20))
    check(before, relay.Function([x2], relay.Call(f2, [relay.Call(f1, [x2])])))


def test_softmax_fuses_with_its_elementwise_consumers(check_pass):
    """softmax, log_softmax and fast_softmax are OUT_ELEMWISE_FUSABLE (TVM's pattern): the cast and the broadcast
    multiply after them join their kernel, the exp before them does not (an injective producer never fuses into an
    out-element-wise-fusable op)."""
    for op in (relay.nn.softmax, relay.nn.log_softmax, relay.nn.fast_softmax):
        x = relay.var("x", shape=(4, 16))
        s = relay.var("s", shape=(16,))
        before = relay.Function([x, s], relay.cast(relay.multiply(op(relay.exp(x)), s), "float16"))
        p0, p1 = relay.var("p0", shape=(4, 16)), relay.var("p1", shape=(16,))
        g = primitive([p0, p1], relay.cast(relay.multiply(op(p0), p1), "float16"))
        q = relay.var("p0", shape=(4, 16))
        e = primitive([q], relay.exp(q))
        x2, s2 = relay.var("x", shape=(4, 16)), relay.var("s", shape=(16,))
        check_pass(before, [relay.transform.FuseOps(fuse_opt_level=2)],
                   relay.Function([x2, s2], relay.Call(g, [relay.Call(e, [x2]), s2])), rtol=1e-3, atol=1e-3)


def test_fused_softmax_kernels_compute_numpy_results():
    """The x86 softmax schedule computes the fused epilogue inside its parallel loop; checked against numpy for
    every softmax kind, the first, a middle and the last axis, with broadcast operands in the
    epilogue."""
    import json

    import kiln
    from kiln.contrib import graph_executor

    def np_softmax(a, axis):
        e = np.exp(a - a.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    rng = np.random.default_rng(1)
    for name, ref in (("softmax", np_softmax), ("fast_softmax", np_softmax),
                      ("log_softmax", lambda a, axis: np.log(np_softmax(a, axis)))):
        for axis in (0, 1, -1):
            for dshape, bshape in (((2, 6, 5), (5,)), ((4, 7), (4, 1))):
                data = rng.standard_normal(dshape).astype("float32")
                bias = rng.standard_normal(bshape).astype("float32")
                x, b = relay.var("x", shape=dshape), relay.var("b", shape=bshape)
                y = relay.nn.relu(relay.add(getattr(relay.nn, name)(x, axis=axis), b))
                mod = kiln.IRModule.from_expr(relay.Function([x, b], y))
                with kiln.transform.PassContext(opt_level=3):
                    lib = relay.build(mod, target="llvm")
                kernels = [n for n in json.loads(lib.get_graph_json())["nodes"] if n["op"] == "tvm_op"]
                assert len(kernels) == 1
                m = graph_executor.GraphModule(lib["default"](kiln.cpu()))
                m.run(x=data, b=bias)
                want = np.maximum(ref(data.astype("float64"), axis) + bias, 0)
                np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-4, atol=1e-5)


def test_gpu_target_limits_arguments_as_tvm_counts_them():
    """Under Target("metal") (max_function_args=31) a kernel keeps one argument for its output, so the first group
    of a long sum takes 30 inputs; with a dynamic dimension each input also passes its size and two strides, and
    the output its size, so only 7 fit ((31 - 2) // 4)."""
    import kiln
    from kiln.relay.testing import assert_same_results
    from kiln.target import Target

    def largest(shape):
        xs = [relay.var(f"x{i}", shape=shape) for i in range(40)]
        y = relay.exp(relay.add(xs[0], relay.const(1.0)))
        for x in xs[1:]:
            y = relay.add(y, relay.exp(relay.add(x, relay.const(1.0))))
        mod = kiln.IRModule.from_expr(relay.Function(xs, y))
        with Target("metal"), kiln.transform.PassContext(config={"relay.FuseOps.max_depth": 1000}):
            fused = relay.transform.FuseOps()(mod)
        sizes = []
        relay.post_order_visit(fused["main"], lambda e: sizes.append(len(e.params)) if isinstance(e, relay.Function)
                               and e.is_primitive() else None)
        return mod, fused, max(sizes)

    mod, fused, n = largest((2, 3))
    assert n == 30
    assert_same_results(mod, fused)
    assert largest((relay.Any(), 3))[2] == 7
