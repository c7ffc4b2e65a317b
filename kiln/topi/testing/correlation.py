"""numpy reference of FlowNet's correlation layer (TVM's ``correlation_nchw_python``).

Output channel ``q`` is a displacement ``(dy, dx)`` of the grid ``-radius..radius`` (times ``stride2``) with
``radius = max_displacement // stride2``; output pixel ``(i, j)`` compares the ``kernel_size`` square of the padded
``data1`` whose corner is ``(i * stride1 + max_displacement, j * stride1 + max_displacement)`` with the same square of
the padded ``data2`` moved by the displacement: the mean over the square and the channels of their product (or of
their absolute difference). The output has ``ceil((size + 2 * padding - 2 * border) / stride1)`` pixels per axis,
``border = max_displacement + (kernel_size - 1) // 2``, as the operator does.

Computed one displacement and kernel tap at a time over strided views of every output pixel at once, unlike the
reference interpreter's pixel loops.
"""

import numpy as np

from ...error import OpAttributeInvalid

__all__ = ["correlation_nchw_python"]


def correlation_nchw_python(data1, data2, kernel_size, max_displacement, stride1, stride2, padding, is_multiply):
    """Correlation of two NCHW arrays of one shape (see the module docstring).

    Returns
    -------
    out : numpy.ndarray
        ``(N, (2 * radius + 1) ** 2, out_height, out_width)`` in ``data1``'s dtype.
    """
    if data1.shape != data2.shape or data1.ndim != 4 or kernel_size % 2 == 0:
        raise OpAttributeInvalid(f"topi.testing: correlation needs two NCHW arrays of one shape and an odd kernel, "
                                 f"got {data1.shape}, {data2.shape} and kernel_size {kernel_size}")
    n, c, h, w = data1.shape
    pads = ((0, 0), (0, 0), (padding, padding), (padding, padding))
    a, b = np.pad(data1.astype("float64"), pads), np.pad(data2.astype("float64"), pads)
    border = max_displacement + (kernel_size - 1) // 2
    out_h = -(-(h + 2 * padding - 2 * border) // stride1)
    out_w = -(-(w + 2 * padding - 2 * border) // stride1)
    radius = max_displacement // stride2
    grid = 2 * radius + 1

    def view(x, top, left):
        return x[:, :, top:top + stride1 * (out_h - 1) + 1:stride1, left:left + stride1 * (out_w - 1) + 1:stride1]

    out = np.zeros((n, grid * grid, out_h, out_w))
    for q in range(grid * grid):
        dy, dx = (q // grid - radius) * stride2, (q % grid - radius) * stride2
        for ky in range(kernel_size):
            for kx in range(kernel_size):
                top, left = max_displacement + ky, max_displacement + kx
                first, second = view(a, top, left), view(b, top + dy, left + dx)
                out[:, q] += (first * second if is_multiply else np.abs(first - second)).sum(axis=1)
    return (out / (kernel_size * kernel_size * c)).astype(data1.dtype)
