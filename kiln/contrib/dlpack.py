"""Calling kiln functions with other frameworks' tensors through DLPack (TVM's ``tvm.contrib.dlpack``): each tensor
argument is wrapped as a ``kiln.nd.NDArray`` sharing its memory, so the function writes into the caller's tensors."""

from ..error import KilnError
from ..runtime import ndarray

__all__ = ["convert_func", "to_pytorch_func"]


def convert_func(tvm_func, tensor_type, to_dlpack_func):
    """A function calling ``tvm_func`` with every argument of ``tensor_type`` converted to an NDArray.

    Parameters
    ----------
    tvm_func : callable
        A built function taking NDArrays.
    tensor_type : type
        The other framework's tensor class.
    to_dlpack_func : callable
        That framework's tensor -> DLPack capsule function.
    """
    if not callable(tvm_func):
        raise KilnError(f"convert_func: {tvm_func!r} is not callable")

    def _wrapper(*args):
        args = tuple(ndarray.from_dlpack(to_dlpack_func(a)) if isinstance(a, tensor_type) else a for a in args)
        return tvm_func(*args)

    return _wrapper


def to_pytorch_func(tvm_func):
    """A function calling ``tvm_func`` with PyTorch tensors (needs torch; ImportError without it)."""
    import torch
    import torch.utils.dlpack

    return convert_func(tvm_func, torch.Tensor, torch.utils.dlpack.to_dlpack)
