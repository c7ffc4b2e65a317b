"""The x86 FTVMAlterOpLayout of nn.conv2d (kiln/relay/op/strategy/x86.py): which calls it blocks, the structure
AlterOpLayout + FoldConstant leave (blocked convs, layout transforms only at the boundaries, weights packed at
compile time) and relay.build results against the reference interpreter."""

import json
import re

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.relay.op.strategy import alter_conv2d_layout
from kiln.relay.optimize import standard_pipeline
from kiln.relay.testing import resnet
from kiln.runtime.host import host_cpu_features
from kiln.target import Target

RNG = np.random.default_rng(3)
# code that runs is built for the host and, where the host has AVX-512, also for an AVX2 CPU
HOST_TARGETS = ["llvm"] + (["llvm -mcpu=haswell"] if "avx512f" in host_cpu_features() else [])


CONVS = ("nn.conv2d", "nn.contrib_conv2d_NCHWc", "nn.contrib_depthwise_conv2d_NCHWc")
"""conv2d and the blocked forms the x86 hook turns it into (as TVM's)."""


def calls(func, name):
    names = CONVS if name == "nn.conv2d" else (name,)
    found = []
    relay.post_order_visit(func, lambda e: found.append(e) if isinstance(e, relay.Call)
                           and getattr(e.op, "name", None) in names else None)
    return found


def const(*shape):
    return relay.const(RNG.uniform(-0.5, 0.5, shape).astype("float32"))


def optimized(func, target="llvm", opt_level=3, params=None):
    """``@main`` after relay.build's pipeline (without FuseOps) for ``target``."""
    mod = kiln.IRModule.from_expr(func)
    if params:
        mod["main"] = relay.bind_params_by_name(mod["main"], params)
    with kiln.transform.PassContext(opt_level=opt_level), Target(target):
        mod = standard_pipeline(fuse=False)(mod)
    return mod["main"]


def small_resnet():
    """A stem conv + bn + relu + max pool, one bottleneck block with a projection shortcut, one identity block, a
    two-branch concatenation, global average pool and a dense layer (every weight a constant)."""

    def conv_bn(y, cin, cout, k, stride=1, relu=True):
        y = relay.nn.conv2d(y, const(cout, cin, k, k), strides=(stride, stride), padding=(k // 2, k // 2),
                            channels=cout, kernel_size=(k, k))
        gamma, beta = relay.const(RNG.uniform(0.5, 1.5, cout).astype("float32")), const(cout)
        mean, var = const(cout), relay.const(RNG.uniform(0.5, 1.5, cout).astype("float32"))
        y = relay.nn.batch_norm(y, gamma, beta, mean, var)[0]
        return relay.nn.relu(y) if relu else y

    x = relay.var("data", shape=(1, 3, 32, 32))
    y = conv_bn(x, 3, 16, 7, stride=2)
    y = relay.nn.max_pool2d(y, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    for cin, stride in ((16, 2), (32, 1)):
        z = conv_bn(y, cin, 8, 1)
        z = conv_bn(z, 8, 8, 3, stride=stride)
        z = conv_bn(z, 8, 32, 1, relu=False)
        shortcut = conv_bn(y, cin, 32, 1, stride=stride, relu=False) if cin != 32 else y
        y = relay.nn.relu(relay.add(z, shortcut))
    y = relay.concatenate([conv_bn(y, 32, 16, 1), conv_bn(y, 32, 16, 3)], axis=1)
    y = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(y))
    y = relay.nn.bias_add(relay.nn.dense(y, const(10, 32)), const(10))
    return relay.Function([x], relay.nn.softmax(y))


def check_build(func, target, opt_level=3, params=None, rtol=1e-4, atol=1e-5):
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(func))
    data = RNG.uniform(-1, 1, mod["main"].params[0].checked_type.shape).astype("float32")
    with kiln.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, target=target, params=params)
    m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    m.set_input("data", data)
    m.run()
    want = relay.create_executor("debug", mod=mod, params=params).evaluate()(data).numpy()
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=rtol, atol=atol)
    return lib


def test_hook_blocks_nchw_conv_for_cpu_targets():
    x, w = relay.var("x", shape=(1, 32, 8, 8)), relay.var("w", shape=(64, 32, 3, 3))
    call = relay.transform.InferType()(kiln.IRModule.from_expr(relay.nn.conv2d(x, w, padding=(1, 1))))["main"].body
    tinfos = [a.checked_type for a in call.args]
    assert alter_conv2d_layout(call.attrs, [x, w], tinfos, call.checked_type) is None  # no current target
    for target, lanes in (("llvm -vector-width=512", 16), ("llvm -vector-width=256", 8), ("c -vector-width=256", 8)):
        with Target(target):
            new = alter_conv2d_layout(call.attrs, [x, w], tinfos, call.checked_type)
        assert new.op.name == "nn.contrib_conv2d_NCHWc" and new.args[0] is x and new.args[1] is w
        assert (new.attrs.data_layout, new.attrs.kernel_layout, new.attrs.out_layout) == (
            f"NCHW{lanes}c", f"OIHW{lanes}i{lanes}o", f"NCHW{lanes}c")
        assert new.attrs.padding == call.attrs.padding and new.attrs.strides == call.attrs.strides


@pytest.mark.parametrize("case", ["groups", "nhwc", "float16", "out_dtype"])
def test_hook_declines(case):
    shape, wshape, kwargs, dtype = (1, 16, 8, 8), (16, 16, 3, 3), {}, "float32"
    if case == "groups":  # groups of a few channels, not depthwise (test_grouped_conv_*, test_mobile_block_*)
        wshape, kwargs = (16, 4, 3, 3), {"groups": 4}
    elif case == "nhwc":
        shape, wshape, kwargs = (1, 8, 8, 16), (3, 3, 16, 16), {"data_layout": "NHWC", "kernel_layout": "HWIO"}
    elif case == "float16":
        dtype = "float16"
    else:
        kwargs = {"out_dtype": "float64"}
    x, w = relay.var("x", shape=shape, dtype=dtype), relay.var("w", shape=wshape, dtype=dtype)
    func = relay.Function([x, w], relay.nn.conv2d(x, w, **kwargs))
    after = optimized(func)
    assert all(not c.attrs.data_layout.endswith("c") for c in calls(after, "nn.conv2d"))
    assert not calls(after, "layout_transform")


@pytest.mark.parametrize("target", ["llvm -mcpu=skylake-avx512", "llvm -mcpu=haswell", "c -mcpu=znver2"])
def test_small_resnet_structure(target):
    """The structure names its CPU (it depends on the vector width, not on the host): the last block's 32 channels
    travel in blocks of one vector, 16 floats with AVX-512 and 8 with AVX2."""
    after = optimized(small_resnet(), target)
    block = Target(target).vector_lanes("float32")
    convs = calls(after, "nn.conv2d")
    assert len(convs) == 10
    for conv in convs:  # every conv blocked, its weight a constant already packed (6-D)
        assert conv.attrs.data_layout.startswith("NCHW") and conv.attrs.data_layout.endswith("c")
        assert conv.attrs.out_layout.startswith("NCHW") and conv.attrs.out_layout.endswith("c")
        assert isinstance(conv.args[1], relay.Constant) and len(conv.args[1].data.shape) == 6
    # the image goes in once, the pooled features come out once: nothing else changes layout
    transforms = calls(after, "layout_transform")
    assert sorted((t.attrs.src_layout, t.attrs.dst_layout) for t in transforms) == [("NCHW", "NCHW3c"),
                                                                                     (f"NCHW{block}c", "NCHW")]
    assert all(not isinstance(t.args[0], relay.Constant) for t in transforms)
    assert calls(after, "nn.max_pool2d")[0].attrs.layout.endswith("c")
    assert calls(after, "nn.global_avg_pool2d")[0].attrs.layout == f"NCHW{block}c"


def test_below_opt_level_3_nothing_is_blocked():
    after = optimized(small_resnet(), opt_level=2)
    assert all(c.attrs.data_layout == "NCHW" for c in calls(after, "nn.conv2d"))
    assert not calls(after, "layout_transform")


@pytest.mark.parametrize("target", HOST_TARGETS + ["c"])
def test_small_resnet_builds_exactly(target):
    check_build(small_resnet(), target)


def kernel_names(lib):
    return [n["attrs"]["func_name"] for n in json.loads(lib.get_graph_json())["nodes"] if n["op"] == "tvm_op"]


def test_opt_level_2_build_keeps_nchw_kernels():
    lib = check_build(small_resnet(), "llvm", opt_level=2)
    assert not [n for n in kernel_names(lib) if "layout_transform" in n]
    lib3 = check_build(small_resnet(), "llvm", opt_level=3)
    assert len([n for n in kernel_names(lib3) if "layout_transform" in n]) == 2


def test_resnet18_structure_and_results():
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    after = optimized(mod["main"], params=params)
    convs = calls(after, "nn.conv2d")
    assert convs and all(c.attrs.data_layout.endswith("c") and isinstance(c.args[1], relay.Constant)
                         for c in convs)
    # in at the first conv, out after the global pool; the convolutions exchange blocked tensors
    assert len(calls(after, "layout_transform")) == 2
    check_build(mod["main"], "llvm", params=params)


def mobile_block():
    """A MobileNet-style block: pointwise expansion, depthwise 3x3 with clip (ReLU6), pointwise projection."""
    x = relay.var("data", shape=(1, 16, 14, 14))
    y = relay.clip(relay.nn.conv2d(x, const(32, 16, 1, 1)), 0.0, 6.0)
    y = relay.clip(relay.nn.bias_add(relay.nn.conv2d(y, const(32, 1, 3, 3), padding=(1, 1), groups=32), const(32)),
                   0.0, 6.0)
    y = relay.nn.conv2d(y, const(16, 32, 1, 1))
    return relay.Function([x], relay.add(y, x))


@pytest.mark.parametrize("target", ["llvm -mcpu=skylake-avx512", "llvm -mcpu=haswell"])
def test_mobile_block_stays_blocked(target):
    """The depthwise convolution is blocked like its neighbours: the layout changes only at the block's edges."""
    after = optimized(mobile_block(), target)
    block = Target(target).vector_lanes("float32")
    convs = calls(after, "nn.conv2d")
    assert [c.attrs.data_layout for c in convs] == [f"NCHW{block}c"] * 3
    assert convs[1].attrs.groups == 32 and convs[1].attrs.kernel_layout == f"OIHW1i{block}o"
    assert len(calls(after, "layout_transform")) == 2


@pytest.mark.parametrize("target", HOST_TARGETS + ["c"])
def test_mobile_block_builds_exactly(target):
    check_build(mobile_block(), target)


@pytest.mark.parametrize("target,block", [("llvm -mcpu=skylake-avx512", 32), ("llvm -mcpu=haswell", 16)])
@pytest.mark.parametrize("units", [96, 100])
def test_dense_weight_packed_at_compile_time(target, block, units):
    x = relay.var("data", shape=(40, 64))
    func = relay.Function([x], relay.nn.relu(relay.nn.dense(x, const(units, 64))))
    after = optimized(func, target)
    (call,) = calls(after, "nn.contrib_dense_pack")
    assert call.attrs.weight_layout == f"NC{block}n" and not calls(after, "nn.dense")
    assert isinstance(call.args[1], relay.Constant)  # the weight's pad and layout_transform folded
    assert call.args[1].checked_type.shape == (-(-units // block), 64, block)
    assert call.attrs.units == (None if units % block == 0 else units)  # as TVM's unless the weight is padded
    assert after.ret_type.shape == (40, units)


@pytest.mark.parametrize("shape", [(8, 64), (40, 6)], ids=["few_rows", "units_without_block"])
def test_dense_hook_keeps_products_computed_unpacked(shape):
    x = relay.var("data", shape=shape)
    func = relay.Function([x], relay.nn.dense(x, const(6 if shape[1] == 6 else 96, shape[1])))
    after = optimized(func, "llvm -mcpu=skylake-avx512")
    assert calls(after, "nn.dense") and not calls(after, "nn.contrib_dense_pack")


@pytest.mark.parametrize("target", HOST_TARGETS + ["c"])
def test_dense_with_packed_weight_builds_exactly(target):
    x = relay.var("data", shape=(37, 80))  # 37 rows and 100 columns: guarded last row and column tiles
    y = relay.nn.dense(x, const(100, 80))
    y = relay.tanh(relay.add(relay.multiply(y, relay.const(0.5)), const(100)))
    lib = check_build(relay.Function([x], y), target)
    kernels = [n["attrs"]["func_name"] for n in json.loads(lib.get_graph_json())["nodes"] if n["op"] == "tvm_op"]
    assert kernels == ["tvmgen_default_fused_nn_contrib_dense_pack_add_tanh"]  # the scale folded into the weight


def ffn_with_fake_quant(rows, width, units):
    """A dense layer and the ten element-wise operators an exported transformer puts after it (bias, exact GELU,
    quantize-dequantize)."""
    x = relay.var("data", shape=(rows, width))
    y = relay.add(relay.nn.dense(x, const(units, width)), const(units))
    y = relay.multiply(relay.multiply(y, relay.const(0.5)),
                       relay.add(relay.erf(relay.divide(y, relay.const(2.0 ** 0.5))), relay.const(1.0)))
    scale = relay.const(0.05)
    y = relay.multiply(relay.clip(relay.round(relay.divide(y, scale)), -128.0, 127.0), scale)
    return relay.Function([x], y)


@pytest.mark.parametrize("target,register", [("llvm -mcpu=skylake-avx512", "zmm"), ("llvm -mcpu=haswell", "ymm")])
def test_long_tail_runs_as_the_gemm_epilogue(target, register):
    """Fusion never demotes an anchor: the dense and its ten-operator tail are one kernel whose inner loop is the
    register-tiled FMA loop of the packed GEMM."""
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(kiln.IRModule.from_expr(ffn_with_fake_quant(64, 128, 96)), target=target)
    kernels = [n["attrs"]["func_name"] for n in json.loads(lib.get_graph_json())["nodes"] if n["op"] == "tvm_op"]
    # (SimplifyExpr turns the bias-then-scale into scale-then-bias, as TVM's SwitchAddMultiply: the name follows)
    assert len(kernels) == 1 and kernels[0].startswith("tvmgen_default_fused_nn_contrib_dense_pack_")
    asm = lib.get_lib().get_source("asm")
    fmas = re.findall(rf"vfmadd231ps\s+[^\n]*%{register}\d+\s*$", asm, re.M)
    assert len(fmas) >= 4  # a tile of several accumulator registers


@pytest.mark.parametrize("target,register", [("llvm -mcpu=skylake-avx512", "zmm"), ("llvm -mcpu=haswell", "ymm")])
@pytest.mark.parametrize("units", [1000, 257])
def test_batch_one_dense_is_a_vector_fma_gemv(target, register, units):
    """A dense layer at batch 1 (a classifier head, an LSTM's recurrent step) streams its weights through vector
    FMAs with several accumulators, a prime unit count too; numerics on the host below."""
    x = relay.var("data", shape=(1, 256))
    func = relay.Function([x], relay.add(relay.nn.dense(x, const(units, 256)), const(units)))
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(kiln.IRModule.from_expr(func), target=target)
    accumulators = set(re.findall(rf"vfmadd\w+ps\s+[^\n]*(%{register}\d+)\s*$", lib.get_lib().get_source("asm"), re.M))
    assert len(accumulators) >= 2
    for host in HOST_TARGETS:
        check_build(func, host)


@pytest.mark.parametrize("target", HOST_TARGETS + ["c"])
def test_long_tail_epilogue_builds_exactly(target):
    check_build(ffn_with_fake_quant(37, 80, 100), target, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target,block", [("llvm -mcpu=skylake-avx512", 16), ("llvm -mcpu=haswell", 8)])
def test_grouped_conv_with_whole_block_groups_is_blocked(target, block):
    """AlexNet's two-group convolutions: each group's 48 input and 128 output channels are whole blocks."""
    x = relay.var("data", shape=(1, 96, 13, 13))
    func = relay.Function([x], relay.nn.conv2d(x, const(256, 48, 5, 5), groups=2, padding=(2, 2), channels=256,
                                               kernel_size=(5, 5)))
    (conv,) = calls(optimized(func, target), "nn.conv2d")
    assert (conv.attrs.data_layout, conv.attrs.out_layout, conv.attrs.groups) == (f"NCHW{block}c", f"NCHW{block}c", 2)
    assert conv.args[1].data.shape == (256 // block, 48 // block, 5, 5, block, block)


@pytest.mark.parametrize("target", HOST_TARGETS + ["c"])
def test_grouped_conv_blocked_builds_exactly(target):
    x = relay.var("data", shape=(1, 32, 9, 9))
    y = relay.nn.conv2d(x, const(64, 16, 3, 3), groups=2, padding=(1, 1), channels=64, kernel_size=(3, 3))
    y = relay.nn.relu(relay.nn.bias_add(y, const(64)))
    y = relay.nn.conv2d(y, const(32, 16, 1, 1), groups=4, channels=32, kernel_size=(1, 1))
    check_build(relay.Function([x], y), target)


@pytest.mark.parametrize("target", ["llvm -mcpu=skylake-avx512", "llvm -mcpu=haswell"])
def test_pointwise_conv_to_odd_channels_runs_over_the_flat_map(target):
    """YOLO's heads: a 1x1 convolution to 255 channels would block in 15s (every vector partial); it stays NCHW and
    runs over the flattened map, whole vectors of pixels. 256 channels block as usual."""
    x = relay.var("data", shape=(1, 32, 20, 20))
    odd = optimized(relay.Function([x], relay.nn.conv2d(x, const(255, 32, 1, 1), channels=255, kernel_size=(1, 1))),
                    target)
    (conv,) = calls(odd, "nn.conv2d")
    assert conv.attrs.data_layout == "NCHW" and not calls(odd, "layout_transform")
    even = optimized(relay.Function([x], relay.nn.conv2d(x, const(256, 32, 1, 1), channels=256, kernel_size=(1, 1))),
                     target)
    assert calls(even, "nn.conv2d")[0].attrs.data_layout.endswith("c")


@pytest.mark.parametrize("target", HOST_TARGETS + ["c"])
def test_pointwise_conv_to_odd_channels_builds_exactly(target):
    x = relay.var("data", shape=(1, 16, 9, 7))
    y = relay.nn.conv2d(relay.nn.relu(relay.nn.conv2d(x, const(32, 16, 3, 3), padding=(1, 1))), const(51, 32, 1, 1))
    lib = check_build(relay.Function([x], relay.sigmoid(relay.nn.bias_add(y, const(51)))), target)
    kernels = [n["attrs"]["func_name"] for n in json.loads(lib.get_graph_json())["nodes"] if n["op"] == "tvm_op"]
    assert any("conv2d_add_sigmoid" in k for k in kernels)
