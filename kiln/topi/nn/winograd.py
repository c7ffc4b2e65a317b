"""Winograd convolution: tile-size choice and transform matrices (TVM's ``topi.nn.winograd_util``).

F(m, r) computes ``m`` outputs of an ``r``-tap filter from ``m + r - 1`` inputs with ``m + r - 1`` multiplications
(Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2015). Along each spatial axis::

    Y = A^T [ (G g G^T) * (B^T d B) ] A

with ``d`` an input tile of ``alpha = m + r - 1`` points, ``g`` the ``r``-tap filter and ``*`` element-wise.
"""

from ..utils import get_const_tuple

__all__ = ["infer_tile_size"]


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
