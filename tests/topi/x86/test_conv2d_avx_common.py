"""The x86 convolution's untuned configuration asked for ahead of scheduling: ``topi.nn.conv2d._get_workload``
reads a convolution's geometry, ``topi.x86.conv2d_avx_common._fallback_schedule`` gives the knob values the blocked
schedule itself picks when it meets that convolution untuned (checked by scheduling it), and
``autotvm.get_config()`` outside any task is a fallback config a template can fill."""

import pytest

import kiln
from kiln import autotvm, te, topi
from kiln.autotvm.task import FallbackConfigEntity
from kiln.error import OpAttributeInvalid
from kiln.topi.nn.conv2d import _get_workload
from kiln.topi.x86.conv2d_avx_common import _fallback_schedule

KNOBS = ("tile_ow", "tile_oc", "tile_oh", "reduce_inner", "unroll_outer")


def _knob_values(cfg):
    return {k: getattr(cfg[k], "size", None) or cfg[k].val for k in KNOBS}


@pytest.mark.parametrize("target", ["llvm -mcpu=haswell", "llvm -mcpu=skylake-avx512"])
@pytest.mark.parametrize("shape", [
    # (channels, size, filters, kernel, stride, padding, dilation)
    (64, 56, 64, 3, 1, 1, 1),
    (3, 35, 64, 7, 2, (0, 0, 1, 1), 1),
    (64, 8, 48, 3, 1, "SAME", 2),
    (32, 17, 40, 1, 1, "VALID", 1),
    (16, 9, 24, 5, 2, (1, 2), 1),
])
def test_fallback_schedule_is_what_the_schedule_picks(target, shape):
    c, size, o, k, stride, padding, dilation = shape
    data = te.placeholder((1, c, size, size), name="data")
    kernel = te.placeholder((o, c, k, k), name="kernel")
    with kiln.target.Target(target):
        wkl = _get_workload(data, kernel, (stride, stride), padding, dilation, "float32")
        predicted = FallbackConfigEntity()
        _fallback_schedule(predicted, wkl)
        out = topi.x86.conv2d_nchw(data, kernel, (stride, stride), padding, (dilation, dilation), "float32")
        used = FallbackConfigEntity()
        topi.x86.schedule_conv2d_NCHWc([out], cfg=used)
    assert _knob_values(predicted) == _knob_values(used)
    out_width = int(out.shape[3])
    tile_ow = predicted["tile_ow"].size
    assert tile_ow[0] * tile_ow[1] == out_width


def test_get_workload_geometry():
    data = te.placeholder((1, 32, 20, 24), name="data", dtype="uint8")
    kernel = te.placeholder((16, 8, 3, 5), name="kernel", dtype="int8")
    wkl = _get_workload(data, kernel, (2, 1), "SAME", (1, 2), "int32")
    assert (wkl.in_dtype, wkl.out_dtype, wkl.height, wkl.width) == ("uint8", "int32", 20, 24)
    assert (wkl.in_filter, wkl.groups, wkl.out_filter, wkl.kernel_h, wkl.kernel_w) == (32, 4, 16, 3, 5)
    # SAME against the dilated 3 x 9 window: 2 rows and 8 columns of padding, the smaller half first
    assert (wkl.padt, wkl.padl, wkl.padb, wkl.padr) == (1, 4, 1, 4)
    assert (wkl.dilation_h, wkl.dilation_w, wkl.stride_h, wkl.stride_w) == (1, 2, 2, 1)
    nhwc = _get_workload(te.placeholder((1, 20, 24, 32)), te.placeholder((3, 3, 32, 8)), 1, 1, 1, "float32", "NHWC")
    assert (nhwc.height, nhwc.width, nhwc.in_filter, nhwc.out_filter, nhwc.padt) == (20, 24, 32, 8, 1)


def test_get_workload_refuses_what_it_cannot_read():
    data, kernel = te.placeholder((1, 8, 8, 8)), te.placeholder((8, 8, 3, 3), dtype="float16")
    with pytest.raises(OpAttributeInvalid, match="float32 with a kernel of float16"):
        _get_workload(data, kernel, 1, 1, 1, "float32")
    with pytest.raises(OpAttributeInvalid, match="data layout 'NCWH'"):
        _get_workload(data, te.placeholder((8, 8, 3, 3)), 1, 1, 1, "float32", "NCWH")


def test_get_config_outside_a_task_is_a_fallback_that_keeps_its_knobs():
    with kiln.target.Target("llvm"):
        cfg = autotvm.get_config()
        assert cfg.is_fallback
        cfg.define_knob("unroll", [True, False])
        cfg["unroll"] = autotvm.task.space.OtherOptionEntity(False)
        assert autotvm.get_config()["unroll"].val is False
