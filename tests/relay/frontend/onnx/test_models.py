"""Whole models built with onnx.helper, converted and run end to end against onnxruntime: a small residual CNN and
a transformer encoder block (with the shape arithmetic exporters emit), then both through the standard pipeline."""

import numpy as np
from onnx import helper

from kiln import relay
from kiln.ir.transform import PassContext
from kiln.relay.optimize import standard_pipeline

RNG = np.random.default_rng(11)


def w(*shape, scale=0.3):
    return (RNG.standard_normal(shape) * scale).astype("float32")


def small_cnn(ox):
    """conv-bn-relu, maxpool, a residual block, global average pool, flatten, gemm, softmax."""
    n = helper.make_node
    inits = {
        "w1": w(8, 3, 3, 3), "b1": w(8), "gamma": RNG.uniform(0.5, 1.5, 8).astype("float32"), "beta": w(8),
        "mean": w(8), "var": RNG.uniform(0.5, 1.5, 8).astype("float32"),
        "w2": w(8, 8, 3, 3), "w3": w(8, 8, 1, 1), "fc_w": w(10, 8), "fc_b": w(10),
    }
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[1, 1]),
        n("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["bn1"], epsilon=1e-5),
        n("Relu", ["bn1"], ["r1"]),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        n("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        n("Relu", ["c2"], ["r2"]),
        n("Conv", ["r2", "w3"], ["c3"]),
        n("Add", ["c3", "p1"], ["res"]),
        n("Relu", ["res"], ["r3"]),
        n("GlobalAveragePool", ["r3"], ["gap"]),
        n("Flatten", ["gap"], ["flat"], axis=1),
        n("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1),
        n("Softmax", ["logits"], ["y"], axis=1),
    ]
    return ox.make_model(nodes, {"x": ((2, 3, 16, 16), "float32")}, ["y"], inits, opset=13)


def transformer_block(ox, batch=2, seq=5, dim=8, heads=2):
    """Pre-norm self-attention and an MLP with erf-GELU; head reshapes computed from Shape like exporters do."""
    n = helper.make_node
    hd = dim // heads
    i64 = lambda *v: np.array(v, "int64")  # noqa: E731
    inits = {
        "ln_g": RNG.uniform(0.5, 1.5, dim).astype("float32"), "ln_b": w(dim),
        "wq": w(dim, dim), "wk": w(dim, dim), "wv": w(dim, dim), "wo": w(dim, dim), "bq": w(dim),
        "w_up": w(dim, 4 * dim), "b_up": w(4 * dim), "w_down": w(4 * dim, dim), "b_down": w(dim),
        "scale": np.array(np.sqrt(hd), "float32"), "zero": np.array(0, "int64"), "one": np.array(1, "int64"),
        "axes0": i64(0), "heads_hd": i64(heads, hd), "minus_one": i64(-1),
        "sqrt2": np.array(np.sqrt(2), "float32"), "half": np.array(0.5, "float32"), "onef": np.array(1, "float32"),
    }
    nodes = [
        n("LayerNormalization", ["x", "ln_g", "ln_b"], ["h"], axis=-1, epsilon=1e-5),
        # batch and sequence sizes from the runtime shape, as PyTorch exports them
        n("Shape", ["h"], ["shape"]),
        n("Gather", ["shape", "zero"], ["b"], axis=0),
        n("Gather", ["shape", "one"], ["s"], axis=0),
        n("Unsqueeze", ["b", "axes0"], ["b1"]),
        n("Unsqueeze", ["s", "axes0"], ["s1"]),
        n("Concat", ["b1", "s1", "heads_hd"], ["split_shape"], axis=0),
        n("Concat", ["b1", "s1", "minus_one"], ["merge_shape"], axis=0),
    ]
    for name, weight in (("q", "wq"), ("k", "wk"), ("v", "wv")):
        proj = [n("MatMul", ["h", weight], [f"{name}0"])]
        if name == "q":
            proj.append(n("Add", ["q0", "bq"], ["q0b"]))
        src = "q0b" if name == "q" else f"{name}0"
        perm = [0, 2, 3, 1] if name == "k" else [0, 2, 1, 3]
        proj += [n("Reshape", [src, "split_shape"], [f"{name}1"]),
                 n("Transpose", [f"{name}1"], [f"{name}h"], perm=perm)]
        nodes += proj
    nodes += [
        n("MatMul", ["qh", "kh"], ["scores0"]),
        n("Div", ["scores0", "scale"], ["scores1"]),
        n("Add", ["scores1", "mask"], ["scores"]),
        n("Softmax", ["scores"], ["attn"], axis=-1),
        n("MatMul", ["attn", "vh"], ["ctx0"]),
        n("Transpose", ["ctx0"], ["ctx1"], perm=[0, 2, 1, 3]),
        n("Reshape", ["ctx1", "merge_shape"], ["ctx"]),
        n("MatMul", ["ctx", "wo"], ["o"]),
        n("Add", ["x", "o"], ["x1"]),
        n("MatMul", ["x1", "w_up"], ["u0"]),
        n("Add", ["u0", "b_up"], ["u"]),
        n("Div", ["u", "sqrt2"], ["u_s"]),
        n("Erf", ["u_s"], ["u_e"]),
        n("Add", ["u_e", "onef"], ["u_e1"]),
        n("Mul", ["u", "u_e1"], ["u_g0"]),
        n("Mul", ["u_g0", "half"], ["g"]),
        n("MatMul", ["g", "w_down"], ["d0"]),
        n("Add", ["d0", "b_down"], ["d"]),
        n("Add", ["x1", "d"], ["y"]),
    ]
    inputs = {"x": ((batch, seq, dim), "float32"), "mask": ((batch, 1, 1, seq), "float32")}
    return ox.make_model(nodes, inputs, ["y"], inits, opset=17)


def _optimized_outputs(model, feeds):
    mod, _ = relay.frontend.from_onnx(model)
    with PassContext(opt_level=3):
        mod = standard_pipeline()(mod)
    out = relay.create_executor(mod=mod).evaluate()(**feeds)
    return out.numpy()


def test_small_cnn(ox):
    model = small_cnn(ox)
    feeds = {"x": RNG.standard_normal((2, 3, 16, 16)).astype("float32")}
    got = ox.check(model, feeds, rtol=1e-4, atol=1e-5)[0]
    np.testing.assert_allclose(_optimized_outputs(model, feeds), got, rtol=1e-4, atol=1e-5)


def test_transformer_block(ox):
    model = transformer_block(ox)
    mask = np.zeros((2, 1, 1, 5), "float32")
    mask[1, ..., 3:] = -1e9  # padding of the second sequence
    feeds = {"x": RNG.standard_normal((2, 5, 8)).astype("float32"), "mask": mask}
    got = ox.check(model, feeds, rtol=1e-4, atol=1e-5)[0]
    np.testing.assert_allclose(_optimized_outputs(model, feeds), got, rtol=1e-4, atol=1e-5)
    mod, _ = relay.frontend.from_onnx(model)
    calls = []
    relay.analysis.post_order_visit(mod["main"], lambda e: calls.append(e.op.name) if isinstance(e, relay.Call) else 0)
    assert "shape_of" not in calls  # the head reshapes got static shapes while converting
    assert calls.count("nn.batch_matmul") == 2 and calls.count("nn.dense") == 6 and "nn.layer_norm" in calls
