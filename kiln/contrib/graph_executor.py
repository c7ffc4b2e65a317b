"""``GraphModule``: TVM's Python wrapper over a graph executor module (``tvm.contrib.graph_executor``).

It calls the executor through its PackedFuncs (``module["set_input"]``, ``module["run"]`` ...), so it works on any
module providing them: one made by ``lib["default"](dev)`` from ``relay.build``, or from a library loaded back with
``kiln.runtime.load_module``.

Examples
--------
>>> m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))    # doctest: +SKIP
>>> m.set_input("data", x)                                          # doctest: +SKIP
>>> m.run()                                                         # doctest: +SKIP
>>> out = m.get_output(0).numpy()                                   # doctest: +SKIP
"""

import warnings

import numpy as np

from ..error import KilnError
from ..runtime.device import Device
from ..runtime.device import device as make_device
from ..runtime.module import BenchmarkResult, Module
from ..runtime.packed_func import get_global_func

__all__ = ["GraphModule", "create", "BenchmarkResult"]



def create(graph_json_str, libmod, device):
    """A :class:`GraphModule` running ``graph_json_str`` over the kernels of ``libmod`` (TVM's
    ``graph_executor.create``); on a device of an RPC session, ``libmod`` is a module loaded there
    (``remote.load_module``) and the executor runs in the server."""
    if isinstance(device, list | tuple):
        device = device[0]
    device = device if isinstance(device, Device) else make_device(device)
    if device.is_remote:  # an RPC session's device: the executor is created (and runs) in the server
        session = device._rpc_sess
        if session is None:
            raise KilnError(f"graph_executor.create: the RPC session of {device} is closed")
        return GraphModule(session.get_function("tvm.graph_executor.create")(graph_json_str, libmod, device))
    return GraphModule(get_global_func("tvm.graph_executor.create")(graph_json_str, libmod, device))


def _size(value) -> int:
    """The element count of an input value (0 for one that is not an array: set_input then names the problem)."""
    try:
        return int(np.prod(np.shape(value)))
    except ValueError:  # a ragged list
        return 0


class GraphModule:
    """Wrapper of a graph executor module (TVM's ``GraphModule``).

    Parameters
    ----------
    module : Module
        The executor, ``lib["default"](dev)``.

    Attributes
    ----------
    module : Module
        The wrapped executor.
    """

    def __init__(self, module):
        if not isinstance(module, Module) or "set_input" not in module:
            what = f"a {module.type_key} module" if isinstance(module, Module) else f"a {type(module).__name__}"
            raise KilnError(f"GraphModule wraps a graph executor module, as lib['default'](dev) creates, not {what}")
        self.module = module
        self._set_input = module["set_input"]
        self._run = module["run"]
        self._get_output = module["get_output"]
        self._get_input = module["get_input"]
        self._get_num_outputs = module["get_num_outputs"]
        self._get_input_index = module["get_input_index"]
        self._get_num_inputs = module["get_num_inputs"]
        self._load_params = module["load_params"]
        self._get_input_info = module["get_input_info"]

    def set_input(self, key=None, value=None, **params):
        """Set input ``key`` (name or index) to ``value``, and every ``name=array`` of ``params``.

        Names of ``params`` the graph lacks are skipped, as TVM does for weights (parameters given to
        ``relay.build`` became constants of the module), with a warning naming them.

        Raises
        ------
        KilnError
            When ``key`` is not an input, or a value is given without a key; RuntimeArgumentError when a shape
            or dtype differs.
        """
        if key is None and value is not None:  # TVM drops the value silently
            raise KilnError("set_input: a value was given without the input's name or index")
        if key is not None:
            if value is None:
                raise KilnError(f"set_input: no value given for input {key!r}")
            self._set_input(key, value)
        unknown = self._unknown(params)
        if unknown:
            warnings.warn(f"set_input: the graph has no input{'s' if len(unknown) > 1 else ''} named "
                          f"{', '.join(map(repr, unknown))}; skipped", stacklevel=2)
        # the largest arrays first, as TVM does (it matters for remote sessions, harmless here)
        for name in sorted(params, key=lambda k: -_size(params[k])):
            if name not in unknown:
                self._set_input(name, params[name])

    def _unknown(self, names) -> list:
        return [name for name in names if self._get_input_index(name) < 0]

    def set_input_zero_copy(self, key=None, value=None, **params):
        """As :meth:`set_input` (kiln copies)."""
        self.set_input(key, value, **params)

    def run(self, **input_dict):
        """Set the inputs given by name, then run the graph.

        Raises
        ------
        KilnError
            Naming a given name that is no input of the graph, or an input never set.
        """
        unknown = self._unknown(input_dict)
        if unknown:
            raise KilnError(f"run: the graph has no input{'s' if len(unknown) > 1 else ''} named "
                            f"{', '.join(map(repr, unknown))}; its inputs are "
                            f"{', '.join(map(repr, self._get_input_info()[0])) or 'none'}")
        if input_dict:
            self.set_input(**input_dict)
        self._run()

    def get_num_outputs(self) -> int:
        """The number of outputs."""
        return self._get_num_outputs()

    def get_num_inputs(self) -> int:
        """The number of inputs, parameters included (as TVM counts them)."""
        return self._get_num_inputs()

    def get_input(self, index, out=None):
        """Input ``index`` (or name); copied into ``out`` when given."""
        return self._get_input(index, out)

    def get_input_index(self, name) -> int:
        """The index of input ``name``, -1 when there is none."""
        return self._get_input_index(name)

    def get_input_info(self):
        """``(shape_dict, dtype_dict)`` of the inputs that are not parameters."""
        return self._get_input_info()

    def get_output(self, index, out=None):
        """Output ``index`` as a new NDArray, or copied into ``out`` (which is returned)."""
        return self._get_output(index, out)

    def load_params(self, params_bytes):
        """Set the parameters serialized by ``relay.save_param_dict``."""
        self._load_params(bytearray(params_bytes) if isinstance(params_bytes, memoryview) else params_bytes)

    def __getitem__(self, key):
        return self.module[key]

    def benchmark(self, device=None, func_name="run", repeat=5, number=5, min_repeat_ms=None,
                  limit_zero_time_iterations=100, end_to_end=False, cooldown_interval_ms=0, repeats_to_cooldown=1,
                  **kwargs):
        """Time ``func_name`` (TVM's ``GraphModule.benchmark``).

        Parameters
        ----------
        device : Device
            The device the model runs on.
        func_name : str
            The function timed (``"run"``).
        repeat : int
            How many measurements.
        number : int
            Runs per measurement (raised until a measurement lasts ``min_repeat_ms``).
        min_repeat_ms : float, optional
            The least duration of one measurement.
        end_to_end : bool
            Time setting the inputs given in ``kwargs`` and reading every output too.
        kwargs : arrays
            Inputs set (once, or in every run with ``end_to_end``).

        Returns
        -------
        BenchmarkResult
            ``mean``, ``median``, ``max``, ``min``, ``std`` in seconds and the raw ``results``.
        """
        min_repeat_ms = 0 if min_repeat_ms is None else min_repeat_ms
        if end_to_end:
            def step():
                if kwargs:
                    self.set_input(**kwargs)
                self._run()
                for i in range(self.get_num_outputs()):
                    self.get_output(i)

            timer = _FunctionModule(step).time_evaluator("step", device, number=number, repeat=repeat,
                                                         min_repeat_ms=min_repeat_ms)
            return timer()
        if kwargs:
            self.set_input(**kwargs)
        return self.module.time_evaluator(func_name, device, number=number, repeat=repeat,
                                          min_repeat_ms=min_repeat_ms)()


class _FunctionModule(Module):
    """A module holding one Python function, to time it with ``time_evaluator``."""

    type_key = "python_function"

    def __init__(self, func):
        super().__init__()
        self._func = func

    def get_own_function(self, name):
        from ..runtime.packed_func import PackedFunc

        return PackedFunc(self._func, name) if name == "step" else None

    def own_function_names(self) -> list:
        return ["step"]
