"""The graph executor factory (TVM's ``GraphExecutorFactoryModule``): what ``relay.build`` returns.

It holds the graph JSON, the parameters and the compiled library (its one imported module).
``factory["default"](dev)`` (the module name given to ``relay.build``) creates a
:class:`~kiln.runtime.graph_executor.GraphExecutor` and sets the parameters on it. ``export_library(path)`` writes
one shared library: the kernels linked natively and the factory serialized into the library's blob
(:meth:`save_to_bytes`); ``kiln.runtime.load_module(path)`` rebuilds the factory through the registered loader
``"runtime.module.loadbinary_GraphExecutorFactory"`` and attaches the loaded library to it.

Serialized form: ``b"KILNGEF1"``, a ``uint64`` header length, a UTF-8 JSON header ``{"graph_json", "module_name"}``,
then the parameters in the format of :mod:`kiln.runtime.params`.

Unpacking the factory (``graph_json, lib, params = relay.build(...)``) works as TVM's deprecated form.
"""

import json
import struct
import warnings

from ..error import KilnError
from .device import Device
from .device import device as make_device
from .graph_executor import GraphExecutor
from .module import Module
from .ndarray import NDArray
from .ndarray import array as nd_array
from .packed_func import PackedFunc, register_func
from .params import load_param_dict, save_param_dict

__all__ = ["GraphExecutorFactoryModule"]

_MAGIC = b"KILNGEF1"


class GraphExecutorFactoryModule(Module):
    """A built model: graph, library and parameters (see the module docstring).

    Parameters
    ----------
    graph_json : str
        The graph.
    lib : Module or None
        The kernels.
    params : dict of str to NDArray
        The parameters (``p0`` ...).
    module_name : str
        The name of the executor-creating function (``"default"``).
    ir_mod : IRModule, optional
        The Relay module it was built from (``relay.build`` sets it; not exported).
    target : Target, optional
        The target it was built for.
    """

    type_key = "GraphExecutorFactory"

    def __init__(self, graph_json, lib, params, module_name="default", ir_mod=None, target=None):
        super().__init__()
        self.graph_json = graph_json
        self.params = {k: v if isinstance(v, NDArray) else nd_array(v) for k, v in (params or {}).items()}
        self.module_name = module_name
        self.libmod_name = module_name
        self.ir_mod = ir_mod
        self.target = target
        self._iter = 0
        if lib is not None:
            self.import_module(lib)

    # ---- TVM's accessors
    @property
    def lib(self):
        """The library of kernels (None for a graph without kernels)."""
        return self.imported_modules[0] if self.imported_modules else None

    def get_lib(self):
        """The library of kernels, a runtime Module (``lib.get_lib().export_library(path)`` writes it alone)."""
        return self.lib

    def get_params(self) -> dict:
        """The parameters, ``{name: NDArray}``."""
        return dict(self.params)

    def get_graph_json(self) -> str:
        """The graph JSON."""
        return self.graph_json

    def get_executor_config(self) -> str:
        """The graph JSON (TVM's name shared with the other executors)."""
        return self.graph_json

    def get_module_name(self) -> str:
        return self.module_name

    def create(self, *devices) -> GraphExecutor:
        """A new executor on the first of ``devices`` with the parameters set."""
        if not devices:
            raise KilnError(f"{self.module_name}: pass the device to run on, as lib[{self.module_name!r}](dev)")
        dev = devices[0]
        if isinstance(dev, list | tuple):
            dev = dev[0]
        dev = dev if isinstance(dev, Device) else make_device(dev)
        executor = GraphExecutor(self.graph_json, self.lib, dev)
        executor.set_params(self.params)
        return executor

    # ---- runtime Module interface
    def get_own_function(self, name):
        if name == self.module_name:
            return PackedFunc(self.create, name)
        table = {"get_graph_json": self.get_graph_json, "get_params": self.get_params,
                 "get_lib": self.get_lib, "get_executor_config": self.get_executor_config,
                 "list_module_names": lambda: [self.module_name]}
        func = table.get(name)
        return None if func is None else PackedFunc(func, name)

    def own_function_names(self) -> list:
        return [self.module_name, "get_graph_json", "get_params", "get_lib", "get_executor_config",
                "list_module_names"]

    def save_to_bytes(self) -> bytes:
        header = json.dumps({"graph_json": self.graph_json, "module_name": self.module_name}).encode()
        return _MAGIC + struct.pack("<Q", len(header)) + header + save_param_dict(self.params)

    def get_source(self, fmt=""):
        return self.lib.get_source(fmt) if self.lib is not None else ""

    # ---- TVM's deprecated unpacking: graph_json, lib, params = relay.build(...)
    def __iter__(self):
        warnings.warn("unpacking relay.build's result into (graph_json, lib, params) is deprecated, as in TVM; "
                      "use lib['default'](dev)", DeprecationWarning, stacklevel=2)
        self._iter = 0
        return self

    def __next__(self):
        if self._iter > 2:
            raise StopIteration
        value = (self.graph_json, self.lib, self.params)[self._iter]
        self._iter += 1
        return value

    def __repr__(self):
        return f"GraphExecutorFactoryModule({self.module_name!r}, {len(self.params)} params, lib={self.lib!r})"


@register_func("runtime.module.loadbinary_GraphExecutorFactory")
def _load_factory(data: bytes) -> GraphExecutorFactoryModule:
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 8:
        raise KilnError("load_module: the graph executor factory in the library is corrupt (bad magic)")
    (size,) = struct.unpack_from("<Q", data, len(_MAGIC))
    start = len(_MAGIC) + 8
    try:
        header = json.loads(data[start:start + size].decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise KilnError(f"load_module: the graph executor factory header is corrupt ({exc})") from exc
    params = load_param_dict(data[start + size:])
    return GraphExecutorFactoryModule(header["graph_json"], None, params, header["module_name"])


@register_func("tvm.graph_executor_factory.create")
def _create_factory(graph_json, lib, module_name="default", *params_flat):
    """TVM's ``tvm.graph_executor_factory.create(graph_json, lib, name, *(name, array)...)``."""
    if len(params_flat) % 2:
        raise KilnError(f"tvm.graph_executor_factory.create: the parameters must come as name, array pairs; got "
                        f"{len(params_flat)} values")
    params = dict(zip(params_flat[::2], params_flat[1::2], strict=True))
    return GraphExecutorFactoryModule(graph_json, lib, params, module_name)
