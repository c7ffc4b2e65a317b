"""conv2d and pooling of the reference interpreter against explicit-loop references on tiny shapes."""

import itertools

import numpy as np
import pytest

from kiln import relay

RNG = np.random.default_rng(5)


def run(expr, **inputs):
    params = relay.analysis.free_vars(expr)
    return relay.create_executor().evaluate(relay.Function(params, expr))(**inputs).numpy()


def v(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


def conv_ref(x, w, strides, padding, dilation, groups):
    """NCHW x OIHW, one output element at a time, accumulating in float64 (or int64)."""
    n_, _, h_, w_ = x.shape
    o_, cg, kh, kw = w.shape
    top, left, bottom, right = padding
    (sh, sw), (dh, dw) = strides, dilation
    oh = (h_ + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (w_ + left + right - dw * (kw - 1) - 1) // sw + 1
    acc = "int64" if x.dtype.kind in "iu" else "float64"
    out = np.zeros((n_, o_, oh, ow), acc)
    per_group = o_ // groups
    for n, o, i, j in itertools.product(range(n_), range(o_), range(oh), range(ow)):
        g = o // per_group
        total = 0
        for c, p, q in itertools.product(range(cg), range(kh), range(kw)):
            row, col = i * sh + p * dh - top, j * sw + q * dw - left
            if 0 <= row < h_ and 0 <= col < w_:
                total += x[n, g * cg + c, row, col].astype(acc) * w[o, c, p, q].astype(acc)
        out[n, o, i, j] = total
    return out


CASES = [
    # data shape, weight shape (OIHW), strides, padding, dilation, groups
    ((1, 3, 6, 6), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    ((2, 4, 7, 5), (6, 2, 3, 2), (2, 1), (0, 1, 2, 0), (1, 1), 2),
    ((1, 4, 8, 8), (4, 1, 3, 3), (1, 2), (1, 1, 1, 1), (2, 2), 4),   # depthwise, dilated
    ((1, 4, 6, 6), (8, 1, 3, 3), (1, 1), (2, 0, 0, 2), (1, 1), 4),   # depthwise with a channel multiplier
    ((1, 2, 5, 5), (3, 2, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),   # 1x1
    ((1, 3, 9, 9), (2, 3, 5, 5), (3, 3), (2, 2, 2, 2), (1, 1), 1),
]


@pytest.mark.parametrize("dshape,wshape,strides,padding,dilation,groups", CASES)
def test_conv2d_nchw_oihw(dshape, wshape, strides, padding, dilation, groups):
    x, w = RNG.standard_normal(dshape).astype("f4"), RNG.standard_normal(wshape).astype("f4")
    out = run(relay.nn.conv2d(v("x", dshape), v("w", wshape), strides, padding, dilation, groups), x=x, w=w)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, conv_ref(x, w, strides, padding, dilation, groups), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", [0, 1, 2])
@pytest.mark.parametrize("data_layout,kernel_layout,out_layout", [
    ("NHWC", "HWIO", ""), ("NHWC", "OHWI", ""), ("NCHW", "HWOI", ""), ("NCHW", "OIHW", "NHWC"),
    ("NCHW2c", "OIHW2i2o", ""), ("NHWC", "HWIO", "NCHW"),
])
def test_conv2d_layouts(case, data_layout, kernel_layout, out_layout):
    dshape, wshape, strides, padding, dilation, groups = CASES[case]
    x, w = RNG.standard_normal(dshape).astype("f4"), RNG.standard_normal(wshape).astype("f4")
    expected = conv_ref(x, w, strides, padding, dilation, groups)
    to_data = {"NCHW": lambda a: a, "NHWC": lambda a: a.transpose(0, 2, 3, 1),
               "NCHW2c": lambda a: a.reshape(a.shape[0], -1, 2, *a.shape[2:]).transpose(0, 1, 3, 4, 2)}
    to_kernel = {"OIHW": lambda k: k, "HWIO": lambda k: k.transpose(2, 3, 1, 0),
                 "OHWI": lambda k: k.transpose(0, 2, 3, 1), "HWOI": lambda k: k.transpose(2, 3, 0, 1),
                 "OIHW2i2o": lambda k: k.reshape(k.shape[0] // 2, 2, k.shape[1] // 2, 2, *k.shape[2:])
                 .transpose(0, 2, 4, 5, 3, 1)}
    if data_layout == "NCHW2c" and (dshape[1] % 2 or wshape[1] % 2):
        pytest.skip("channels not divisible by the block")
    xd, wk = to_data[data_layout](x), to_kernel[kernel_layout](w)
    out = run(relay.nn.conv2d(v("x", xd.shape), v("w", wk.shape), strides, padding, dilation, groups,
                              data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout), x=xd, w=wk)
    np.testing.assert_allclose(out, to_data[out_layout or data_layout](expected), rtol=1e-4, atol=1e-5)


def test_conv2d_int8_with_int32_out_dtype():
    x = RNG.integers(-128, 128, (1, 3, 5, 5)).astype("int8")
    w = RNG.integers(-128, 128, (2, 3, 3, 3)).astype("int8")
    out = run(relay.nn.conv2d(v("x", x.shape, "int8"), v("w", w.shape, "int8"), padding=1, out_dtype="int32"), x=x, w=w)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, conv_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1))


def pool_ref(x, kind, pool, strides, dilation, padding, ceil_mode, count_include_pad=False):
    """NCHW pooling over the cells each window covers; ceil_mode cells beyond the padding never count."""
    n_, c_, h_, w_ = x.shape
    top, left, bottom, right = padding

    def out_size(size, k, s, d, lo, hi):
        span = size + lo + hi - d * (k - 1) - 1
        return (-(-span // s) if ceil_mode else span // s) + 1

    oh = out_size(h_, pool[0], strides[0], dilation[0], top, bottom)
    ow = out_size(w_, pool[1], strides[1], dilation[1], left, right)
    out = np.zeros((n_, c_, oh, ow), x.dtype)
    lowest = np.finfo(x.dtype).min
    for n, c, i, j in itertools.product(range(n_), range(c_), range(oh), range(ow)):
        values, counted = [], 0
        for p, q in itertools.product(range(pool[0]), range(pool[1])):
            row = i * strides[0] + p * dilation[0] - top
            col = j * strides[1] + q * dilation[1] - left
            in_data = 0 <= row < h_ and 0 <= col < w_
            in_pad = -top <= row < h_ + bottom and -left <= col < w_ + right
            if in_data:
                values.append(float(x[n, c, row, col]))
            if in_data or (count_include_pad and in_pad):
                counted += 1
            if kind == "max" and in_pad and not in_data:
                values.append(lowest)
        if kind == "max":
            out[n, c, i, j] = max(values) if values else lowest
        else:
            out[n, c, i, j] = sum(values) / counted if counted else 0
    return out


POOLS = [
    ((2, 2), (2, 2), (1, 1), (0, 0, 0, 0), False),
    ((3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False),
    ((3, 3), (2, 2), (1, 1), (1, 0, 0, 1), True),
    ((2, 3), (3, 2), (1, 1), (0, 1, 2, 0), True),
    ((2, 2), (1, 1), (2, 2), (1, 1, 1, 1), False),
    ((3, 2), (2, 3), (2, 1), (0, 0, 1, 1), True),
]


@pytest.mark.parametrize("pool,strides,dilation,padding,ceil_mode", POOLS)
def test_max_pool2d(pool, strides, dilation, padding, ceil_mode):
    x = RNG.standard_normal((2, 3, 7, 8)).astype("f4")
    out = run(relay.nn.max_pool2d(v("x", x.shape), pool, strides, dilation, padding, ceil_mode=ceil_mode), x=x)
    np.testing.assert_array_equal(out, pool_ref(x, "max", pool, strides, dilation, padding, ceil_mode))


@pytest.mark.parametrize("count_include_pad", [False, True])
@pytest.mark.parametrize("pool,strides,dilation,padding,ceil_mode", POOLS)
def test_avg_pool2d(pool, strides, dilation, padding, ceil_mode, count_include_pad):
    x = RNG.standard_normal((2, 3, 7, 8)).astype("f4")
    out = run(relay.nn.avg_pool2d(v("x", x.shape), pool, strides, dilation, padding, ceil_mode=ceil_mode,
                                  count_include_pad=count_include_pad), x=x)
    expected = pool_ref(x, "avg", pool, strides, dilation, padding, ceil_mode, count_include_pad)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_pooling_in_other_layouts():
    x = RNG.standard_normal((1, 4, 6, 6)).astype("f4")
    expected = pool_ref(x, "max", (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False)
    nhwc = x.transpose(0, 2, 3, 1)
    out = run(relay.nn.max_pool2d(v("x", nhwc.shape), (3, 3), (2, 2), padding=1, layout="NHWC"), x=nhwc)
    np.testing.assert_array_equal(out, expected.transpose(0, 2, 3, 1))
    nchw2c = x.reshape(1, 2, 2, 6, 6).transpose(0, 1, 3, 4, 2)
    out = run(relay.nn.avg_pool2d(v("x", nchw2c.shape), (3, 3), (2, 2), padding=1, layout="NCHW2c",
                                  out_layout="NCHW"), x=nchw2c)
    np.testing.assert_allclose(out, pool_ref(x, "avg", (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False), rtol=1e-5)


def test_global_pools():
    x = RNG.standard_normal((2, 3, 4, 5)).astype("f4")
    avg = run(relay.nn.global_avg_pool2d(v("x", x.shape)), x=x)
    mx = run(relay.nn.global_max_pool2d(v("x", x.shape)), x=x)
    assert avg.shape == mx.shape == (2, 3, 1, 1)
    for n, c in itertools.product(range(2), range(3)):
        assert avg[n, c, 0, 0] == pytest.approx(sum(float(t) for t in x[n, c].ravel()) / 20, rel=1e-5)
        assert mx[n, c, 0, 0] == max(x[n, c].ravel())
    nhwc = x.transpose(0, 2, 3, 1)
    np.testing.assert_allclose(run(relay.nn.global_avg_pool2d(v("x", nhwc.shape), layout="NHWC"), x=nhwc),
                               avg.transpose(0, 2, 3, 1), rtol=1e-6)
