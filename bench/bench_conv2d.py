"""ResNet-50 convolution layers compiled by kiln (the x86 strategy, lowered as LowerTE lowers a fused group) against
numpy (im2col + sgemm) and ONNX Runtime, printing GFLOP/s and ratios.

Each layer is ``nn.conv2d`` (NCHW/OIHW, float32, batch 1) followed by ``nn.bias_add`` and ``nn.relu`` fused into
it, built through ``ScheduleBuilder`` (kiln/relay/backend/schedule_builder.py): the x86 strategy packs data and
weights into channel blocks,
computes register tiles (vector accumulators over output channels, unrolled output columns) in parallel, and writes
bias + relu as part of each tile. The baselines compute the same function: numpy builds the im2col matrix from a
strided view of the padded input and multiplies it with the weights (BLAS), ONNX Runtime runs a one-node Conv model
(its bias fused) followed by Relu. Timings alternate between contenders round by round; each figure is the best
round. The default layer is ResNet-50's 3x3 convolution of stage 1 (1x64x56x56, 64 filters, padding 1).

The group is also timed in the blocked layouts ``topi.x86.conv2d_alter_layout`` proposes (data and result in
NCHW[x]c, weights packed beforehand): what ``relay.build`` makes of the network at ``opt_level=3``, where the x86
AlterOpLayout hook blocks every convolution and FoldConstant packs the weights (``--no-blocked`` skips it; the NCHW
form, packing at run time, is what lower opt levels give).

Run: ``python bench/bench_conv2d.py [--layers default|resnet50] [--targets llvm,c] [--no-blocked] [--rounds 7]``
"""

import argparse
import time

import numpy as np
from numpy.lib.stride_tricks import as_strided

import kiln
from kiln import te
from kiln.ir import TensorType
from kiln.relay.backend.schedule_builder import ScheduleBuilder
from kiln.relay.op.attrs import BiasAddAttrs, Conv2DAttrs

# (name, C, H, O, kernel, stride, pad): ResNet-50 layers at batch 1
RESNET50 = [
    ("stage1 3x3", 64, 56, 64, 3, 1, 1),
    ("stage1 1x1 expand", 64, 56, 256, 1, 1, 0),
    ("stage2 3x3 stride 2", 128, 56, 128, 3, 2, 1),
    ("stage3 3x3", 256, 14, 256, 3, 1, 1),
    ("stage4 1x1 reduce", 2048, 7, 512, 1, 1, 0),
    ("stage4 3x3", 512, 7, 512, 3, 1, 1),
]


def best_time(fn, number, settle):
    """Seconds per call over ``number`` consecutive calls, after ``settle`` idle seconds and one untimed call."""
    time.sleep(settle)
    fn()
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def build_kiln(c, h, o, k, stride, pad, target):
    """The fused conv2d + bias_add + relu group as LowerTE builds it; returns the compiled function."""
    out_size = (h + 2 * pad - k) // stride + 1
    out_type = TensorType((1, o, out_size, out_size), "float32")
    x = te.placeholder((1, c, h, h), name="data")
    w = te.placeholder((o, c, k, k), name="weight")
    b = te.placeholder((o,), name="bias")
    builder = ScheduleBuilder(target)
    attrs = Conv2DAttrs(strides=(stride, stride), padding=(pad, pad), kernel_size=(k, k), channels=o)
    (conv,) = builder.call("nn.conv2d", attrs, [x, w], out_type)
    (biased,) = builder.call("nn.bias_add", BiasAddAttrs(1), [conv, b], out_type)
    (out,) = builder.call("nn.relu", None, [biased], out_type)
    s = builder.schedule([out])
    module = kiln.build(s, [x, w, b, out], target=target, name="conv")
    return module["conv"]


def build_kiln_blocked(c, h, o, k, stride, pad, target):
    """The same group in the blocked layouts ``topi.x86.conv2d_alter_layout`` proposes (what AlterOpLayout plus
    FoldConstant would give: weights packed once, data and result in NCHW[x]c); returns (function, layouts)."""
    from kiln.relay.op.attrs import Conv2DAttrs as Attrs
    from kiln.tir.layout import layout as parse_layout
    from kiln.topi.x86 import conv2d_alter_layout

    attrs = Attrs(strides=(stride, stride), padding=(pad, pad), kernel_size=(k, k), channels=o)
    new = conv2d_alter_layout(attrs, (1, c, h, h), (o, c, k, k), target)
    blocked = Attrs(strides=(stride, stride), padding=(pad, pad), kernel_size=(k, k), channels=o, **new)
    out_size = (h + 2 * pad - k) // stride + 1
    oc_bn = parse_layout(new["out_layout"]).factor_of("C")
    out_type = TensorType((1, o // oc_bn, out_size, out_size, oc_bn), "float32")
    x = te.placeholder(parse_layout(new["data_layout"]).shape_from_primal({"N": 1, "C": c, "H": h, "W": h}), name="x")
    w = te.placeholder(parse_layout(new["kernel_layout"]).shape_from_primal({"O": o, "I": c, "H": k, "W": k}),
                       name="w")
    b = te.placeholder((o // oc_bn, 1, 1, oc_bn), name="b")
    builder = ScheduleBuilder(target)
    (conv,) = builder.call("nn.conv2d", blocked, [x, w], out_type)
    (biased,) = builder.call("add", None, [conv, b], out_type)
    (out,) = builder.call("nn.relu", None, [biased], out_type)
    module = kiln.build(builder.schedule([out]), [x, w, b, out], target=target, name="conv")
    return module["conv"], new


def numpy_conv(x, w, b, stride, pad):
    """im2col from a strided view of the padded input, then one sgemm (what a BLAS-backed framework does)."""
    _, c, h, _ = x.shape
    o, _, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))) if pad else x
    out = (h + 2 * pad - k) // stride + 1
    sn, sc, sh, sw = xp.strides
    cols = as_strided(xp, (c, k, k, out, out), (sc, sh, sw, sh * stride, sw * stride)).reshape(c * k * k, out * out)
    y = w.reshape(o, c * k * k) @ cols
    return np.maximum(y + b[:, None], 0).reshape(1, o, out, out)


def onnxruntime_conv(c, h, o, k, stride, pad, w, b):
    """A Conv + Relu ONNX model in an ONNX Runtime session, or None when onnx/onnxruntime are missing."""
    try:
        import onnx
        import onnxruntime
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    out = (h + 2 * pad - k) // stride + 1
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k, k], strides=[stride, stride],
                          pads=[pad] * 4),
         helper.make_node("Relu", ["y"], ["z"])],
        "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, o, out, out])],
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    del onnx
    return lambda x: session.run(None, {"x": x})[0]


def bench_layer(name, c, h, o, k, stride, pad, targets, args):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, c, h, h)).astype("float32")
    w = (rng.standard_normal((o, c, k, k)) / np.sqrt(c * k * k)).astype("float32")
    b = rng.standard_normal(o).astype("float32")
    reference = numpy_conv(x, w, b, stride, pad)
    flops = 2.0 * o * c * k * k * reference.shape[2] * reference.shape[3]
    contenders = {"numpy": lambda: numpy_conv(x, w, b, stride, pad)}
    ort = onnxruntime_conv(c, h, o, k, stride, pad, w, b)
    if ort is not None:
        np.testing.assert_allclose(ort(x), reference, rtol=1e-3, atol=1e-3)
        contenders["onnxruntime"] = lambda: ort(x)
    args_nd = [kiln.nd.array(a) for a in (x, w, b)]
    for target in targets:
        start = time.perf_counter()
        func = build_kiln(c, h, o, k, stride, pad, target)
        built = time.perf_counter() - start
        out = kiln.nd.empty(reference.shape, "float32")
        func(*args_nd, out)
        np.testing.assert_allclose(out.numpy(), reference, rtol=1e-3, atol=1e-3)
        print(f"  built kiln/{target} in {built:.2f} s (cached after the first run); result matches numpy")
        contenders[f"kiln/{target}"] = lambda func=func, out=out: func(*args_nd, out)
        if args.blocked:
            from kiln.relay.reference.transform import convert_layout

            func_b, new = build_kiln_blocked(c, h, o, k, stride, pad, target)
            oc_bn = int(new["out_layout"][4:-1])
            blocked_args = [kiln.nd.array(convert_layout(x, "NCHW", new["data_layout"])),
                            kiln.nd.array(convert_layout(w, "OIHW", new["kernel_layout"])),
                            kiln.nd.array(b.reshape(o // oc_bn, 1, 1, oc_bn))]
            out_b = kiln.nd.empty(convert_layout(reference, "NCHW", new["out_layout"]).shape, "float32")
            func_b(*blocked_args, out_b)
            np.testing.assert_allclose(convert_layout(out_b.numpy(), new["out_layout"], "NCHW"), reference,
                                       rtol=1e-3, atol=1e-3)
            contenders[f"kiln/{target}/{new['data_layout']}"] = (
                lambda func_b=func_b, out_b=out_b, blocked_args=blocked_args: func_b(*blocked_args, out_b))
    times = {key: [] for key in contenders}
    for _ in range(args.rounds):
        for key, fn in contenders.items():
            times[key].append(best_time(fn, args.number, args.settle))
    numpy_gflops = flops / min(times["numpy"]) / 1e9
    ort_gflops = flops / min(times["onnxruntime"]) / 1e9 if "onnxruntime" in times else None
    print(f"{name}: 1x{c}x{h}x{h}, {o} filters {k}x{k}, stride {stride}, pad {pad} ({flops / 1e9:.3f} GFLOP)")
    for key in contenders:
        gflops = flops / min(times[key]) / 1e9
        line = f"  {key:20s} {gflops:8.1f} GFLOP/s {min(times[key]) * 1e3:8.3f} ms"
        if key.startswith("kiln"):
            line += f"   x{gflops / numpy_gflops:.2f} numpy"
            if ort_gflops:
                line += f"   x{gflops / ort_gflops:.2f} onnxruntime"
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", choices=["default", "resnet50"], default="default")
    parser.add_argument("--targets", default="llvm")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=10, help="calls per timed block")
    parser.add_argument("--settle", type=float, default=0.2, help="idle seconds before each timed block")
    parser.add_argument("--blocked", action=argparse.BooleanOptionalAction, default=True,
                        help="also time the blocked-layout form (weights pre-packed, as relay.build at opt_level 3)")
    args = parser.parse_args()
    layers = RESNET50 if args.layers == "resnet50" else RESNET50[:1]
    for layer in layers:
        bench_layer(*layer, args.targets.split(","), args)


if __name__ == "__main__":
    main()
