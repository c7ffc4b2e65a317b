"""extract_from_program (kiln/autotvm/task/relay_integration.py): one task per distinct tunable kernel, after
fusion and layout alteration."""

import pytest

from kiln import autotvm, relay
from kiln.target import Target

from ..conftest import conv_model, grouped_model, mixed_model


def test_conv_model_has_one_blocked_task():
    mod, params = conv_model()
    (task,) = autotvm.task.extract_from_program(mod["main"], params, target="llvm")
    assert task.name == "conv2d_NCHWc.x86"
    data, kernel, strides, padding, dilation, layout, kernel_layout, dtype, out_layout = task.args
    lanes = Target("llvm").vector_lanes("float32")
    block = min(16, lanes)
    assert data == ("TENSOR", (1, 16 // block, 14, 14, block), "float32")
    assert kernel[1][2:4] == (3, 3) and layout == f"NCHW{block}c" and dtype == "float32"
    assert strides == (1, 1) and padding == (1, 1, 1, 1) and dilation == (1, 1)
    assert task.flop == 2 * 32 * 14 * 14 * 16 * 9
    assert task.config_space.knob_names() == ["tile_ow", "tile_oc", "tile_oh", "tile_ic_block", "reduce_inner",
                                              "unroll_outer", "kh_outside"]
    space = task.config_space
    budget = Target("llvm").cpu_info.vector_registers * 3 // 4
    tiles = {(c["tile_ow"].size[-1], c["tile_oc"].size[-1], c["tile_oh"].size[-1]) for c in space}
    # 14 columns: tiles of 1, 2, 7, 14; 32 // block output channel blocks: any divisor per tile; 14 rows: 1 or 2 per
    # tile; within budget
    oc_blocks = 32 // block
    expected = {(w, b, h) for w in (1, 2, 7, 14) for b in range(1, oc_blocks + 1) if oc_blocks % b == 0
                for h in (1, 2) if w * b * h <= budget}
    default = space.get(task.default_index)
    assert tiles == expected | {(default["tile_ow"].size[-1], 1, 1)}
    # the block's input channels in chunks of any divisor, two reduction orders, the kernel's rows inside or outside
    # the channel loops; the next reduction loop (a chunk x 3 taps) unrolled too where that stays small
    from kiln.topi.x86.conv2d import MAX_UNROLLED_BODY

    chunks = [d for d in range(1, block + 1) if block % d == 0]
    assert len(space) == sum(2 * 2 * (1 + (w * b * h * 3 * c <= MAX_UNROLLED_BODY)) for w, b, h in tiles for c in chunks)


def test_mixed_model_tasks_and_ops_filter():
    mod, params = mixed_model()
    tasks = autotvm.task.extract_from_program(mod, params, target="llvm")
    names = sorted(t.name for t in tasks)
    assert names == ["conv2d_NCHWc.x86", "dense_nopack.x86", "dense_pack.x86", "depthwise_conv2d_NCHWc.x86"]
    for task in tasks:
        assert task.flop > 0 and len(task.config_space) >= 1
        assert task.config_space.is_index_valid(task.default_index)
    convs = autotvm.task.extract_from_program(mod, params, target="llvm", ops=[relay.op.get("nn.conv2d")])
    assert sorted(t.name for t in convs) == ["conv2d_NCHWc.x86", "depthwise_conv2d_NCHWc.x86"]


def test_grouped_convolution_and_batch_matmul_are_tasks():
    mod, params = grouped_model()
    tasks = {t.name: t for t in autotvm.task.extract_from_program(mod, params, target="llvm")}
    assert sorted(tasks) == ["batch_matmul_pack.x86", "group_conv2d_NCHWc.x86"]
    assert tasks["batch_matmul_pack.x86"].flop == 2 * 2 * 64 * 48 * 32
    assert tasks["group_conv2d_NCHWc.x86"].flop == 2 * 32 * 8 * 8 * 16 * 9


def test_without_layout_alteration_there_is_no_blocked_task():
    mod, params = conv_model()
    assert autotvm.task.extract_from_program(mod, params, target="llvm", opt_level=2) == []


def test_unknown_target_kind_is_refused():
    mod, params = conv_model()
    with pytest.raises(Exception, match="cuda"):
        autotvm.task.extract_from_program(mod, params, target="cuda")
