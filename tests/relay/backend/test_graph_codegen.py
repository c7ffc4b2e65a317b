"""Graph codegen (kiln/relay/backend/graph_codegen.py): TVM's graph JSON, parameter names, storage planning."""

import itertools
import json

import numpy as np
import pytest

import kiln
import kiln.contrib.graph_executor
from kiln import relay
from kiln.contrib.debugger import debug_executor
from kiln.error import CodegenError
from kiln.relay.backend.graph_codegen import MATCH_RANGE, codegen, plan_memory
from kiln.relay.backend.lower_te import lower_te


def lowered(func, opt_level=3):
    with kiln.transform.PassContext(opt_level=opt_level), kiln.target.Target("llvm"):
        mod, _ = relay.optimize(kiln.IRModule.from_expr(func), "llvm")
        return lower_te(mod)


def graph_of(func, opt_level=3):
    result = codegen(lowered(func, opt_level))
    return json.loads(result.graph_json), result


def test_graph_json_format():
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(3,), dtype="int32")
    w = relay.const(np.ones((2, 3), "float32"))
    body = relay.Tuple([relay.exp(relay.add(x, w)), relay.cast(y, "float32"), x])
    graph, result = graph_of(relay.Function([x, y], body))
    nodes = graph["nodes"]
    assert [n["name"] for n in nodes[:2]] == ["x", "y"] and nodes[0] == {"op": "null", "name": "x", "inputs": []}
    assert graph["arg_nodes"] == [i for i, n in enumerate(nodes) if n["op"] == "null"]
    assert [nodes[i]["name"] for i in graph["arg_nodes"]] == ["x", "y", "p0"]
    assert list(result.params) == ["p0"] and np.array_equal(result.params["p0"].numpy(), np.ones((2, 3)))
    kernel = next(n for n in nodes if n["op"] == "tvm_op" and "exp" in n["name"])
    assert kernel["attrs"] == {"func_name": "tvmgen_default_fused_add_exp", "num_inputs": "2", "num_outputs": "1",
                               "flatten_data": "0", "relay_ops": "add,exp"}
    assert kernel["inputs"] == [[0, 0, 0], [2, 0, 0]]
    assert graph["heads"][2] == [0, 0, 0]  # an input returned as is
    assert graph["node_row_ptr"] == list(range(len(nodes) + 1))
    attrs = graph["attrs"]
    assert attrs["dltype"][0] == "list_str" and attrs["dltype"][1][:2] == ["float32", "int32"]
    assert attrs["shape"] == ["list_shape", [[2, 3], [3], [2, 3], [2, 3], [3]]]
    assert attrs["storage_id"][0] == "list_int" and len(set(attrs["storage_id"][1])) == 5
    assert sorted(gv.name_hint for gv in result.lowered_funcs.functions) == [
        "tvmgen_default_fused_add_exp", "tvmgen_default_fused_cast"]


def test_multi_output_kernels_and_projections():
    x = relay.var("x", shape=(6, 2))
    parts = relay.split(relay.exp(x), 3, axis=0)
    body = relay.Tuple([relay.nn.relu(parts[2]), parts[0]])
    graph, _ = graph_of(relay.Function([x], body), opt_level=0)
    split = next(n for n in graph["nodes"] if "split" in n["name"])
    sid = graph["nodes"].index(split)
    assert split["attrs"]["num_outputs"] == "3"
    assert graph["node_row_ptr"][sid + 1] - graph["node_row_ptr"][sid] == 3
    relu = next(n for n in graph["nodes"] if "relu" in n["name"])
    assert relu["inputs"] == [[sid, 2, 0]] and graph["heads"][1] == [sid, 0, 0]


def test_storage_is_reused_along_a_chain():
    x = relay.var("x", shape=(64,))
    y = x
    for _ in range(8):
        y = relay.exp(y)
    graph, _ = graph_of(relay.Function([x], y), opt_level=0)  # eight kernels, nothing fused
    sids = graph["attrs"]["storage_id"][1]
    assert len(sids) == 9 and len(set(sids)) == 3  # the input, then two buffers used in turn
    assert all(a != b for a, b in itertools.pairwise(sids[1:]))  # no kernel writes the buffer it reads


def test_plan_memory_rules():
    t = lambda n: kiln.ir.TensorType((n,), "float32")  # noqa: E731
    nodes = [{"op": "null", "name": "x", "inputs": []},
             {"op": "tvm_op", "name": "a", "inputs": [[0, 0, 0]]},   # 1000 floats
             {"op": "tvm_op", "name": "b", "inputs": [[1, 0, 0]]},   # 10 floats: the big block is too big
             {"op": "tvm_op", "name": "c", "inputs": [[2, 0, 0]]},   # 100 floats: reuses the big block
             {"op": "tvm_op", "name": "d", "inputs": [[3, 0, 0]]},   # 20 floats: head
             {"op": "tvm_op", "name": "e", "inputs": [[4, 0, 0]]}]   # two outputs, one unused
    types = [[t(1000)], [t(1000)], [t(10)], [t(100)], [t(20)], [t(20), t(20)]]
    sids, _ = plan_memory(nodes, types, [(4, 0), (5, 0)])
    assert sids[0] != sids[1] and sids[2] not in sids[:2]  # 1000 > 10 * MATCH_RANGE: a new block
    assert sids[3] == sids[1] and 1000 <= 100 * MATCH_RANGE
    assert sids[4] == sids[2]
    assert sids[5] not in (sids[4],) and sids[6] not in (sids[4], sids[5])  # the head stays alive
    grown, _ = plan_memory(nodes[:3], [[t(10)], [t(10)], [t(100)]], [(2, 0)])
    assert grown[2] != grown[1]  # the kernel's own input is still live when its output is placed


def test_unsupported_programs():
    x = relay.var("x", shape=(2,))
    c = relay.var("c", shape=(), dtype="bool")
    mod = lowered(relay.Function([c, x], relay.If(c, relay.exp(x), x)))
    with pytest.raises(CodegenError, match="cannot run a If"):
        codegen(mod)
    pair = relay.var("pair", relay.TupleType([relay.TensorType((2,)), relay.TensorType((2,))]))
    with pytest.raises(CodegenError, match="input %pair"):
        codegen(lowered(relay.Function([pair], relay.exp(relay.TupleGetItem(pair, 0)))))
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    mod["helper"] = relay.Function([x], x)
    mod["main"] = relay.Function([x], relay.Call(mod.get_global_var("helper"), [x]))
    with pytest.raises(CodegenError, match="calls @helper, which was not lowered"):
        codegen(lower_te(mod))
    with pytest.raises(CodegenError, match="is a PrimFunc"):
        codegen(lowered(relay.Function([x], relay.exp(x))), entry="tvmgen_default_fused_exp")


def test_input_and_parameter_names():
    p0, x = relay.var("p0", shape=(2,)), relay.var("x", shape=(2,))
    c1, c2 = relay.const(np.ones(2, "float32")), relay.const(np.full(2, 2, "float32"))
    graph, result = graph_of(relay.Function([p0, x], relay.Tuple([relay.add(p0, c1), relay.multiply(x, c2)])))
    names = [graph["nodes"][i]["name"] for i in graph["arg_nodes"]]
    assert names == ["p0", "x", "p1", "p2"] and list(result.params) == ["p1", "p2"]


def test_inputs_sharing_a_name_hint_get_distinct_names():
    """TVM accepts parameters of @main that share a name hint; the graph names a repeat ``<hint>_<k>`` with a
    ``k`` no parameter has, and the executor (called by position) feeds each its own argument."""
    x, twin, x1, third = (relay.var(n, shape=(2,)) for n in ("x", "x", "x_1", "x"))
    func = relay.Function([x, twin, x1, third], relay.subtract(relay.subtract(x, twin), relay.multiply(x1, third)))
    graph, _ = graph_of(func)
    assert [graph["nodes"][i]["name"] for i in graph["arg_nodes"]] == ["x", "x_2", "x_1", "x_3"]
    args = [np.random.uniform(size=2).astype("float32") for _ in range(4)]
    run = relay.create_executor("graph", mod=kiln.IRModule.from_expr(func), target="llvm").evaluate()
    np.testing.assert_allclose(run(*args).numpy(), args[0] - args[1] - args[2] * args[3], rtol=1e-6)


def test_reshape_only_kernels_are_no_ops_sharing_storage():
    """As in TVM, a kernel that only reshapes is a ``__nop`` whose output is its input's block (not compiled): the
    block stays alive while either view is, and results match the reference interpreter."""
    x = relay.var("x", shape=(2, 6))
    e = relay.exp(x)
    body = relay.Tuple([relay.nn.relu(relay.reshape(e, (3, 4))), relay.reshape(e, (12,)),
                        relay.nn.batch_flatten(relay.expand_dims(x, 0)), relay.reshape(x, (12,))])
    func = relay.Function([x], body)
    graph, result = graph_of(func)
    kernels = [n["attrs"]["func_name"] for n in graph["nodes"] if n["op"] == "tvm_op"]
    assert kernels.count("__nop") == 3 and "__nop" not in {gv.name_hint for gv in result.lowered_funcs.functions}
    sid, row = graph["attrs"]["storage_id"][1], graph["node_row_ptr"]
    for nid, node in enumerate(graph["nodes"]):
        if node.get("attrs", {}).get("func_name") == "__nop":
            src = node["inputs"][0][0]
            assert sid[row[nid]] == sid[row[src]]  # a view of its input's block
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(kiln.IRModule.from_expr(func), target="llvm")
    m = kiln.contrib.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    data = np.random.default_rng(0).uniform(-1, 1, (2, 6)).astype("float32")
    m.set_input("x", data)
    m.run()
    want = relay.create_executor("debug", mod=kiln.IRModule.from_expr(func)).evaluate()(data)
    for i in range(4):
        np.testing.assert_allclose(m.get_output(i).numpy(), want[i].numpy(), rtol=1e-6)


def test_plan_memory_keeps_a_viewed_block_alive():
    t = lambda n: kiln.ir.TensorType((n,), "float32")  # noqa: E731
    nodes = [{"op": "null", "name": "x", "inputs": []},
             {"op": "tvm_op", "name": "a", "inputs": [[0, 0, 0]]},
             {"op": "tvm_op", "name": "view", "attrs": {"func_name": "__nop"}, "inputs": [[1, 0, 0]]},
             {"op": "tvm_op", "name": "b", "inputs": [[1, 0, 0]]},   # a's last direct use
             {"op": "tvm_op", "name": "c", "inputs": [[3, 0, 0]]},   # must not take a's block: the view is live
             {"op": "tvm_op", "name": "d", "inputs": [[2, 0, 0], [4, 0, 0]]}]
    sids, _ = plan_memory(nodes, [[t(8)]] * 6, [(5, 0)])
    assert sids[2] == sids[1] and sids[4] != sids[1] and sids[5] != sids[1]


def _run_graph(func, data, opt_level=3):
    with kiln.transform.PassContext(opt_level=opt_level):
        lib = relay.build(kiln.IRModule.from_expr(func), target="llvm")
    m = kiln.contrib.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    for name, value in data.items():
        m.set_input(name, value)
    m.run()
    return [m.get_output(i).numpy() for i in range(m.get_num_outputs())], json.loads(lib.get_graph_json())


def _reference(func, data):
    want = relay.create_executor("debug", mod=kiln.IRModule.from_expr(func)).evaluate()(*data.values())
    return [w.numpy() for w in want] if isinstance(want, list | tuple) else [want.numpy()]


def test_concatenations_are_computed_in_place():
    """A dense block's concatenations (each feeding the next layer and the next concatenation) become ``__nop``
    nodes: each layer's convolution writes its slice of one buffer, the concatenation kernels are not compiled, and
    the results are the reference interpreter's."""
    x = relay.var("x", shape=(1, 16, 8, 8))
    stem = relay.nn.relu(relay.nn.conv2d(x, relay.const(np.full((16, 16, 1, 1), 0.1, "float32"))))
    rng = np.random.default_rng(1)
    features, channels = stem, 16
    for _ in range(3):
        w = relay.const(rng.uniform(-0.5, 0.5, (16, channels, 3, 3)).astype("float32"))
        new = relay.nn.relu(relay.nn.conv2d(relay.nn.relu(features), w, padding=(1, 1)))
        features, channels = relay.concatenate([features, new], axis=1), channels + 16
    func = relay.Function([x], relay.Tuple([features, relay.exp(features * relay.const(0.1))]))
    data = {"x": rng.uniform(-1, 1, (1, 16, 8, 8)).astype("float32")}
    got, graph = _run_graph(func, data)
    for g, w in zip(got, _reference(func, data), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    concats = [n for n in graph["nodes"] if n["op"] == "tvm_op" and n["attrs"].get("relay_ops") == "concatenate"]
    assert len(concats) == 3 and all(n["attrs"]["func_name"] == "__nop" for n in concats)
    sid, offset, row = graph["attrs"]["storage_id"][1], graph["attrs"]["storage_offset"][1], graph["node_row_ptr"]
    nodes = graph["nodes"]
    last = nodes.index(concats[-1])
    block = sid[row[last]]
    slices = sorted((offset[row[src] + k], row[src] + k) for n in concats for src, k, _ in n["inputs"])
    assert all(sid[e] == block for _, e in slices)  # every layer's output is in the last concatenation's buffer
    assert [o for o, _ in slices if o > 0] == [16 * 64 * 4, 32 * 64 * 4, 48 * 64 * 4]  # one slice per layer
    # nothing else uses the block while the block is live (from the stem to the exp)
    first = min(nid for nid, n in enumerate(nodes) if any(row[nid] <= e < row[nid + 1] for _, e in slices))
    live = range(row[first], row[last + 1])
    members = {e for _, e in slices} | {row[nodes.index(n)] for n in concats}
    assert all(sid[e] != block for e in live if e not in members)
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(kiln.IRModule.from_expr(func), target="llvm")
    debug = debug_executor.create(lib.get_graph_json(), lib.get_lib(), kiln.cpu(0))
    debug.set_input(**lib.get_params(), **data)
    blocked = debug.debug_get_output(last)  # a node running no kernel: its slices, in the blocked layout
    np.testing.assert_array_equal(blocked, got[0].reshape(1, 8, 8, 8, 8).transpose(0, 1, 3, 4, 2))


@pytest.mark.parametrize("case", ["graph input", "repeated input", "interleaved", "unaligned", "shared slice"])
def test_concatenations_that_cannot_be_in_place_run_their_kernel(case):
    """Inputs that are not a kernel's own output (a graph input, the same tensor twice, one already a slice of
    another concatenation), an axis after a non-unit one (slices interleave), or a slice not 64-byte aligned:
    the concatenation kernel runs, and the results are the reference interpreter's."""
    shape = (2, 4, 3) if case == "interleaved" else (1, 3, 5) if case == "unaligned" else (1, 4, 16)
    x = relay.var("x", shape=shape)
    a, b, c = relay.exp(x), relay.nn.relu(x), relay.sigmoid(x)  # each also an output: none fuses into a concat
    inputs = {"graph input": [x, a], "repeated input": [a, a]}.get(case, [a, b])
    concats = [relay.concatenate(inputs, axis=1)]
    if case == "shared slice":  # ``a`` is a slice of the first one: the second copies it
        concats.append(relay.concatenate([a, c], axis=1))
    func = relay.Function([x], relay.Tuple([*concats, a, b, c]))
    data = {"x": np.random.default_rng(2).uniform(-1, 1, shape).astype("float32")}
    got, graph = _run_graph(func, data)
    for g, w in zip(got, _reference(func, data), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    kernels = [n["attrs"]["func_name"] for n in graph["nodes"] if n["op"] == "tvm_op"
               and n["attrs"].get("relay_ops") == "concatenate"]
    assert len(kernels) == len(concats) and kernels.count("__nop") == (1 if case == "shared slice" else 0)


def test_a_graph_with_bad_storage_offsets_is_refused():
    x = relay.var("x", shape=(1, 16))
    a, b = relay.exp(x), relay.nn.relu(x)
    func = relay.Function([x], relay.Tuple([relay.concatenate([a, b], axis=1), a, b]))
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(kiln.IRModule.from_expr(func), target="llvm")
    graph = json.loads(lib.get_graph_json())
    concat = next(n for n in graph["nodes"] if n["op"] == "tvm_op" and n["attrs"]["func_name"] == "__nop")
    slices = [graph["node_row_ptr"][src] + k for src, k, _ in concat["inputs"]]
    assert [graph["attrs"]["storage_offset"][1][e] for e in slices] == [0, 64]
    for bad, message in (([0, 0], "must be 4 non-negative ints"), ([0, -64, 0, 0], "must be 4 non-negative ints")):
        graph["attrs"]["storage_offset"][1] = bad
        with pytest.raises(kiln.error.KilnError, match=message):
            kiln.contrib.graph_executor.create(json.dumps(graph), lib.get_lib(), kiln.cpu(0))
    offsets = list(json.loads(lib.get_graph_json())["attrs"]["storage_offset"][1])
    offsets[slices[1]] = 4  # a slice not aligned as the kernels require
    graph["attrs"]["storage_offset"][1] = offsets
    m = kiln.contrib.graph_executor.create(json.dumps(graph), lib.get_lib(), kiln.cpu(0))
    m.set_input("x", np.zeros((1, 16), "float32"))
    with pytest.raises(kiln.error.KilnError, match="aligned"):
        m.run()
