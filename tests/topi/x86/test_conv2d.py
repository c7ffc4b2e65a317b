"""topi.x86.conv2d_NCHWc, TVM's entry point: padding forms resolved against the dilated window, groups read from
the blocked shapes; checked against the NCHW numpy reference. And the knobs of the blocked convolution template
(``conv2d_NCHWc.x86``): every register tile shape (columns x channel blocks x rows), reduction order and unrolling
computes the convolution numpy does, alone and with a fused consumer, in the blocked layout and unpacked to NCHW."""

import re

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


@pytest.mark.parametrize("target, out_width, kernel_width, columns", [
    ("llvm -mcpu=haswell", 13, 3, 7),  # two tiles of 7 cover 14 columns: the 14th reads zeros
    ("llvm -mcpu=haswell", 27, 3, 7),  # 3 or 9 columns (9 spill with the broadcasts)
    ("llvm -mcpu=haswell", 55, 3, 7),  # 5 or 11
    ("llvm -mcpu=haswell", 56, 3, 7),  # whole tiles fit: no partial one
    ("llvm -mcpu=haswell", 9, 3, 9),  # 14 columns for 9 would waste too much
    ("llvm -mcpu=haswell", 13, 1, 1),  # a 1x1 kernel keeps its divisor (no measured gain)
    ("llvm -mcpu=skylake-avx512", 13, 3, 13),  # 32 registers hold the whole row
])
def test_a_width_without_a_good_divisor_takes_partial_tiles(target, out_width, kernel_width, columns):
    oc_bn = 8 if "haswell" in target else 16
    assert x86.register_tile(out_width, oc_bn, target, kernel_width=kernel_width, partial=True) == columns
    whole = x86.register_tile(out_width, oc_bn, target, kernel_width=kernel_width)
    assert out_width % whole == 0 and (columns == whole or out_width % columns)


def _local_tile(s, tensors):
    """The size of the register tile (the ``local`` accumulator) of a scheduled blocked convolution (one per copy
    of the tile loop's body: LoopPartition peels the first and last tiles)."""
    text = str(kiln.lower(s, tensors, name="f"))
    sizes = set(re.findall(r'T.allocate\(\[(\d+)\], "float32", "local"\)', text))
    assert len(sizes) == 1, text
    return int(sizes.pop())


# (input size, channels, kernel, stride, padding, dilation): each has 13 output columns on AVX2
PRIME_WIDTH_CASES = [(13, 16, 3, 1, 1, 1), (25, 16, 3, 2, 1, 1), (13, 16, 3, 1, 2, 2), (15, 16, 3, 1, 0, 1),
                     (13, 3, 3, 1, 1, 1), (17, 8, 5, 1, 0, 1)]


@pytest.mark.parametrize("size, channels, k, stride, pad, dilation", PRIME_WIDTH_CASES)
@pytest.mark.parametrize("consumer", ["none", "relu"])
def test_a_prime_width_convolution_runs_partial_tiles(size, channels, k, stride, pad, dilation, consumer):
    """13 columns on AVX2 (runs on any x86-64 host with AVX2): the default tile of 7 columns runs a second tile
    whose last column, past the edge, is guarded (strided, dilated, unpadded, and the 3-channel stem whose padding
    is copied first); alone or with a fused consumer."""
    target, block = "llvm -mcpu=haswell", 8
    in_block = min(channels, block)
    rng = np.random.default_rng(3)
    x_np = rng.uniform(-1, 1, (1, channels, size, size)).astype("float32")
    w_np = rng.uniform(-1, 1, (32, channels, k, k)).astype("float32")
    A = te.placeholder((1, channels // in_block, size, size, in_block), name="A")
    W = te.placeholder((4, channels // in_block, k, k, in_block, block), name="W")
    with kiln.target.Target(target):
        C = topi.x86.conv2d_NCHWc(A, W, stride, pad, dilation, f"NCHW{in_block}c", f"NCHW{block}c", "float32")
        assert C.shape[3] == 13
        out = topi.nn.relu(C) if consumer == "relu" else C
        s = topi.x86.schedule_conv2d_NCHWc([out])
    assert _local_tile(s, [A, W, out]) == 7 * block
    f = kiln.build(s, [A, W, out], target)
    result = kiln.nd.empty([int(d) for d in out.shape], "float32")
    w_b = w_np.reshape(4, block, channels // in_block, in_block, k, k).transpose(0, 2, 4, 5, 3, 1)
    f(kiln.nd.array(_block(x_np, in_block)), kiln.nd.array(w_b), result)
    want = testing.conv2d_nchw_python(x_np, testing.dilate_python(w_np, (1, 1, dilation, dilation)), stride,
                                      (pad,) * 4)
    want = np.maximum(want, 0) if consumer == "relu" else want
    np.testing.assert_allclose(result.numpy(), _block(want, block), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target, lanes, width, chunks, tile", [
    ("llvm -mcpu=haswell", 8, 56, 8, (2, 4)),  # 6 loads for 8 multiply-adds, against 9 for one block of 8 columns
    ("llvm -mcpu=haswell", 8, 7, 8, (2, 4)),  # partial tiles: 4 tiles of 2 for 7 columns
    ("llvm -mcpu=haswell", 8, 14, 6, (3, 3)),  # 48 channels: 3 blocks, 3 columns for the 8 accumulators
    ("llvm -mcpu=haswell", 8, 14, 2, (4, 2)),
    ("llvm -mcpu=haswell", 8, 14, 1, None),  # one block: register_tile's columns
    ("llvm -mcpu=haswell", 8, 1, 8, None),  # a 1x1 output (a squeeze-excite projection)
    ("llvm -mcpu=haswell", 8, 5, 8, None),  # 3 tiles of 2 for 5 columns waste more than MAX_PARTIAL_WASTE
    ("llvm -mcpu=skylake-avx512", 16, 28, 8, (2, 4)),
])
def test_a_pointwise_kernel_tiles_several_channel_blocks(target, lanes, width, chunks, tile):
    assert x86.pointwise_tile(width, chunks, lanes, target) == tile


def test_a_pointwise_kernel_with_half_vector_blocks_keeps_its_columns():
    assert x86.pointwise_tile(56, 8, 8, "llvm -mcpu=skylake-avx512") is None


@pytest.mark.parametrize("size, stride, consumer", [(13, 1, "none"), (13, 2, "relu"), (7, 1, "relu"), (8, 1, "none")])
def test_a_pointwise_convolution_runs_its_multi_block_tile(size, stride, consumer):
    """A 1x1 kernel on AVX2 computes 2 columns x 4 channel blocks per tile, partial tiles past an odd width
    included, alone or with a fused consumer."""
    target, block = "llvm -mcpu=haswell", 8
    rng = np.random.default_rng(3)
    x_np = rng.uniform(-1, 1, (1, 16, size, size)).astype("float32")
    w_np = rng.uniform(-1, 1, (32, 16, 1, 1)).astype("float32")
    x, w = te.placeholder(x_np.shape, name="x"), te.placeholder(w_np.shape, name="w")
    with kiln.target.Target(target):
        out = x86.conv2d_nchw(x, w, (stride, stride), (0, 0), (1, 1), "float32", target)
        out = topi.nn.relu(out) if consumer == "relu" else out
        s = x86.schedule_conv2d_NCHWc([out], target)
    assert _local_tile(s, [x, w, out]) == 2 * 4 * block
    f = kiln.build(s, [x, w, out], target)
    assert re.search(r"vfmadd\w+ps\s+[^\n]*%ymm", f.get_source("asm"))  # the tile's steps are vector FMAs
    result = kiln.nd.empty([int(d) for d in out.shape], "float32")
    f(kiln.nd.array(x_np), kiln.nd.array(w_np), result)
    want = testing.conv2d_nchw_python(x_np, w_np, stride, (0, 0, 0, 0))
    want = np.maximum(want, 0) if consumer == "relu" else want
    np.testing.assert_allclose(result.numpy(), want, rtol=1e-4, atol=1e-4)
