"""topi.x86.conv2d_NCHWc, TVM's entry point: padding forms resolved against the dilated window, groups read from
the blocked shapes; checked against the NCHW numpy reference. And the knobs of the blocked convolution template
(``conv2d_NCHWc.x86``): every register tile shape (columns x channel blocks x rows), reduction order and unrolling
computes the convolution numpy does, alone and with a fused consumer, in the blocked layout and unpacked to NCHW."""

import numpy as np
import pytest

import kiln
from kiln import te, topi
from kiln.autotvm.task import ConfigSpace
from kiln.target import Target
from kiln.topi import testing, x86
from kiln.topi.testing.conv import conv_ncx_python


def _block(x, bn):  # NCHW -> NCHW[bn]c
    n, c, h, w = x.shape
    return x.reshape(n, c // bn, bn, h, w).transpose(0, 1, 3, 4, 2)


@pytest.mark.parametrize("padding,dilation,groups", [("SAME", 1, 1), ("VALID", 2, 1), (1, 1, 2)])
def test_conv2d_nchwc(padding, dilation, groups):
    n, c, o, size, k, bn = 1, 8, 8, 9, 3, 4
    x = np.random.uniform(size=(n, c, size, size)).astype("float32")
    w = np.random.uniform(size=(o, c // groups, k, k)).astype("float32")
    wb = w.reshape(o // bn, bn, c // groups // bn, bn, k, k).transpose(0, 2, 4, 5, 3, 1)
    A = te.placeholder((n, c // bn, size, size, bn), name="A")
    W = te.placeholder(wb.shape, name="W")
    with kiln.target.Target("llvm"):
        C = topi.x86.conv2d_NCHWc(A, W, (1, 1), padding, (dilation, dilation), f"NCHW{bn}c", f"NCHW{bn}c",
                                  "float32")
        s = topi.x86.schedule_conv2d_NCHWc([C])
    f = kiln.build(s, [A, W, C], "llvm")
    out = kiln.nd.empty([int(d) for d in C.shape], "float32")
    f(kiln.nd.array(_block(x, bn)), kiln.nd.array(wb), out)
    pad = testing.get_pad_tuple(padding, ((k - 1) * dilation + 1,) * 2)
    dw = testing.dilate_python(w, (1, 1, dilation, dilation))
    want = testing.conv2d_nchw_python(x, dw, 1, pad, groups)
    np.testing.assert_allclose(out.numpy(), _block(want, bn), rtol=1e-4)


TARGET = "llvm"


def _sample(space, want):
    """Few configs of ``space`` between them showing every value of each feature ``want(config)`` gives (the
    largest tile first, so tiles of several channel blocks and rows together are among them)."""
    picked, seen = [], set()
    for config in sorted(space, key=lambda c: -np.prod(want(c)[:3])):
        new = {(i, v) for i, v in enumerate(want(config))} - seen
        if new:
            picked.append(config)
            seen |= new
    return picked


def _tile(config):
    return (config["tile_ow"].size[-1], config["tile_oc"].size[-1], config["tile_oh"].size[-1],
            config["reduce_inner"].val, config["unroll_outer"].val, config["tile_ic_block"].size[-1],
            config["kh_outside"].val)


def _run(s, tensors, arrays):
    lib = kiln.build(s, tensors, target=TARGET, name="f")
    out = tensors[-1]
    result = kiln.nd.array(np.zeros([int(d) for d in out.shape], out.dtype))
    lib["f"](*[kiln.nd.array(a) for a in arrays], result)
    return result.numpy()


@pytest.mark.parametrize("consumer", ["none", "relu"])
def test_every_tile_shape_of_the_blocked_convolution_matches_numpy(consumer):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((1, 16, 6, 8)).astype("float32")
    w_np = rng.standard_normal((32, 16, 3, 3)).astype("float32")
    ref = conv_ncx_python(x_np, w_np, 1, 1)
    ref = np.maximum(ref, 0) if consumer == "relu" else ref
    x, w = te.placeholder(x_np.shape, name="x"), te.placeholder(w_np.shape, name="w")

    def build(cfg):
        with Target(TARGET):
            out = x86.conv2d_nchw(x, w, (1, 1), (1, 1), (1, 1), "float32", TARGET)
            out = topi.nn.relu(out) if consumer == "relu" else out
            return x86.schedule_conv2d_NCHWc([out], TARGET, cfg), [x, w, out]

    space = ConfigSpace()
    build(space)
    assert space["tile_oc"] is not None and len(space) > 8
    configs = _sample(space, _tile)
    assert {c["tile_oc"].size[-1] for c in configs} >= {1, 2} and {c["tile_oh"].size[-1] for c in configs} >= {1, 2}
    assert {c["tile_ic_block"].size[-1] for c in configs} >= {1, 2} and {c["kh_outside"].val for c in configs} == {
        False, True}
    for config in configs:
        s, tensors = build(config)
        np.testing.assert_allclose(_run(s, tensors, [x_np, w_np]), ref, rtol=1e-4, atol=1e-4, err_msg=str(config))


def test_tiles_of_the_template_in_the_blocked_layout_match_numpy():
    from kiln import autotvm  # the task's own compute: blocked in, blocked out

    block = 8
    args = (("TENSOR", (1, 2, 5, 7, block), "float32"), ("TENSOR", (4, 2, 3, 3, block, block), "float32"), (1, 1),
            (1, 1, 1, 1), (1, 1), f"NCHW{block}c", f"OIHW{block}i{block}o", "float32", f"NCHW{block}c")
    task = autotvm.task.create("conv2d_NCHWc.x86", args, TARGET)
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal((1, 16, 5, 7)).astype("float32")
    w_np = rng.standard_normal((32, 16, 3, 3)).astype("float32")
    x_b = x_np.reshape(1, 2, block, 5, 7).transpose(0, 1, 3, 4, 2)
    w_b = w_np.reshape(4, block, 2, block, 3, 3).transpose(0, 2, 4, 5, 3, 1)
    ref = conv_ncx_python(x_np, w_np, 1, 1).reshape(1, 4, block, 5, 7).transpose(0, 1, 3, 4, 2)
    for config in _sample(task.config_space, _tile):
        s, tensors = task.instantiate(config)
        np.testing.assert_allclose(_run(s, tensors, [x_b, w_b]), ref, rtol=1e-4, atol=1e-4, err_msg=str(config))


@pytest.mark.parametrize("target, out_width, oc_bn, columns", [
    ("llvm -mcpu=znver4", 56, 16, 8),  # one 512-bit FMA pipe: 4 would hide the latency, 8 amortize the weights
    ("llvm -mcpu=znver4", 224, 16, 8),
    ("llvm -mcpu=skylake-avx512", 56, 16, 8),
    ("llvm -mcpu=skylake-avx512", 14, 16, 14),  # 7 falls short: the register budget takes the whole row
    ("llvm -mcpu=haswell", 56, 8, 8),
    ("llvm -mcpu=haswell", 14, 8, 7),  # AVX2's 16 registers hold 7 columns, not 14
    ("llvm -mcpu=haswell", 56, 16, 4),  # two registers per column
])
def test_register_tile_columns(target, out_width, oc_bn, columns):
    assert x86.register_tile(out_width, oc_bn, target) == columns


@pytest.mark.parametrize("target, out_width, columns", [
    ("llvm -mcpu=haswell", 56, 7),  # a broadcast per column beside each accumulator: 7 + 7 + weights in 16
    ("llvm -mcpu=haswell", 224, 7),
    ("llvm -mcpu=haswell", 55, 11),  # no divisor up to 7 but 5: the budget's divisor, as for a 1x1 kernel
    ("llvm -mcpu=skylake-avx512", 56, 8),  # 32 registers: as for a 1x1 kernel
    ("llvm -mcpu=skylake-avx512", 14, 14),
])
def test_register_tile_of_a_wide_kernel_leaves_registers_for_its_broadcasts(target, out_width, columns):
    oc_bn = 8 if "haswell" in target else 16
    assert x86.register_tile(out_width, oc_bn, target, kernel_width=3) == columns


@pytest.mark.parametrize("target, blocks, expected", [
    ("llvm -mcpu=haswell", (24, 13, 13), (12, 1)),  # 1 column of 13: twelve channel blocks share each broadcast
    ("llvm -mcpu=haswell", (125, 13, 13), (5, 1)),  # 1000 channels: 5 blocks (13 rows are prime)
    ("llvm -mcpu=haswell", (8, 111, 111), (4, 1)),  # 3 columns (111 = 3 x 37): 4 blocks of 3
    ("llvm -mcpu=haswell", (16, 14, 14), (1, 1)),  # 7 columns hold enough
    ("llvm -mcpu=skylake-avx512", (24, 13, 13), (1, 1)),  # AVX-512's budget takes all 13 columns
])
def test_a_narrow_default_tile_deepens_over_channel_blocks(target, blocks, expected):
    reg_n = x86.register_tile(blocks[2], 8 if "haswell" in target else 16, target)
    assert x86.conv2d.deeper_tile(blocks, reg_n, 1, target) == expected


def test_a_prime_width_convolution_runs_its_deeper_default_tile():
    """13 columns on AVX2 (runs on any x86-64 host with AVX2): the default tile of 1 column x 4 channel blocks
    computes the convolution."""
    target, block = "llvm -mcpu=haswell", 8
    rng = np.random.default_rng(3)
    x_np = rng.uniform(-1, 1, (1, 16, 13, 13)).astype("float32")
    w_np = rng.uniform(-1, 1, (32, 16, 3, 3)).astype("float32")
    A = te.placeholder((1, 2, 13, 13, block), name="A")
    W = te.placeholder((4, 2, 3, 3, block, block), name="W")
    with kiln.target.Target(target):
        C = topi.x86.conv2d_NCHWc(A, W, (1, 1), (1, 1), (1, 1), f"NCHW{block}c", f"NCHW{block}c", "float32")
        s = topi.x86.schedule_conv2d_NCHWc([C])
    f = kiln.build(s, [A, W, C], target)
    out = kiln.nd.empty([int(d) for d in C.shape], "float32")
    w_b = w_np.reshape(4, block, 2, block, 3, 3).transpose(0, 2, 4, 5, 3, 1)
    f(kiln.nd.array(_block(x_np, block)), kiln.nd.array(w_b), out)
    want = testing.conv2d_nchw_python(x_np, w_np, 1, (1, 1, 1, 1))
    np.testing.assert_allclose(out.numpy(), _block(want, block), rtol=1e-4, atol=1e-4)
