"""Operators of kiln/relay/op/nn_winograd.py: a weight transform followed by the convolution of the transformed
weight equals the plain convolution (computed here with naive numpy loops), in the reference interpreter and
compiled for llvm and c; the relations' shapes and errors."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import TypeInferenceError

from .checks import check
from .test_nn_conv import naive_conv

RNG = np.random.default_rng(23)


def rand(shape, dtype="float32"):
    if dtype.startswith("float"):
        return RNG.standard_normal(shape).astype(dtype)
    return RNG.integers(-8, 8, shape).astype(dtype)


def typed(expr):
    return relay.infer_type(relay.Function(relay.analysis.free_vars(expr), expr)).ret_type


@pytest.mark.parametrize("tile, k, pads, layout", [
    (2, 3, (1, 1, 1, 1), "NCHW"),
    (4, 3, (0, 0, 0, 0), "NCHW"),
    (3, 5, (2, 1, 0, 2), "NCHW"),
    (6, 3, (1, 1, 1, 1), "NHWC"),
    (2, 7, (3, 3, 3, 3), "NHWC"),
])
def test_conv2d_pair_equals_conv2d(tile, k, pads, layout):
    x_nchw, w = rand((2, 3, 11, 9)), rand((5, 3, k, k))
    want = naive_conv(x_nchw, w, (1, 1), pads, (1, 1), 1)
    x = x_nchw if layout == "NCHW" else x_nchw.transpose(0, 2, 3, 1)
    want = want if layout == "NCHW" else want.transpose(0, 2, 3, 1)
    packed = relay.nn.contrib_conv2d_winograd_weight_transform(relay.var("w", shape=w.shape), tile)
    y = relay.nn.contrib_conv2d_winograd_without_weight_transform(
        relay.var("x", shape=x.shape), packed, tile, padding=pads, channels=5, kernel_size=(k, k), data_layout=layout)
    check(y, {"x": x, "w": w}, want, rtol=1e-3 * 10 ** (tile // 3))


@pytest.mark.parametrize("tile, ksize, pads", [
    (2, (3, 3, 3), (1, 1, 1, 1, 1, 1)),
    (3, (1, 3, 3), (0, 1, 1, 0, 1, 1)),
    (2, (2, 5, 5), (1, 2, 0, 0, 2, 1)),
])
def test_conv3d_pair_equals_conv3d(tile, ksize, pads):
    x, w = rand((1, 2, 6, 7, 8)), rand((3, 2, *ksize))
    packed = relay.nn.contrib_conv3d_winograd_weight_transform(relay.var("w", shape=w.shape), tile)
    y = relay.nn.contrib_conv3d_winograd_without_weight_transform(
        relay.var("x", shape=x.shape), packed, tile, padding=pads, channels=3, kernel_size=ksize)
    check(y, {"x": x, "w": w}, naive_conv(x, w, (1, 1, 1), pads, (1, 1, 1), 1), rtol=1e-3)


@pytest.mark.parametrize("dtype, out_dtype, tiles, strides, pads, dilation, layout", [
    ("float32", "", (4, 16), (1, 1), (1, 1, 1, 1), (1, 1), "NHWC"),
    ("float32", "", (3, 5), (2, 1), (1, 0, 2, 1), (1, 2), "NHWC"),
    ("int8", "int32", (4, 16), (1, 2), (0, 1, 1, 0), (2, 1), "NHWC"),
    ("uint8", "int32", (8, 4), (1, 1), (1, 1, 1, 1), (1, 1), "NCHW"),
])
def test_conv2d_gemm_pair_equals_conv2d(dtype, out_dtype, tiles, strides, pads, dilation, layout):
    x_nchw, w_oihw = rand((2, 5, 9, 8), dtype), rand((7, 5, 3, 2), dtype)
    work = "float32" if dtype == "float32" else "int64"
    want = naive_conv(x_nchw.astype(work).astype("float64"), w_oihw.astype("float64"), strides, pads, dilation, 1)
    want = want.astype(out_dtype or dtype)
    x = x_nchw if layout == "NCHW" else x_nchw.transpose(0, 2, 3, 1)
    want = want if layout == "NCHW" else want.transpose(0, 2, 3, 1)
    w = w_oihw.transpose(2, 3, 1, 0)  # HWIO
    tiled = relay.nn.contrib_conv2d_gemm_weight_transform(relay.var("w", shape=w.shape, dtype=dtype), *tiles)
    y = relay.nn.contrib_conv2d_gemm_without_weight_transform(
        relay.var("x", shape=x.shape, dtype=dtype), tiled, strides, pads, dilation, channels=7, kernel_size=(3, 2),
        data_layout=layout, kernel_layout="HWIO", out_dtype=out_dtype)
    check(y, {"x": x, "w": w}, want, rtol=1e-4)


def test_transformed_shapes():
    w = relay.var("w", shape=(8, 4, 3, 3))
    assert typed(relay.nn.contrib_conv2d_winograd_weight_transform(w, 4)) == relay.TensorType((6, 6, 8, 4))
    w3 = relay.var("w", shape=(8, 4, 3, 3, 3))
    assert typed(relay.nn.contrib_conv3d_winograd_weight_transform(w3, 2)) == relay.TensorType((4, 4, 4, 8, 4))
    w3 = relay.var("w", shape=(8, 4, 1, 5, 5))  # a depth of 1 tap stays a direct axis, after the transformed ones
    assert typed(relay.nn.contrib_conv3d_winograd_weight_transform(w3, 2)) == relay.TensorType((6, 6, 1, 8, 4))
    # K = 3 * 3 * 73 = 657 padded to a multiple of 4 * 16, N = 79 to a multiple of 4
    hwio = relay.var("w", shape=(3, 3, 73, 79), dtype="int8")
    assert typed(relay.nn.contrib_conv2d_gemm_weight_transform(hwio, 4, 16)) == \
        relay.TensorType((20, 44, 4, 16), "int8")
    hwio = relay.var("w", shape=(3, 3, 73, 79))
    assert typed(relay.nn.contrib_conv2d_gemm_weight_transform(hwio, 4, 16)) == relay.TensorType((20, 44, 16, 4))


def test_convolution_types_follow_the_attributes():
    x = relay.var("x", shape=(1, 8, 14, 14))
    u = relay.var("u", shape=(6, 6, 16, 8))
    y = relay.nn.contrib_conv2d_winograd_without_weight_transform(x, u, 4, padding=(1, 1), channels=16,
                                                                  kernel_size=(3, 3), out_layout="NHWC")
    assert typed(y) == relay.TensorType((1, 14, 14, 16))
    # kernel_size and channels read off the transformed weight when not given
    assert typed(relay.nn.contrib_conv2d_winograd_without_weight_transform(x, u, 4)) == \
        relay.TensorType((1, 16, 12, 12))
    attrs = relay.nn.contrib_conv2d_winograd_without_weight_transform(x, u, 4).attrs
    assert type(attrs).__name__ == "Conv2DWinogradAttrs" and attrs.tile_size == 4
    g = relay.nn.contrib_conv2d_gemm_weight_transform(relay.var("w", shape=(3, 3, 8, 5)), 4, 16)
    assert (g.attrs.tile_N, g.attrs.tile_K, g.attrs.tile_rows, g.attrs.tile_cols) == (4, 16, 4, 16)
    y = relay.nn.contrib_conv2d_gemm_without_weight_transform(relay.var("x", shape=(1, 9, 9, 8)), g, strides=(2, 2),
                                                              channels=5, kernel_size=(3, 3), data_layout="NHWC",
                                                              kernel_layout="HWIO")
    assert typed(y) == relay.TensorType((1, 4, 4, 5))


@pytest.mark.parametrize("build, message", [
    (lambda: relay.nn.contrib_conv2d_winograd_weight_transform(relay.var("w", shape=(4, 2, 3, 2)), 2),
     "contrib_conv2d_winograd_weight_transform: weight .* must have an NxN kernel"),
    (lambda: relay.nn.contrib_conv2d_winograd_weight_transform(relay.var("w", shape=(4, 2, 3, 3)), 9),
     "tile_size=9 is not supported"),
    (lambda: relay.nn.contrib_conv2d_winograd_weight_transform(relay.var("w", shape=(4, 2, 1, 1)), 2),
     "a 1-tap kernel is not supported"),
    (lambda: relay.nn.contrib_conv3d_winograd_weight_transform(relay.var("w", shape=(4, 2, 3, 3)), 2),
     "contrib_conv3d_winograd_weight_transform: weight .* must be 5-D"),
    (lambda: relay.nn.contrib_conv2d_winograd_without_weight_transform(
        relay.var("x", shape=(1, 2, 8, 8)), relay.var("u", shape=(4, 4, 3, 2)), 2, strides=(2, 2)),
     "without_weight_transform: Winograd needs strides, dilation and groups of 1"),
    (lambda: relay.nn.contrib_conv2d_winograd_without_weight_transform(
        relay.var("x", shape=(1, 2, 8, 8)), relay.var("u", shape=(4, 4, 3, 2)), 4),
     "is not the transform of a \\[1, 1\\] kernel|a 1-tap kernel"),
    (lambda: relay.nn.contrib_conv2d_winograd_without_weight_transform(
        relay.var("x", shape=(1, 5, 8, 8)), relay.var("u", shape=(4, 4, 3, 2)), 2),
     "weight .* is not the transform of a \\[3, 3\\] kernel with tile_size=2, 3 output and 5 input channels"),
    (lambda: relay.nn.contrib_conv3d_winograd_without_weight_transform(
        relay.var("x", shape=(1, 2, 8, 8, 8)), relay.var("u", shape=(4, 4, 4, 3, 2)), 2),
     "contrib_conv3d_winograd_without_weight_transform: kernel_size must be given"),
    (lambda: relay.nn.contrib_conv2d_gemm_without_weight_transform(
        relay.var("x", shape=(1, 8, 8, 2)), relay.var("u", shape=(1, 1, 16, 4)), data_layout="NHWC"),
     "gemm_without_weight_transform: kernel_size and channels must be given"),
    (lambda: relay.nn.contrib_conv2d_gemm_without_weight_transform(
        relay.var("x", shape=(1, 8, 8, 20)), relay.var("u", shape=(1, 1, 16, 4)), channels=4, kernel_size=(3, 3),
        data_layout="NHWC"),
     "holds fewer than the 180 x 4 weights"),
    (lambda: relay.nn.contrib_conv2d_gemm_weight_transform(relay.var("w", shape=(3, 3, 2)), 4, 4),
     "gemm_weight_transform: weights .* must be 4-D"),
])
def test_bad_shapes_and_attributes_are_refused(build, message):
    with pytest.raises(TypeInferenceError, match=message):
        typed(build())


def test_bad_attribute_values_are_refused():
    w = relay.var("w", shape=(3, 3, 2, 2))
    with pytest.raises(kiln.error.KilnError, match="tile_K"):
        relay.nn.contrib_conv2d_gemm_weight_transform(w, 4, 0)
    with pytest.raises(kiln.error.KilnError, match="tile_size"):
        relay.nn.contrib_conv2d_winograd_weight_transform(w, -1)


def test_weight_transform_folds_at_compile_time():
    """The point of the separate operator: with a constant weight, FoldConstant computes the transform once."""
    w = rand((4, 3, 3, 3))
    packed = relay.nn.contrib_conv2d_winograd_weight_transform(relay.const(w), 2)
    x = relay.var("x", shape=(1, 3, 6, 6))
    y = relay.nn.contrib_conv2d_winograd_without_weight_transform(x, packed, 2, padding=(1, 1), channels=4,
                                                                  kernel_size=(3, 3))
    mod = relay.transform.FoldConstant()(kiln.IRModule.from_expr(relay.Function([x], y)))
    assert isinstance(mod["main"].body.args[1], relay.Constant)
    xv = rand((1, 3, 6, 6))
    check(mod["main"].body, {"x": xv}, naive_conv(xv, w, (1, 1), (1, 1, 1, 1), (1, 1), 1), rtol=1e-4)


def test_a_run_time_batch_runs_on_the_vm():
    """The shape functions derived from the computes: one kernel for every batch size."""
    from kiln.runtime.vm import VirtualMachine

    x, w = relay.var("x", shape=(relay.Any(), 3, 8, 7)), relay.var("w", shape=(4, 3, 3, 3))
    y = relay.nn.contrib_conv2d_winograd_without_weight_transform(
        x, relay.nn.contrib_conv2d_winograd_weight_transform(w, 2), 2, padding=(1, 1), channels=4, kernel_size=(3, 3))
    xi, wi = relay.var("xi", shape=(relay.Any(), 7, 6, 5), dtype="int8"), relay.var("wi", shape=(3, 3, 5, 4),
                                                                                     dtype="int8")
    yi = relay.nn.contrib_conv2d_gemm_without_weight_transform(
        xi, relay.nn.contrib_conv2d_gemm_weight_transform(wi, 4, 4), padding=(1, 1), channels=4, kernel_size=(3, 3),
        data_layout="NHWC", kernel_layout="HWIO", out_dtype="int32")
    mod = kiln.IRModule.from_expr(relay.Function([x, w, xi, wi], relay.Tuple([y, yi])))
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    wv, wiv = rand((4, 3, 3, 3)), rand((3, 3, 5, 4), "int8")
    for n in (1, 3):
        xv, xiv = rand((n, 3, 8, 7)), rand((n, 7, 6, 5), "int8")
        out, outi = vm.invoke("main", xv, wv, xiv, wiv)
        np.testing.assert_allclose(out.numpy(), naive_conv(xv, wv, (1, 1), (1, 1, 1, 1), (1, 1), 1), rtol=1e-4,
                                   atol=1e-4)
        want = naive_conv(xiv.transpose(0, 3, 1, 2).astype("float64"), wiv.transpose(3, 2, 0, 1).astype("float64"),
                          (1, 1), (1, 1, 1, 1), (1, 1), 1)
        np.testing.assert_array_equal(outi.numpy(), want.transpose(0, 2, 3, 1).astype("int32"))


def test_text_and_json_round_trip():
    import kiln.parser

    x, w = relay.var("x", shape=(1, 8, 8, 3), dtype="int8"), relay.var("w", shape=(3, 3, 3, 4), dtype="int8")
    y = relay.nn.contrib_conv2d_gemm_without_weight_transform(
        x, relay.nn.contrib_conv2d_gemm_weight_transform(w, 4, 16), channels=4, kernel_size=(3, 3),
        data_layout="NHWC", kernel_layout="HWIO", out_dtype="int32")
    x2, w2 = relay.var("x2", shape=(1, 3, 8, 8, 8)), relay.var("w2", shape=(4, 3, 3, 3, 3))
    y2 = relay.nn.contrib_conv3d_winograd_without_weight_transform(
        x2, relay.nn.contrib_conv3d_winograd_weight_transform(w2, 2), 2, padding=(1, 1, 1), kernel_size=(3, 3, 3))
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([x, w, x2, w2], relay.Tuple([y, y2]))))
    text = mod.astext()
    assert "tile_N=4, tile_K=16" in text and "tile_size=2" in text
    kiln.ir.assert_structural_equal(relay.transform.InferType()(kiln.parser.parse(text)), mod)
    assert kiln.ir.structural_equal(kiln.ir.load_json(kiln.ir.save_json(mod)), mod)


def test_between_blocked_convolutions():
    """At opt_level 3 the x86 hook blocks the plain convolutions around a Winograd one, whose layout rule keeps it
    in NCHW: the layouts are transformed around it and the result is the chain's."""
    w1, w2 = rand((8, 8, 3, 3)) * 0.2, rand((8, 8, 3, 3)) * 0.2
    x = relay.var("x", shape=(1, 8, 10, 10))
    y = relay.nn.relu(relay.nn.conv2d(x, relay.const(w1), padding=(1, 1), channels=8, kernel_size=(3, 3)))
    y = relay.nn.contrib_conv2d_winograd_without_weight_transform(
        y, relay.nn.contrib_conv2d_winograd_weight_transform(relay.const(w2), 4), 4, padding=(1, 1), channels=8,
        kernel_size=(3, 3))
    y = relay.nn.conv2d(relay.nn.relu(y), relay.const(w1), padding=(1, 1), channels=8, kernel_size=(3, 3))
    assert "tile_size=4" in y.astext()  # no default: always printed, as TVM's
    xv = rand((1, 8, 10, 10))
    pads = (1, 1, 1, 1)
    want = np.maximum(naive_conv(xv, w1, (1, 1), pads, (1, 1), 1), 0)
    want = naive_conv(np.maximum(naive_conv(want, w2, (1, 1), pads, (1, 1), 1), 0), w1, (1, 1), pads, (1, 1), 1)
    check(y, {"x": xv}, want, rtol=1e-4)


def test_a_run_time_height_runs_on_the_vm():
    """The number of tiles and the padding of the last one follow a height known only at run time."""
    from kiln.runtime.vm import VirtualMachine

    any_ = relay.Any()
    x, w = relay.var("x", shape=(1, 2, any_, 6)), relay.var("w", shape=(3, 2, 3, 3))
    y = relay.nn.contrib_conv2d_winograd_without_weight_transform(
        x, relay.nn.contrib_conv2d_winograd_weight_transform(w, 4), 4, padding=(1, 0), channels=3, kernel_size=(3, 3))
    xi, wi = relay.var("xi", shape=(1, any_, 5, 4), dtype="int8"), relay.var("wi", shape=(3, 2, 4, 2), dtype="int8")
    yi = relay.nn.contrib_conv2d_gemm_without_weight_transform(
        xi, relay.nn.contrib_conv2d_gemm_weight_transform(wi, 4, 4), strides=(2, 1), channels=2, kernel_size=(3, 2),
        data_layout="NHWC", kernel_layout="HWIO", out_dtype="int32")
    mod = kiln.IRModule.from_expr(relay.Function([x, w, xi, wi], relay.Tuple([y, yi])))
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    wv, wiv = rand((3, 2, 3, 3)), rand((3, 2, 4, 2), "int8")
    for h in (5, 11):
        xv, xiv = rand((1, 2, h, 6)), rand((1, h, 5, 4), "int8")
        out, outi = vm.invoke("main", xv, wv, xiv, wiv)
        np.testing.assert_allclose(out.numpy(), naive_conv(xv, wv, (1, 1), (1, 0, 1, 0), (1, 1), 1), rtol=1e-4,
                                   atol=1e-4)
        want = naive_conv(xiv.transpose(0, 3, 1, 2).astype("float64"), wiv.transpose(3, 2, 0, 1).astype("float64"),
                          (2, 1), (0, 0, 0, 0), (1, 1), 1)
        np.testing.assert_array_equal(outi.numpy(), want.transpose(0, 2, 3, 1).astype("int32"))
