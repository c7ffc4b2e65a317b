"""kiln/topi/testing/conv.py: the convolution references against direct loops, and each transposed convolution
against its definition as the adjoint of the convolution (<conv(x, w), y> == <x, conv_transpose(y, w)>)."""

import itertools

import numpy as np
import pytest

from kiln.error import OpAttributeInvalid
from kiln.topi import testing as ref
from kiln.topi.testing.conv import conv_ncx_python, conv_transpose_ncx_python, pad_pairs

RNG = np.random.default_rng(3)


def loops_conv(x, w, strides, before, after, dil, groups):
    """One output element at a time (channel-first data, OI... kernel)."""
    nd = x.ndim - 2
    xp = np.pad(x.astype("float64"), [(0, 0), (0, 0)] + list(zip(before, after, strict=True)))
    o, cg = w.shape[:2]
    outs = [(xp.shape[2 + a] - dil[a] * (w.shape[2 + a] - 1) - 1) // strides[a] + 1 for a in range(nd)]
    out = np.zeros((x.shape[0], o, *outs))
    for b, f in itertools.product(range(x.shape[0]), range(o)):
        g = f // (o // groups)
        for pos in itertools.product(*[range(s) for s in outs]):
            for k in itertools.product(*[range(s) for s in w.shape[2:]]):
                idx = tuple(pos[a] * strides[a] + k[a] * dil[a] for a in range(nd))
                out[(b, f, *pos)] += np.dot(xp[(b, slice(g * cg, (g + 1) * cg), *idx)], w[(f, slice(None), *k)])
    return out


def test_pad_pairs_reads_tvms_forms():
    assert pad_pairs(1, (3, 3)) == ((1, 1), (1, 1))
    assert pad_pairs((1, 2), (3, 3)) == ((1, 2), (1, 2))
    assert pad_pairs((1, 2, 3, 4), (3, 3)) == ((1, 2), (3, 4))
    assert pad_pairs("VALID", (3,)) == ((0,), (0,))
    assert pad_pairs("SAME", (4, 3)) == ((2, 1), (1, 1))  # the larger half of kernel - 1 before, as TVM
    with pytest.raises(OpAttributeInvalid, match="padding"):
        pad_pairs((1, 2, 3), (3, 3))
    with pytest.raises(OpAttributeInvalid, match="SAME"):
        pad_pairs("FULL", (3,))


@pytest.mark.parametrize("shape,kernel,strides,padding,dil,groups", [
    ((2, 4, 11), (6, 2, 3), (2,), (1, 2), (2,), 2),
    ((1, 3, 7, 6), (4, 3, 3, 2), (1, 2), (1, 0, 2, 1), (1, 2), 1),
    ((1, 4, 5, 6, 4), (4, 1, 3, 2, 2), (1, 1, 2), (1, 0, 1), (1, 1, 1), 4),
])
def test_convolution_matches_direct_loops(shape, kernel, strides, padding, dil, groups):
    x, w = RNG.standard_normal(shape).astype("float32"), RNG.standard_normal(kernel).astype("float32")
    before, after = pad_pairs(padding, [(k - 1) * d + 1 for k, d in zip(kernel[2:], dil, strict=True)])
    got = conv_ncx_python(x, w, strides, padding, dil, groups)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, loops_conv(x, w, strides, before, after, dil, groups), rtol=1e-5, atol=1e-5)


def test_named_convolutions_and_layouts():
    x, w = RNG.standard_normal((1, 3, 9)).astype("float32"), RNG.standard_normal((5, 3, 3)).astype("float32")
    np.testing.assert_allclose(ref.conv1d_ncw_python(x, w, 1, "SAME", 2), loops_conv(x, w, (1,), (2,), (2,), (2,), 1),
                               rtol=1e-5, atol=1e-5)
    x5 = RNG.standard_normal((1, 2, 4, 5, 3)).astype("float32")
    w5 = RNG.standard_normal((3, 2, 2, 3, 1)).astype("float32")
    want = loops_conv(x5, w5, (1, 2, 1), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1)
    np.testing.assert_allclose(ref.conv3d_ncdhw_python(x5, w5, (1, 2, 1), 1), want, rtol=1e-5, atol=1e-5)
    ndhwc = ref.conv3d_ndhwc_python(x5.transpose(0, 2, 3, 4, 1), w5.transpose(2, 3, 4, 1, 0), (1, 2, 1), 1)
    np.testing.assert_allclose(ndhwc.transpose(0, 4, 1, 2, 3), want, rtol=1e-5, atol=1e-5)
    xi, wi = RNG.integers(-128, 128, (1, 2, 6)).astype("int8"), RNG.integers(-128, 128, (2, 2, 3)).astype("int8")
    exact = loops_conv(xi.astype("int64"), wi.astype("int64"), (1,), (0,), (0,), (1,), 1)
    np.testing.assert_array_equal(ref.conv1d_ncw_python(xi.astype("int32"), wi.astype("int32"), 1, 0, 1), exact)


@pytest.mark.parametrize("shape,kernel,strides,padding,out_pad,dil,groups", [
    ((2, 4, 5), (4, 3, 3), (2,), (1, 0), (1,), (1,), 2),
    ((1, 2, 4, 3), (2, 3, 3, 2), (2, 3), (1, 0, 0, 1), (1, 2), (1, 1), 1),
    ((1, 2, 3, 2, 3), (2, 2, 2, 3, 1), (1, 2, 2), (0, 1, 0, 0, 1, 0), (0, 1, 0), (2, 1, 1), 1),
])
def test_transposed_convolution_is_the_adjoint(shape, kernel, strides, padding, out_pad, dil, groups):
    x, w = RNG.standard_normal(shape), RNG.standard_normal(kernel)
    y = conv_transpose_ncx_python(x, w, strides, padding, out_pad, dil, groups)
    nd = len(shape) - 2
    want = [(shape[2 + a] - 1) * strides[a] + (kernel[2 + a] - 1) * dil[a] + 1 - padding[a] - padding[nd + a]
            + out_pad[a] for a in range(nd)]
    assert y.shape == (shape[0], kernel[1] * groups, *want)
    # the same array read as a convolution kernel (its I axis now the output's, O the input's) maps y's space back
    # onto x's; output_padding cells are read by nobody
    probe = RNG.standard_normal(y.shape)
    tail = [padding[nd + a] - out_pad[a] for a in range(nd)]
    # a negative tail: y's last cells lie past everything scattered (zeros), and the convolution leaves them out
    view = probe[(slice(None), slice(None), *[slice(None, t if t < 0 else None) for t in tail])]
    back = conv_ncx_python(view, w, strides, (*padding[:nd], *[max(t, 0) for t in tail]), dil, groups)
    assert back.shape == x.shape
    np.testing.assert_allclose(np.vdot(y, probe), np.vdot(x, back), rtol=1e-9)


def test_named_transposed_convolutions_agree_across_layouts():
    x, w = RNG.standard_normal((1, 3, 4, 5)).astype("float32"), RNG.standard_normal((3, 2, 3, 3)).astype("float32")
    nchw = ref.conv2d_transpose_nchw_python(x, w, 2, 1, (1, 0))
    assert nchw.shape == (1, 2, 8, 9)
    for fmt, perm in {"IOHW": (0, 1, 2, 3), "OIHW": (1, 0, 2, 3), "HWIO": (2, 3, 0, 1), "HWOI": (2, 3, 1, 0)}.items():
        nhwc = ref.conv2d_transpose_nhwc_python(x.transpose(0, 2, 3, 1), w.transpose(perm), fmt, 2, 1, (1, 0))
        np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), nchw, rtol=1e-6)
    with pytest.raises(OpAttributeInvalid, match="weight_format"):
        ref.conv2d_transpose_nhwc_python(x, w, "OHWI", 1, 0)
    np.testing.assert_allclose(ref.conv1d_transpose_ncw_python(x[:, :, 0], w[:, :, 0], 2, 1, 1),
                               conv_transpose_ncx_python(x[:, :, 0], w[:, :, 0], (2,), (1, 1), (1,)))
    x5, w5 = RNG.standard_normal((1, 2, 2, 3, 2)), RNG.standard_normal((2, 4, 2, 2, 2))
    grouped = ref.conv3d_transpose_ncdhw_python(x5, w5, 1, 0, 0, groups=2)
    assert grouped.shape == (1, 8, 3, 4, 3)
    np.testing.assert_allclose(grouped[:, 4:], conv_transpose_ncx_python(x5[:, 1:], w5[1:], 1, 0), rtol=1e-12)
