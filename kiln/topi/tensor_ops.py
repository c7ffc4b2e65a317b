"""Python arithmetic on tensors (TVM's ``topi/generic_op_impl.py``): ``A + B``, ``A * 2``, ``n - A`` and ``A / k``
on ``te.Tensor`` build the broadcasting computes :func:`kiln.topi.add`, ``subtract``, ``multiply`` and ``divide``
(tagged ``elemwise`` with a scalar, ``broadcast`` between tensors of different shapes). Installed on the Tensor
class when kiln.topi is imported, as TVM's topi overrides the generic operators of te."""

from ..te.tensor import Tensor
from .broadcast import add, divide, multiply, subtract

__all__ = ["install"]


def _bop(fn, reflected=False):
    if reflected:
        def op(self, other):
            return fn(other, self)
    else:
        def op(self, other):
            return fn(self, other)

    op.__doc__ = f"``{fn.__name__}`` of the operands, broadcasting (a te.Tensor)."
    return op


def install():
    """Give ``te.Tensor`` its arithmetic operators (idempotent)."""
    for name, fn in (("add", add), ("sub", subtract), ("mul", multiply), ("truediv", divide)):
        setattr(Tensor, f"__{name}__", _bop(fn))
        setattr(Tensor, f"__r{name}__", _bop(fn, reflected=True))


install()
