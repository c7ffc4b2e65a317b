"""Helpers shared by the benchmark scripts: timing a call, comparing outputs, sizing an ONNX model (flops and
parameters) and timing each kernel of a built graph alone."""

import json
import math
import time

import numpy as np
import onnx

import kiln


def best_ms(fn, number, settle=0.0):
    """Milliseconds per call of ``number`` consecutive calls of ``fn``.

    ``settle`` idle seconds and one untimed call come first, so the other runtime's worker threads have stopped
    spinning and yielded the cores.
    """
    time.sleep(settle)
    fn()
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number * 1e3


def relative_error(got, want):
    """The largest absolute difference over pairs of output arrays, relative to the largest magnitude of the
    reference's output it occurs in (so a model with a large and a small output is judged per output)."""
    return max(float(np.abs(g - w).max()) / max(float(np.abs(w).max()), 1e-30) for g, w in zip(got, want, strict=True))


_RECURRENT_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE, onnx.TensorProto.BFLOAT16}


def onnx_size(model):
    """The work and the weights of an ONNX model: floating-point operations (two per multiply-add) of its
    convolutions and matrix products, and its parameter count.

    ``Conv``, ``MatMul``, ``Gemm`` and the recurrent layers (``LSTM``, ``GRU``, ``RNN``: input and recurrent projections
    of every step and direction) are counted, with shapes from ONNX shape inference; element-wise work, pooling and
    normalization are not. This is the work both runtimes do, whatever either converts it to. Parameters are the
    elements of the floating-point initializers and of the float tensors made by ``Constant`` and ``ConstantOfShape``
    nodes (the onnx wheel's light models generate their weights so).

    Parameters
    ----------
    model : onnx.ModelProto
        A model whose shapes ONNX shape inference resolves.

    Returns
    -------
    flops : float
    parameters : int
    """
    graph = onnx.shape_inference.infer_shapes(model).graph
    shapes = {i.name: tuple(i.dims) for i in graph.initializer}
    parameters = sum(math.prod(i.dims) for i in graph.initializer if i.data_type in _FLOAT_TYPES)
    float_values = set()
    for value in (*graph.input, *graph.value_info, *graph.output):
        shapes.setdefault(value.name, tuple(d.dim_value for d in value.type.tensor_type.shape.dim))
        if value.type.tensor_type.elem_type in _FLOAT_TYPES:
            float_values.add(value.name)
    flops = 0.0
    for node in graph.node:
        out = shapes.get(node.output[0], ())
        if node.op_type in ("Constant", "ConstantOfShape") and node.output[0] in float_values:
            parameters += math.prod(out)
        elif node.op_type == "Conv":
            flops += 2.0 * math.prod(shapes[node.input[1]]) * math.prod(out[2:]) * out[0]
        elif node.op_type == "MatMul":
            flops += 2.0 * math.prod(out) * shapes[node.input[0]][-1]
        elif node.op_type == "Gemm":
            trans_a = next((a.i for a in node.attribute if a.name == "transA"), 0)
            flops += 2.0 * math.prod(out) * shapes[node.input[0]][0 if trans_a else 1]
        elif node.op_type in _RECURRENT_GATES:
            steps, batch, features = shapes[node.input[0]]
            directions, gate_rows, _ = shapes[node.input[1]]
            hidden = gate_rows // _RECURRENT_GATES[node.op_type]
            flops += 2.0 * steps * batch * directions * gate_rows * (features + hidden)
    return flops, parameters


def kernel_flops(name, shapes):
    """Floating-point operations of one kernel from its name and argument shapes (inputs, then the output), or None
    when it is neither a convolution nor a matrix product.

    A convolution does ``2 * weight elements * output pixels`` in NCHW/OIHW and the blocked NCHW[x]c/OIHW[y]i[x]o
    layouts alike; a dense, matmul or batch_matmul ``2 * output elements * K``, K being the data's last axis.
    """
    out = shapes[-1]
    if "conv2d" in name:
        return 2.0 * math.prod(shapes[1]) * out[2] * out[3] * out[0]
    if "dense" in name or "matmul" in name:
        return 2.0 * math.prod(out) * shapes[0][-1]
    return None


def per_kernel(lib, limit=None, rounds=20):
    """Time every kernel of a built graph alone and print the slowest.

    Each kernel runs on random arguments of the shapes the graph gives it (integer arguments are zeros, a valid
    index everywhere), best of ``rounds`` calls, times the number of graph nodes calling it. Lines are printed
    slowest first, with GFLOP/s for convolutions and matrix products.

    Parameters
    ----------
    lib : the factory module ``relay.build`` returns
        Provides the graph JSON and the compiled kernels.
    limit : int, optional
        Print only this many kernels (all by default); the total counts them all.
    rounds : int, optional
        Calls per kernel; the fastest is kept.

    Returns
    -------
    float
        The kernels' summed milliseconds.
    """
    graph = json.loads(lib.get_graph_json())
    attrs = graph["attrs"]
    shapes, dtypes, rows = attrs["shape"][1], attrs["dltype"][1], graph["node_row_ptr"]
    rng = np.random.default_rng(0)
    kernels: dict = {}
    for nid, node in enumerate(graph["nodes"]):
        if node["op"] != "tvm_op" or node["attrs"]["func_name"] == "__nop":
            continue
        entries = [rows[src] + k for src, k, *_ in node["inputs"]] + list(range(rows[nid], rows[nid + 1]))
        entry = kernels.setdefault(node["attrs"]["func_name"], {"count": 0, "entries": entries})
        entry["count"] += 1

    def argument(entry):
        dtype = np.dtype(dtypes[entry])
        if np.issubdtype(dtype, np.floating):
            return kiln.nd.array(rng.standard_normal(shapes[entry]).astype(dtype))
        return kiln.nd.array(np.zeros(shapes[entry], dtype))

    compiled = lib.get_lib()
    report = []
    for name, entry in kernels.items():
        arrays = [argument(e) for e in entry["entries"]]
        func = compiled[name]
        best = float("inf")
        for _ in range(rounds):
            start = time.perf_counter()
            func(*arrays)
            best = min(best, time.perf_counter() - start)
        ms = best * 1e3 * entry["count"]
        arg_shapes = [tuple(shapes[e]) for e in entry["entries"]]
        flops = kernel_flops(name, arg_shapes)
        rate = f"{flops * entry['count'] / (ms * 1e-3) / 1e9:7.1f} GFLOP/s" if flops else ""
        report.append((ms, f"{ms:8.3f} ms  x{entry['count']:<2d} {rate:15s} {name.removeprefix('tvmgen_default_')}  "
                           f"{arg_shapes[0]} -> {arg_shapes[-1]}"))
    report.sort(reverse=True)
    for _, line in report[:limit]:
        print(line)
    total = sum(ms for ms, _ in report)
    print(f"{total:8.3f} ms  all {len(report)} kernels in total (each timed alone)")
    return total
