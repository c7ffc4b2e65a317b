"""relay.optimize: the standard pipeline in TVM's order, gated by the PassContext."""

import kiln
from kiln import relay
from kiln.ir.instrument import pass_instrument
from kiln.relay.expr_functor import expr_children
from kiln.relay.optimize import STANDARD_PIPELINE
from kiln.relay.testing import assert_same_results, resnet


@pass_instrument
class RecordPasses:
    def __init__(self):
        self.names = []

    def run_before_pass(self, mod, info):
        self.names.append(info.name)


def _top_level(names):
    return [n for n in names if n in STANDARD_PIPELINE and n != "InferType"]


def _calls_outside_functions(expr):
    """The calls of ``expr`` that are not inside a nested function."""
    calls, stack, seen = [], [expr], set()
    while stack:
        node = stack.pop()
        if node in seen or isinstance(node, relay.Function):
            continue
        seen.add(node)
        if isinstance(node, relay.Call):
            calls.append(node)
        stack.extend(expr_children(node))
    return calls


def _net():
    return resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)


def test_order_and_results_at_opt_level_3():
    mod, params = _net()
    record = RecordPasses()
    with kiln.transform.PassContext(opt_level=3, instruments=[record]):
        optimized, _ = relay.optimize(mod, params=params)
    order = _top_level(record.names)
    for earlier, later in [("SimplifyInference", "FoldConstant"), ("FoldConstant", "FoldScaleAxis"),
                           ("FoldScaleAxis", "CanonicalizeOps"), ("CanonicalizeOps", "AlterOpLayout"),
                           ("AlterOpLayout", "FuseOps")]:
        assert order.index(earlier) < order.index(later)
    bound = relay.bind_params_by_name(mod["main"], params)
    assert_same_results(bound, optimized, rtol=1e-3, atol=1e-3)
    callees = [call.op for call in _calls_outside_functions(optimized["main"].body)]
    assert callees and all(isinstance(op, relay.Function) and op.is_primitive() for op in callees)
    names = [c.op.name for fn in callees for c in _calls_outside_functions(fn.body)]
    assert "nn.batch_norm" not in names and "nn.bias_add" not in names and "nn.conv2d" in names


def test_opt_level_gates_and_disabled_required():
    mod, params = _net()
    record = RecordPasses()
    with kiln.transform.PassContext(opt_level=1, instruments=[record]):
        relay.optimize(mod, params=params)
    ran = set(_top_level(record.names))
    assert "FoldConstant" not in ran and "CanonicalizeOps" not in ran and "FuseOps" in ran
    record = RecordPasses()
    with kiln.transform.PassContext(opt_level=3, disabled_pass=["FuseOps"], required_pass=["EliminateCommonSubexpr"],
                                    instruments=[record]):
        optimized, _ = relay.optimize(mod, params=params)
    ran = set(_top_level(record.names))
    assert "FuseOps" not in ran and "EliminateCommonSubexpr" in ran
    funcs = []
    relay.post_order_visit(optimized["main"], lambda e: funcs.append(e) if isinstance(e, relay.Function)
                           and e.is_primitive() else None)
    assert not funcs


def test_bind_params_by_name_allows_repeated_names_it_does_not_bind():
    import numpy as np
    import pytest

    from kiln.error import KilnError

    # relay.testing.lstm names every step's input "data" (as TVM does); only a bound name must be unique
    a, b, w = relay.var("data", shape=(2,)), relay.var("data", shape=(2,)), relay.var("w", shape=(2,))
    func = relay.Function([a, b, w], relay.add(relay.add(a, b), w))
    bound = relay.bind_params_by_name(func, {"w": np.ones(2, "float32")})
    assert [p.name_hint for p in bound.params] == ["data", "data"]
    with pytest.raises(KilnError, match="several parameters are named 'data'"):
        relay.bind_params_by_name(func, {"data": np.ones(2, "float32")})


def test_opt_level_4_combines_parallel_branches_and_keeps_the_results():
    # an Inception-style block: three 1x1 convolutions of one input, then three dense heads of one feature vector
    x = relay.var("x", shape=(1, 4, 6, 6))
    ws = [relay.var(f"w{i}", shape=(c, 4, 1, 1)) for i, c in enumerate((3, 5, 2))]
    branches = [relay.nn.relu(relay.nn.conv2d(x, w)) for w in ws]
    feature = relay.nn.batch_flatten(relay.concatenate(branches, axis=1))
    ds = [relay.var(f"d{i}", shape=(7, 360)) for i in range(3)]
    heads = relay.Tuple([relay.nn.dense(feature, d) for d in ds])
    mod = kiln.IRModule.from_expr(relay.Function([x, *ws, *ds], heads))
    record = RecordPasses()
    with kiln.transform.PassContext(opt_level=4, instruments=[record]):
        optimized, _ = relay.optimize(mod)
    assert {"CombineParallelConv2d", "CombineParallelDense", "CombineParallelBatchMatmul"} <= set(record.names)
    primitive_ops = [c.op.name for fn in _calls_outside_functions(optimized["main"].body)
                     for c in _calls_outside_functions(fn.op.body) if isinstance(c.op, kiln.ir.Op)]
    assert primitive_ops.count("nn.conv2d") == 1 and primitive_ops.count("nn.batch_matmul") == 1
    assert_same_results(mod, optimized, rtol=1e-4, atol=1e-4)
