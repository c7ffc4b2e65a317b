"""kiln.runtime: tensors, devices, packed functions and (compiled) modules."""

from . import container, graph_executor, graph_executor_factory, ndarray, vm  # noqa: F401  (factory and vm register loaders)
from .convert import const, convert
from .device import Device, cpu, device, enabled
from .module import Module, load_module
from .ndarray import NDArray
from .object import Object
from .object_path import ObjectPath
from .packed_func import PackedFunc, get_global_func, list_global_func_names, register_func
from .params import load_param_dict, save_param_dict
