"""kiln.runtime: tensors, devices, packed functions and (compiled) modules."""

from . import ndarray
from .device import Device, cpu, device
from .ndarray import NDArray
from .packed_func import PackedFunc, get_global_func, list_global_func_names, register_func
from .module import Module, load_module
from .params import load_param_dict, save_param_dict
from . import graph_executor, graph_executor_factory  # noqa: F401,E402  (registers the factory's loader)
