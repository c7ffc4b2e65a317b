"""Gradients of convolution and pooling in numpy, for tests (TVM's ``tvm.topi.testing.pool_grad_nchw`` and
``conv2d_backward_weight_python``).

The weight gradient of a convolution sums, for each kernel offset, the output gradient times the input window that
offset saw. For pooling, each output position's gradient is spread over its window of the (padded) input: all of it
to the window's first maximum for max pooling, an equal share to every element counted by the average for average
pooling. The padded border is dropped at the end.
"""

import numpy as np


def pool_grad_nchw(a_np, out_grad_np, pool_size, strides, padding, pool_type, ceil_mode, count_include_pad=True):
    """The gradient of ``pool_type`` (``"max"`` or ``"avg"``) pooling of ``a_np`` (NCHW) given the output gradient
    ``out_grad_np``; ``padding`` is ``(top, left, bottom, right)``. With ``count_include_pad`` an average divides by
    the window's cells inside the padded input, else by those inside the input (as the forward pooling does)."""
    n, c, ih, iw = a_np.shape
    kh, kw = pool_size
    sh, sw = strides
    top, left, bottom, right = padding
    _, _, oh, ow = out_grad_np.shape
    # room for ceil-mode windows that run past the bottom/right padding
    ph, pw = max(ih + top + bottom, (oh - 1) * sh + kh), max(iw + left + right, (ow - 1) * sw + kw)
    fill = -np.inf if pool_type == "max" else 0.0
    padded = np.full((n, c, ph, pw), fill)
    padded[:, :, top:top + ih, left:left + iw] = a_np
    inside = np.zeros((ph, pw))  # 1 where a cell counts in an average's divisor (ceil-mode cells never do)
    if count_include_pad:
        inside[:ih + top + bottom, :iw + left + right] = 1
    else:
        inside[top:top + ih, left:left + iw] = 1
    grad = np.zeros((n, c, ph, pw))
    for i in range(oh):
        for j in range(ow):
            rows, cols = slice(i * sh, i * sh + kh), slice(j * sw, j * sw + kw)
            g = out_grad_np[:, :, i, j]
            if pool_type == "max":
                window = padded[:, :, rows, cols].reshape(n, c, -1)
                first = np.argmax(window, axis=2)
                r, q = np.unravel_index(first, (kh, kw))
                nn, cc = np.meshgrid(range(n), range(c), indexing="ij")
                grad[nn, cc, i * sh + r, j * sw + q] += g
            elif pool_type == "avg":
                count = np.sum(inside[rows, cols])
                grad[:, :, rows, cols] += (g / max(count, 1))[:, :, None, None]
            else:
                raise ValueError(f"pool_grad_nchw: pool_type must be 'max' or 'avg', got {pool_type!r}")
    return grad[:, :, top:top + ih, left:left + iw]


def conv2d_backward_weight_python(dy_np, x_np, kernel_size, stride, padding, groups=1, channels=None):
    """The gradient of ``conv2d(x, w)`` (NCHW, OIHW, ``groups`` groups) with respect to ``w``, given the output
    gradient ``dy_np``; ``padding`` is ``(pad_h, pad_w)`` or ``(top, left, bottom, right)``."""
    kh, kw = kernel_size
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    pads = (padding,) * 4 if isinstance(padding, int) else tuple(padding)
    top, left = pads[0], pads[1]
    bottom, right = (pads[0], pads[1]) if len(pads) == 2 else (pads[2], pads[3])
    n, out_channels, oh, ow = dy_np.shape
    _, in_channels, _, _ = x_np.shape
    if channels is not None and channels != out_channels:
        raise ValueError(f"conv2d_backward_weight_python: channels {channels} but dy has {out_channels}")
    per_group_in, per_group_out = in_channels // groups, out_channels // groups
    xp = np.pad(x_np.astype("float64"), ((0, 0), (0, 0), (top, bottom), (left, right)))
    dw = np.zeros((out_channels, per_group_in, kh, kw))
    for g in range(groups):
        dy_g = dy_np[:, g * per_group_out:(g + 1) * per_group_out].astype("float64")
        x_g = xp[:, g * per_group_in:(g + 1) * per_group_in]
        for r in range(kh):
            for q in range(kw):
                window = x_g[:, :, r:r + (oh - 1) * sh + 1:sh, q:q + (ow - 1) * sw + 1:sw]
                dw[g * per_group_out:(g + 1) * per_group_out, :, r, q] = np.einsum("noyx,ncyx->oc", dy_g, window)
    return dw.astype(dy_np.dtype)
