"""GraphPlanMemory on fused functions: storage ids and sizes per expression, the reuse the graph executor gets."""

import json

import kiln
from kiln import relay
from kiln.relay.backend._backend import GraphPlanMemory


def _fused(body, params):
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function(params, body)))
    return relay.transform.InferType()(relay.transform.FuseOps(0)(mod))["main"]


def _calls(func):
    out = []
    relay.analysis.post_order_visit(func.body, lambda e: out.append(e) if isinstance(e, relay.Call) else None)
    return [c for c in out if isinstance(c.op, relay.Function)]


def test_chain_alternates_two_blocks():
    x, y = relay.var("x", shape=(10,)), relay.var("y", shape=(1,))
    z = relay.add(x, relay.exp(y))
    for _ in range(5):
        z = relay.exp(z)
    func = _fused(z, [x, y])
    info = GraphPlanMemory(func).expr_to_storage_info
    assert info[func.params[0]].storage_ids == [0] and info[func.params[1]].storage_ids == [1]
    calls = _calls(func)
    sids = [info[c].storage_ids[0] for c in calls]
    # exp(y) -> 2; add -> 3; then the exps alternate between block 2 (grown, reported at its first size) and 3
    assert sids == [2, 3, 2, 3, 2, 3, 2]
    assert info[calls[0]].storage_sizes == [4] and info[calls[1]].storage_sizes == [40]
    assert info[calls[2]].storage_sizes == [4] and all(d == [1] for d in (info[c].device_types for c in calls))


def test_same_plan_as_the_built_graph():
    x = relay.var("x", shape=(2, 8))
    a = relay.nn.relu(x)
    b = relay.exp(a)
    t = relay.Tuple([relay.sqrt(b), relay.abs(a)])
    func = _fused(relay.Tuple([t[0], relay.negative(t[1])]), [x])
    info = GraphPlanMemory(func).expr_to_storage_info
    graph = json.loads(relay.build(kiln.IRModule.from_expr(func), "llvm").get_graph_json())
    planned = [info[c].storage_ids[0] for c in _calls(func)]
    assert planned == graph["attrs"]["storage_id"][1][1:]  # the kernels' outputs, after the input
    assert info[func.body].storage_ids == [info[f].storage_ids[0] for f in func.body.fields]  # a tuple: its fields


def test_let_bound_values_share_their_storage():
    x = relay.var("x", shape=(4,))
    v = relay.var("v")
    body = relay.Let(v, relay.exp(x), relay.add(v, v))
    func = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([x], body)))["main"]
    info = GraphPlanMemory(func).expr_to_storage_info
    assert info[func.body.var].storage_ids == info[func.body.value].storage_ids == [1]
    assert info[func.body.body].storage_ids == [2]


def test_the_slices_of_a_concatenation_computed_in_place_share_its_storage():
    """As in the graph: the kernels whose outputs a concatenation gathers (64-byte slices, each also an output so
    none fuses into it) write into the concatenation's block, and the plan is the built graph's."""
    x = relay.var("x", shape=(1, 16))
    a, b = relay.exp(x), relay.nn.relu(x)
    func = _fused(relay.Tuple([relay.concatenate([a, b], axis=1), a, b]), [x])
    info = GraphPlanMemory(func).expr_to_storage_info
    calls = _calls(func)
    concat = next(c for c in calls if c.op.body.op.name == "concatenate")
    inputs = [next(c for c in calls if c.op.body.op.name == name) for name in ("exp", "nn.relu")]
    assert [info[c].storage_ids for c in inputs] == [info[concat].storage_ids] * 2
    graph = json.loads(relay.build(kiln.IRModule.from_expr(func), "llvm").get_graph_json())
    assert sorted({info[c].storage_ids[0] for c in calls}) == sorted(set(graph["attrs"]["storage_id"][1][1:]))
