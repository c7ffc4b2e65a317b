"""Operators of kiln/relay/op/nn_extra.py and image.resize1d/3d against numpy, in the reference interpreter and
compiled for llvm and c."""

import numpy as np
import pytest

from kiln import relay, te
from kiln.error import TypeInferenceError
from kiln.topi.testing import resize3d_python

from .checks import check

RNG = np.random.default_rng(19)


def rand(shape):
    return RNG.standard_normal(shape).astype("float32")


def v(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


def linear_1d(x, axis, out):
    """Linear resize along ``axis`` with the half_pixel mode, clamped at the edges."""
    n = x.shape[axis]
    coord = (np.arange(out) + 0.5) * (n / out) - 0.5
    lo = np.floor(coord).astype(int)
    t = (coord - lo).astype("float32")
    a = np.take(x, np.clip(lo, 0, n - 1), axis=axis)
    b = np.take(x, np.clip(lo + 1, 0, n - 1), axis=axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    t = t.reshape(shape)
    return a * (1 - t) + b * t


def test_resize1d():
    x = rand((2, 3, 5))
    check(relay.image.resize1d(v("x", x.shape), 8), {"x": x}, linear_1d(x, 2, 8))
    check(relay.image.resize1d(v("x", x.shape), (10,), method="nearest_neighbor",
                               coordinate_transformation_mode="asymmetric"), {"x": x}, np.repeat(x, 2, axis=2))
    xt = x.transpose(0, 2, 1)
    check(relay.image.resize1d(v("x", xt.shape), 3, layout="NWC"), {"x": xt},
          linear_1d(xt, 1, 3), targets=("c",))


def test_resize3d_and_upsampling3d():
    x = rand((1, 2, 3, 4, 5))
    want = linear_1d(linear_1d(linear_1d(x, 2, 5), 3, 2), 4, 7)
    check(relay.image.resize3d(v("x", x.shape), (5, 2, 7)), {"x": x}, want)
    up = np.repeat(np.repeat(np.repeat(x, 2, 2), 2, 3), 3, 4)
    check(relay.nn.upsampling3d(v("x", x.shape), 2, 2, 3, coordinate_transformation_mode="asymmetric"), {"x": x}, up)
    with pytest.raises(TypeInferenceError, match="image.resize3d"):
        relay.infer_type(relay.image.resize3d(v("x", (1, 2, 3, 4)), (1, 2, 3)))


def test_resize3d_of_integers_and_symbolic_sizes():
    """Integer data are interpolated in float32 and cast once (truncating), as the numpy reference does."""
    x = RNG.integers(0, 255, (1, 2, 3, 4, 5)).astype("uint8")
    want = resize3d_python(x, (5 / 3, 0.5, 7 / 5), "NCDHW", "linear", "half_pixel")
    check(relay.image.resize3d(v("x", x.shape, "uint8"), (5, 2, 7)), {"x": x}, want)
    th, tw = te.var("th"), te.var("tw")
    out = relay.infer_type(relay.image.resize2d(v("x", (1, 2, 3, 4)), (th, tw))).checked_type
    assert out == relay.TensorType((1, 2, th, tw), "float32")


def test_upsampling():
    x = rand((1, 2, 3, 4))
    check(relay.nn.upsampling(v("x", x.shape), 2, 3), {"x": x}, np.repeat(np.repeat(x, 2, 2), 3, 3))
    out = relay.nn.upsampling(v("x", x.shape), 2, 2, method="bilinear", align_corners=True)
    assert relay.infer_type(out).checked_type.shape == (1, 2, 6, 8)
    ys, xs = np.linspace(0, 2, 6), np.linspace(0, 3, 8)
    y0, x0 = np.minimum(np.floor(ys).astype(int), 1), np.minimum(np.floor(xs).astype(int), 2)
    ty, tx = (ys - y0)[:, None], (xs - x0)[None, :]
    a = x[..., y0[:, None], x0[None, :]] * (1 - tx) + x[..., y0[:, None], x0[None, :] + 1] * tx
    b = x[..., y0[:, None] + 1, x0[None, :]] * (1 - tx) + x[..., y0[:, None] + 1, x0[None, :] + 1] * tx
    check(out, {"x": x}, (a * (1 - ty) + b * ty).astype("float32"))
    n, h = relay.Any(), relay.Any()
    dynamic = relay.infer_type(relay.nn.upsampling(v("x", (n, 2, h, 4)), 1, 2)).checked_type.shape
    assert dynamic[0] is n and dynamic[2] is h and dynamic[3] == 8  # a scale of 1 keeps a dynamic size as it is
    assert relay.infer_type(relay.nn.upsampling(v("x", (1, 2, h, 4)), 2, 2)).checked_type.shape[2] == relay.Any()


def test_prelu():
    x, alpha = rand((2, 3, 4)), rand((4,))
    check(relay.nn.prelu(v("x", x.shape), v("a", (4,)), axis=2), {"x": x, "a": alpha},
          np.where(x > 0, x, x * alpha))
    with pytest.raises(TypeInferenceError, match="nn.prelu: alpha must be"):
        relay.infer_type(relay.nn.prelu(v("x", (2, 3, 4)), v("a", (4,))))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("mode", ["DCR", "CRD", "CDR"])  # CDR: TVM's tests' spelling of CRD
def test_depth_to_space_and_back(layout, mode):
    x = rand((1, 8, 2, 3))
    n, c, h, w = x.shape
    b = 2
    if mode == "DCR":
        want = x.reshape(n, b, b, c // 4, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // 4, h * b, w * b)
    else:
        want = x.reshape(n, c // 4, b, b, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // 4, h * b, w * b)
    data = x if layout == "NCHW" else x.transpose(0, 2, 3, 1)
    expect = want if layout == "NCHW" else want.transpose(0, 2, 3, 1)
    check(relay.nn.depth_to_space(v("x", data.shape), 2, layout, mode), {"x": data}, expect)
    if mode == "DCR":
        check(relay.nn.space_to_depth(v("y", expect.shape), 2, layout), {"y": expect}, data, targets=("llvm",))


def test_l2_normalize():
    x = rand((2, 3, 4))
    want = x / np.sqrt(np.maximum(np.sum(x * x, axis=(1,), keepdims=True), 1e-3))
    check(relay.nn.l2_normalize(v("x", x.shape), 1e-3, axis=[1]), {"x": x}, want)


def test_instance_and_group_norm():
    x, gamma, beta = rand((2, 4, 3, 2)), rand((4,)), rand((4,))
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    g, b = gamma.reshape(1, 4, 1, 1), beta.reshape(1, 4, 1, 1)
    check(relay.nn.instance_norm(v("x", x.shape), v("g", (4,)), v("b", (4,)), epsilon=1e-3),
          {"x": x, "g": gamma, "b": beta}, (x - mean) / np.sqrt(var + 1e-3) * g + b, rtol=1e-4)
    grouped = x.reshape(2, 2, 2, 3, 2)
    gm, gv = grouped.mean(axis=(2, 3, 4), keepdims=True), grouped.var(axis=(2, 3, 4), keepdims=True)
    want = ((grouped - gm) / np.sqrt(gv + 1e-5)).reshape(x.shape) * g + b
    check(relay.nn.group_norm(v("x", x.shape), v("g", (4,)), v("b", (4,)), 2), {"x": x, "g": gamma, "b": beta}, want,
          rtol=1e-4)
    with pytest.raises(TypeInferenceError, match="num_groups=3"):
        relay.infer_type(relay.nn.group_norm(v("x", x.shape), v("g", (4,)), v("b", (4,)), 3))


@pytest.mark.parametrize("mode", ["SYMMETRIC", "REFLECT"])
def test_mirror_pad(mode):
    x = rand((3, 4))
    check(relay.nn.mirror_pad(v("x", x.shape), ((1, 2), (2, 0)), mode), {"x": x},
          np.pad(x, ((1, 2), (2, 0)), mode=mode.lower()))
    with pytest.raises(TypeInferenceError, match="nn.mirror_pad"):
        relay.infer_type(relay.nn.mirror_pad(v("x", x.shape), ((4, 0), (0, 0)), mode))


@pytest.mark.parametrize("mode", ["SYMMETRIC", "REFLECT"])
@pytest.mark.parametrize("target", ["llvm", "c"])
def test_mirror_pad_of_a_size_known_at_run_time(mode, target):
    """The mirrored index past the end reads the run-time size (fuzz seed 70016)."""
    import kiln

    x = rand((3, 4))
    dyn = relay.var("x", shape=(relay.Any(), 4))
    mod = kiln.IRModule.from_expr(relay.Function([dyn], relay.nn.mirror_pad(dyn, ((1, 2), (2, 1)), mode)))
    got = relay.create_executor("vm", mod=mod, target=target).evaluate()(x).numpy()
    np.testing.assert_array_equal(got, np.pad(x, ((1, 2), (2, 1)), mode=mode.lower()))


def test_fast_softmax():
    x = rand((2, 5))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    check(relay.nn.fast_softmax(v("x", x.shape)), {"x": x}, e / e.sum(axis=1, keepdims=True))
