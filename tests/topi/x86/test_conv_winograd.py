"""kiln/topi/x86/conv_winograd.py: the Winograd groups get their schedule by their anchor's tag; the constant
matrices stay buffers (not select chains inlined into the loops), and the results, with a fused consumer, are the
convolution's on both targets."""

import numpy as np
import pytest

import kiln
from kiln import te, topi
from kiln.topi.nn import conv_winograd
from kiln.topi.testing import conv2d_nchw_python, conv3d_ncdhw_python
from kiln.topi.testing.winograd import conv3d_winograd_weight_transform_python
from kiln.topi.x86.dispatch import SCHEDULE_BY_TAG, anchor_tag, schedule_auto

from ...target.conftest import TARGETS

RNG = np.random.default_rng(4)


@pytest.mark.parametrize("target", TARGETS)
def test_conv2d_group(target):
    x, w = RNG.standard_normal((2, 6, 10, 9)).astype("float32"), RNG.standard_normal((5, 6, 3, 3)).astype("float32")
    a, k = te.placeholder(x.shape, name="a"), te.placeholder(w.shape, name="k")
    out = topi.nn.relu(conv_winograd.conv2d_winograd_nchw(a, k, 1, 1, 1, "float32", tile_size=4))
    assert SCHEDULE_BY_TAG[anchor_tag([out])].__name__ == "schedule_winograd"
    s = schedule_auto([out], target)
    roots = {st.op.name for st in s.stages if st.attach_type == "root"}
    assert {"A", "B", "G", "data_pack0", "data_pack", "bgemm", "inverse0", "inverse"} <= roots
    func = kiln.build(s, [a, k, out], target)
    got = kiln.nd.empty((2, 5, 10, 9), "float32")
    func(kiln.nd.array(x), kiln.nd.array(w), got)
    np.testing.assert_allclose(got.numpy(), np.maximum(conv2d_nchw_python(x, w, 1, 1), 0), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", TARGETS)
def test_conv3d_group(target):
    x, w = RNG.standard_normal((1, 3, 5, 6, 7)).astype("float32"), RNG.standard_normal((2, 3, 3, 3, 3)).astype(
        "float32")
    a, u = te.placeholder(x.shape, name="a"), te.placeholder((4, 4, 4, 2, 3), name="u")
    out = conv_winograd.conv3d_winograd_without_weight_transform(a, u, 1, (1, 1, 1), 1, "float32", 2, (3, 3, 3))
    func = kiln.build(schedule_auto([out], target), [a, u, out], target)
    got = kiln.nd.empty((1, 2, 5, 6, 7), "float32")
    func(kiln.nd.array(x), kiln.nd.array(conv3d_winograd_weight_transform_python(w, 2)), got)
    np.testing.assert_allclose(got.numpy(), conv3d_ncdhw_python(x, w, 1, 1), rtol=1e-3, atol=1e-3)
