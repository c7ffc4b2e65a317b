"""topi.x86.conv2d_NCHWc, TVM's entry point: padding forms resolved against the dilated window, groups read from
the blocked shapes; checked against the NCHW numpy reference."""

import numpy as np
import pytest

import kiln
from kiln import te, topi
from kiln.topi import testing


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
