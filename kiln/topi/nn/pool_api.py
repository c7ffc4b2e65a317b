"""TVM's pooling entry points (``topi.nn.pool1d/pool3d/adaptive_pool/adaptive_pool3d/pool_grad``) over kiln's
axis-generic pooling computes (:mod:`kiln.topi.nn.poolnd`, :mod:`kiln.topi.nn.grad`): these only fix each
function's default layout and check the arguments a TVM user passes."""

from ...error import OpAttributeInvalid
from .grad import pool_grad_nchw
from .poolnd import adaptive_pool as _adaptive_pool
from .poolnd import pool as _pool

__all__ = ["pool1d", "pool3d", "adaptive_pool", "adaptive_pool3d", "pool_grad"]


def _check(values, n, what, fn):
    values = [values] * n if isinstance(values, int) else list(values)
    if len(values) != n:
        raise OpAttributeInvalid(f"topi.nn.{fn}: {what} needs {n} values, got {values}")
    return values


def pool1d(data, kernel, stride, dilation, padding, pool_type, ceil_mode=False, layout="NCW",
           count_include_pad=True):
    """Max or average pooling over the W axis of ``layout``; ``padding`` is ``(before, after)``.

    Returns
    -------
    out : te.Tensor
    """
    return _pool(data, _check(kernel, 1, "kernel", "pool1d"), _check(stride, 1, "stride", "pool1d"),
                 _check(dilation, 1, "dilation", "pool1d"), _check(padding, 2, "padding", "pool1d"), pool_type,
                 ceil_mode, layout, count_include_pad)


def pool3d(data, kernel, stride, dilation, padding, pool_type, ceil_mode=False, layout="NCDHW",
           count_include_pad=True):
    """Max or average pooling over the D, H and W axes of ``layout``; ``padding`` is
    ``(front, top, left, back, bottom, right)``.

    Returns
    -------
    out : te.Tensor
    """
    return _pool(data, _check(kernel, 3, "kernel", "pool3d"), _check(stride, 3, "stride", "pool3d"),
                 _check(dilation, 3, "dilation", "pool3d"), _check(padding, 6, "padding", "pool3d"), pool_type,
                 ceil_mode, layout, count_include_pad)


def adaptive_pool(data, output_size, pool_type, layout="NCHW"):
    """Adaptive max or average pooling of the H and W axes of ``layout`` to ``output_size`` ``(oh, ow)``."""
    return _adaptive_pool(data, _check(output_size, 2, "output_size", "adaptive_pool"), pool_type, layout)


def adaptive_pool3d(data, output_size, pool_type, layout="NCDHW"):
    """Adaptive max or average pooling of the D, H and W axes of ``layout`` to ``output_size``."""
    return _adaptive_pool(data, _check(output_size, 3, "output_size", "adaptive_pool3d"), pool_type, layout)


def pool_grad(grads, data, kernel, stride, padding, pool_type, ceil_mode=False, count_include_pad=True,
              layout="NCHW"):
    """The gradient of 2-D ``pool_type`` pooling of ``data`` given the gradient ``grads`` of its output.

    Returns
    -------
    grad : te.Tensor
        Of ``data``'s shape.
    """
    if layout != "NCHW":
        raise OpAttributeInvalid(f"topi.nn.pool_grad: only the NCHW layout is supported, got {layout}")
    return pool_grad_nchw(grads, data, _check(kernel, 2, "kernel", "pool_grad"),
                          _check(stride, 2, "stride", "pool_grad"), _check(padding, 4, "padding", "pool_grad"),
                          pool_type, ceil_mode, count_include_pad)
