"""Winograd convolution: tile-size choice and transform matrices (TVM's ``topi.nn.winograd_util``).

F(m, r) computes ``m`` outputs of an ``r``-tap filter from ``m + r - 1`` inputs with ``m + r - 1`` multiplications
(Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2015). Along each spatial axis::

    Y = A^T [ (G g) * (B^T d) ]

with ``d`` an input tile of ``alpha = m + r - 1`` points, ``g`` the ``r``-tap filter and ``*`` element-wise; in
2-D, ``Y = A^T [(G g G^T) * (B^T d B)] A``.

How the matrices are built (Cook-Toom): the correlation of ``d`` with ``g`` is a product of polynomials, which is
evaluated at ``alpha - 1`` finite points ``a_i`` and at infinity, multiplied pointwise and interpolated back. With
``M(x) = prod_k (x - a_k)`` and ``M_i(x) = M(x) / (x - a_i)``:

* ``A[i, j] = a_i ** j`` (rows: points, columns: output powers), the last row ``e_{m-1}`` (the point at infinity);
* ``G[i, j] = a_i ** j / M_i(a_i)``, the last row ``e_{r-1}``;
* column ``i`` of ``B`` holds the coefficients of ``M_i`` (lowest power first), the last column those of ``M``.

The points are the ones Barabasz et al. ("Error Analysis and Improving the Accuracy of Winograd Convolution for Deep
Neural Networks", 2018) found most accurate for each count, which TVM uses too; the first point's sign convention is
TVM's (``G``'s row and ``B``'s column flipped when ``M_0(a_0) < 0``), so transformed weights equal TVM's. The
matrices are computed exactly in rational arithmetic, then rounded once to float64.
"""

from fractions import Fraction
from functools import cache

import numpy as np

from ...error import OpAttributeInvalid
from ..utils import const_matrix, get_const_tuple

__all__ = ["infer_tile_size", "interpolation_points", "winograd_matrices", "winograd_transform_matrices"]

# The finite interpolation points for alpha - 1 = 3 .. 13 of them (tile sizes 2..8 with kernels 3..7).
_POINTS = {
    3: "0 -1 1",
    4: "0 -1 1 1/2",
    5: "0 -1 1 1/2 -2",
    6: "0 -1 1 1/2 -2 -1/2",
    7: "0 -1 1 1/2 -1/2 2 -2",
    8: "0 -1 1 1/2 -1/2 2 -2 -1/4",
    9: "0 -1 1 1/2 -1/2 2 -2 -1/4 4",
    10: "0 -1 1 1/2 -1/2 2 -2 -1/4 3/4 -4/3",
    11: "0 -1 1 1/2 -1/2 2 -2 -1/4 4 3/4 -4/3",
    12: "0 -1 1 1/2 -1/2 2 -2 -1/4 4 3/4 -4/3 1/4",
    13: "0 -1 1 1/2 -1/2 2 -2 -1/4 4 1/4 -3/4 4/3 -4",
}


def interpolation_points(count):
    """The ``count`` finite Cook-Toom points (exact fractions) for a transform of ``count + 1`` points."""
    if count not in _POINTS:
        raise OpAttributeInvalid(f"winograd: no interpolation points for {count} points (tile_size + kernel_size - 2 "
                                 f"must be in 3..13)")
    return [Fraction(p) for p in _POINTS[count].split()]


def _poly_mul_linear(coefs, root):
    """Coefficients (lowest power first) of ``coefs(x) * (x - root)``."""
    out = [Fraction(0)] * (len(coefs) + 1)
    for k, c in enumerate(coefs):
        out[k + 1] += c
        out[k] -= c * root
    return out


def _poly_with_roots(roots):
    coefs = [Fraction(1)]
    for root in roots:
        coefs = _poly_mul_linear(coefs, root)
    return coefs


@cache
def _exact_matrices(tile_size, kernel_size):
    alpha = tile_size + kernel_size - 1
    points = interpolation_points(alpha - 1)
    n = len(points)
    a_mat = [[p ** j for j in range(tile_size)] for p in points] + [[Fraction(int(j == tile_size - 1))
                                                                     for j in range(tile_size)]]
    g_mat, b_cols = [], []
    for i, p in enumerate(points):
        others = points[:i] + points[i + 1:]
        scale = Fraction(1)
        for q in others:
            scale *= p - q
        sign = -1 if i == 0 and scale < 0 else 1
        g_mat.append([p ** j / (sign * scale) for j in range(kernel_size)])
        b_cols.append([sign * c for c in _poly_with_roots(others)] + [Fraction(0)])
    g_mat.append([Fraction(int(j == kernel_size - 1)) for j in range(kernel_size)])
    b_cols.append(_poly_with_roots(points))
    b_mat = [[b_cols[j][i] for j in range(n + 1)] for i in range(n + 1)]
    return a_mat, b_mat, g_mat


def winograd_matrices(tile_size, kernel_size):
    """The float64 Winograd matrices ``(A, B, G)`` of F(``tile_size``, ``kernel_size``).

    Parameters
    ----------
    tile_size : int
        Outputs per tile ``m``, 2..8.
    kernel_size : int
        Filter taps ``r``, 3..7.

    Returns
    -------
    A : numpy.ndarray
        ``(alpha, m)``.
    B : numpy.ndarray
        ``(alpha, alpha)``.
    G : numpy.ndarray
        ``(alpha, r)``; ``alpha = m + r - 1``.
    """
    if not isinstance(tile_size, int) or not 1 < tile_size < 9:
        raise OpAttributeInvalid(f"winograd: unsupported tile size {tile_size} (must be 2..8)")
    if not isinstance(kernel_size, int) or not 2 < kernel_size < 8:
        raise OpAttributeInvalid(f"winograd: unsupported kernel size {kernel_size} (must be 3..7)")
    return tuple(np.array([[float(v) for v in row] for row in m], dtype="float64")
                 for m in _exact_matrices(tile_size, kernel_size))


def winograd_transform_matrices(tile_size, kernel_size, out_dtype):
    """``(A, B, G)`` of :func:`winograd_matrices` as constant ``te`` tensors of ``out_dtype`` (TVM's signature)."""
    a_mat, b_mat, g_mat = winograd_matrices(tile_size, kernel_size)
    return (const_matrix(a_mat.astype(out_dtype), "A"), const_matrix(b_mat.astype(out_dtype), "B"),
            const_matrix(g_mat.astype(out_dtype), "G"))


def infer_tile_size(data, kernel=None, layout="NCHW"):
    """The Winograd output tile ``m`` TVM picks for a convolution of ``data``: 4 when the height is a multiple of
    8 (tiles then cover it without a ragged edge), 2 otherwise.

    Parameters
    ----------
    data : te.Tensor or numpy.ndarray
        The convolution's input (only its shape is read), of rank 4 (2-D) or 5 (3-D).
    kernel : te.Tensor or numpy.ndarray, optional
        Unused; kept for TVM's signature.
    layout : str
        ``"NCHW"``/``"NCDHW"`` or ``"NHWC"``/``"NDHWC"``: where the height axis is.

    Returns
    -------
    tile_size : int
    """
    shape = get_const_tuple(data.shape)
    height = shape[layout.upper().index("H")] if "H" in layout.upper() and len(shape) == len(layout) \
        else shape[-2]
    return 4 if isinstance(height, int) and height % 8 == 0 else 2
