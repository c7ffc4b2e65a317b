"""``dyn.nn.upsampling`` and ``dyn.nn.upsampling3d`` (kiln/relay/op/dyn/nn.py): the scales as run-time tensors.
Each is compiled once for the VM and run with two sets of scales on both targets, against numpy's repeat (integer
scales, nearest neighbour) or the static operator with the same scales; the type relation, the run-time checks and
DynamicToStatic are checked as well."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError, TypeInferenceError

from ...target.conftest import TARGETS


def _vm(func, target):
    return relay.create_executor("vm", mod=kiln.IRModule.from_expr(func), target=target).evaluate()


def _scalar_vars(*names, dtype="float32"):
    return [relay.var(n, shape=(), dtype=dtype) for n in names]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_nearest_integer_scales_repeat_rows_and_columns(target, layout):
    rng = np.random.default_rng(1)
    shape = (2, 3, 4, 5) if layout == "NCHW" else (2, 4, 5, 3)
    h, w = layout.index("H"), layout.index("W")
    x = relay.var("x", shape=shape, dtype="float32")
    sh, sw = _scalar_vars("sh", "sw")
    run = _vm(relay.Function([x, sh, sw], relay.nn.upsampling(x, sh, sw, layout=layout)), target)
    data = rng.standard_normal(shape).astype("float32")
    for scale_h, scale_w in ((2, 3), (1, 2)):
        got = run(data, np.float32(scale_h), np.float32(scale_w)).numpy()
        np.testing.assert_array_equal(got, np.repeat(np.repeat(data, scale_h, h), scale_w, w))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method,align", [("bilinear", True), ("bilinear", False), ("bicubic", False),
                                          ("nearest_neighbor", False)])
def test_fractional_scales_match_the_static_operator(target, method, align):
    rng = np.random.default_rng(2)
    x = relay.var("x", shape=(1, 2, 5, 3), dtype="float32")
    sh, sw = _scalar_vars("sh", "sw")
    run = _vm(relay.Function([x, sh, sw], relay.nn.upsampling(x, sh, sw, method=method, align_corners=align)),
              target)
    data = rng.standard_normal((1, 2, 5, 3)).astype("float32")
    for scale_h, scale_w in ((1.5, 2.5), (0.5, 3.0)):
        got = run(data, np.float32(scale_h), np.float32(scale_w)).numpy()
        static = relay.Function([x], relay.nn.upsampling(x, scale_h, scale_w, method=method, align_corners=align))
        want = relay.create_executor("debug", mod=kiln.IRModule.from_expr(static)).evaluate()(data).numpy()
        assert got.shape == (1, 2, int(np.floor(5 * scale_h + 0.5)), int(np.floor(3 * scale_w + 0.5)))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_upsampling3d_with_run_time_and_constant_scales(target):
    rng = np.random.default_rng(3)
    x = relay.var("x", shape=(1, 2, 3, 2, 2), dtype="float32")
    sd, sw = _scalar_vars("sd", "sw")
    call = relay.nn.upsampling3d(x, sd, 2, sw, method="nearest_neighbor", coordinate_transformation_mode="asymmetric")
    assert call.op.name == "dyn.nn.upsampling3d"
    run = _vm(relay.Function([x, sd, sw], call), target)
    data = rng.standard_normal((1, 2, 3, 2, 2)).astype("float32")
    for scale_d, scale_w in ((2, 3), (1, 1)):
        got = run(data, np.float32(scale_d), np.float32(scale_w)).numpy()
        np.testing.assert_array_equal(got, np.repeat(np.repeat(np.repeat(data, scale_d, 2), 2, 3), scale_w, 4))
    trilinear = relay.nn.upsampling3d(x, sd, 2, sw, layout="NCDHW", method="trilinear",
                                      coordinate_transformation_mode="align_corners")
    mod = kiln.IRModule.from_expr(relay.Function([x, sd, sw], trilinear))
    args = (data, np.float32(1.5), np.float32(2.5))
    want = relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()
    got = relay.create_executor("vm", mod=mod, target=target).evaluate()(*args).numpy()
    assert got.shape == (1, 2, 5, 4, 5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_types_leave_the_scaled_axes_unknown():
    n = kiln.te.size_var("n")
    x = relay.var("x", shape=(n, 3, 4, 5), dtype="int8")
    (sw,) = _scalar_vars("sw")
    typed = relay.testing.run_infer_type(relay.nn.upsampling(x, 2.0, sw, layout="NHWC"))
    assert typed.checked_type == relay.TensorType((n, relay.Any(), relay.Any(), 5), "int8")
    x3 = relay.var("x", shape=(1, 2, 3, 4, 5), dtype="float32")
    typed = relay.testing.run_infer_type(relay.nn.upsampling3d(x3, sw, sw, 1.0))
    assert typed.checked_type == relay.TensorType((1, 2, relay.Any(), relay.Any(), relay.Any()), "float32")


def test_type_relation_refuses_bad_scales_and_layouts():
    x = relay.var("x", shape=(1, 3, 4, 5), dtype="float32")
    vector = relay.var("v", shape=(2,), dtype="float32")
    with pytest.raises(TypeInferenceError, match="dyn.nn.upsampling: scale_h must be a scalar"):
        relay.testing.run_infer_type(relay.nn.upsampling(x, vector, 2.0))
    (sw,) = _scalar_vars("sw")
    with pytest.raises(TypeInferenceError, match="dyn.nn.upsampling3d: data .* does not fit layout"):
        relay.testing.run_infer_type(relay.nn.upsampling3d(x, sw, sw, sw))
    boolean = relay.var("b", shape=(), dtype="bool")
    with pytest.raises(TypeInferenceError, match="dyn.nn.upsampling"):
        relay.testing.run_infer_type(relay.nn.upsampling(x, boolean, 2.0))


@pytest.mark.parametrize("target", TARGETS)
def test_integer_scales(target):
    """TVM's relation takes scales of any dtype (its tests bind Python ints): integer scalars scale too."""
    x = relay.var("x", shape=(1, 2, 2, 3), dtype="int8")
    sh, sw = _scalar_vars("sh", "sw", dtype="int64")
    data = np.arange(12, dtype="int8").reshape(1, 2, 2, 3)
    got = _vm(relay.Function([x, sh, sw], relay.nn.upsampling(x, sh, sw)), target)(data, np.int64(3), np.int64(2))
    np.testing.assert_array_equal(got.numpy(), np.repeat(np.repeat(data, 3, 2), 2, 3))


def test_a_scale_that_is_not_positive_is_refused_at_run_time():
    x = relay.var("x", shape=(1, 1, 2, 2), dtype="float32")
    sh, sw = _scalar_vars("sh", "sw")
    mod = kiln.IRModule.from_expr(relay.Function([x, sh, sw], relay.nn.upsampling(x, sh, sw)))
    args = (np.ones((1, 1, 2, 2), "float32"), np.float32(0), np.float32(2))
    with pytest.raises(KilnError, match="dyn.nn.upsampling"):
        relay.create_executor("debug", mod=mod).evaluate()(*args)
    with pytest.raises(KilnError, match="dyn.nn.upsampling: scale_h must be positive"):
        relay.create_executor("vm", mod=mod, target="llvm").evaluate()(*args)


def test_dynamic_to_static_with_constant_scales():
    x = relay.var("x", shape=(1, 2, 3, 4), dtype="float32")
    (sw,) = _scalar_vars("sw")
    folded = relay.nn.upsampling(x, relay.const(1.0) + relay.const(1.0), relay.const(1.5, "float64") * 2.0,
                                 layout="NCHW", method="bilinear", align_corners=True)
    assert folded.op.name == "dyn.nn.upsampling"
    mod = relay.transform.DynamicToStatic()(kiln.IRModule.from_expr(relay.Function([x], folded)))
    body = mod["main"].body
    assert body.op.name == "nn.upsampling" and (body.attrs.scale_h, body.attrs.scale_w) == (2.0, 3.0)
    assert body.attrs.align_corners and body.checked_type == relay.TensorType((1, 2, 6, 12), "float32")
    kept = relay.transform.DynamicToStatic()(kiln.IRModule.from_expr(relay.Function([x, sw], relay.nn.upsampling(
        x, 2.0, sw))))
    assert kept["main"].body.op.name == "dyn.nn.upsampling"
    x3 = relay.var("x", shape=(1, 1, 2, 2, 2), dtype="float32")
    three = relay.nn.upsampling3d(x3, relay.const(2.0) * relay.const(1.0), 1.0, 2.0, method="trilinear")
    mod = relay.transform.DynamicToStatic()(kiln.IRModule.from_expr(relay.Function([x3], three)))
    assert mod["main"].body.op.name == "nn.upsampling3d"
    assert mod["main"].body.checked_type == relay.TensorType((1, 1, 4, 2, 4), "float32")


def test_constant_scales_keep_the_static_operator():
    x = relay.var("x", shape=(1, 1, 2, 2), dtype="float32")
    call = relay.nn.upsampling(x, relay.const(2.0), relay.const(3.0))
    assert call.op.name == "nn.upsampling" and call.attrs.scale_w == 3.0


def test_prints_and_parses_back():
    x = relay.var("x", shape=(1, 2, 2, 2, 3))
    sd, sw = _scalar_vars("sd", "sw")
    body = relay.nn.upsampling3d(x, sd, 2.0, sw, layout="NDHWC", method="trilinear")
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([x, sd, sw], body)))
    back = relay.transform.InferType()(relay.fromtext(mod.astext()))
    kiln.ir.assert_structural_equal(back["main"], mod["main"])
