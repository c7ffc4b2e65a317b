"""kiln as an ONNX backend (``onnx.backend.base.Backend``), so the official ONNX backend tests can run against it.

``prepare`` converts the model once with :func:`kiln.relay.frontend.from_onnx` (parameters frozen, graph inputs left
as inputs: nothing is rebound to a constant) and compiles it once, as a user would: with ``relay.build`` for the
graph executor when the module is static, with ``relay.vm.compile`` for the Relay VM when it needs it (a dimension
known only at run time, an ``If`` on a run-time condition, a loop written as recursion). The returned
:class:`KilnBackendRep` runs that one executable on every input it is given (a list in graph order, a dict by name,
or one array) and returns the outputs as a named tuple of numpy arrays.

Examples
--------
>>> import kiln.backend.onnx as backend            # doctest: +SKIP
>>> rep = backend.prepare(model, "CPU")             # doctest: +SKIP
>>> outputs = rep.run([x])                          # doctest: +SKIP
"""

import numpy as np
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from ..contrib.graph_executor import GraphModule
from ..error import KilnError, RuntimeArgumentError
from ..ir.transform import PassContext
from ..ir.type import has_dynamic_shape
from ..relay.backend import vm as relay_vm
from ..relay.build import build, check_graph_executable
from ..relay.frontend import from_onnx
from ..runtime.device import cpu
from ..runtime.vm import VirtualMachine

#: the target every model is compiled for
TARGET = "llvm"


def needs_vm(mod) -> bool:
    """Whether the graph executor cannot run ``mod`` (``relay.build`` would refuse it)."""
    if len(mod.functions) > 1:  # global functions: loops written as recursion
        return True
    main = mod["main"]
    if any(has_dynamic_shape(p.checked_type) for p in main.params) or has_dynamic_shape(main.body.checked_type):
        return True
    try:
        check_graph_executable(mod)
    except KilnError:
        return True
    return False


def _compile(mod, params):
    """The callable that runs ``mod``: ``f(*inputs) -> NDArray or tuple of NDArrays``, compiled once."""
    dev = cpu(0)
    with PassContext(opt_level=3):
        if needs_vm(mod):
            vm = VirtualMachine(relay_vm.compile(mod, TARGET, params=params), dev)
            return lambda *args: vm.invoke("main", *args)
        lib = build(mod, target=TARGET, params=params)
    graph = GraphModule(lib["default"](dev))
    names = [p.name_hint for p in mod["main"].params]

    def run(*args):
        for name, value in zip(names, args, strict=True):
            if graph.get_input_index(name) >= 0:  # an input the optimized graph no longer reads is not one
                graph.set_input(name, value)
        graph.run()
        outs = tuple(graph.get_output(i) for i in range(graph.get_num_outputs()))
        return outs[0] if len(outs) == 1 else outs

    return run


def _numpy(value) -> list:
    """The numpy arrays of an executor's result (an NDArray or a nested tuple of them), flattened."""
    if isinstance(value, tuple | list):
        return [a for v in value for a in _numpy(v)]
    return [value.numpy()]


class KilnBackendRep(BackendRep):
    """A prepared model (converted and compiled once): call :meth:`run` with its inputs."""

    def __init__(self, model):
        initializers = {init.name for init in model.graph.initializer}
        self.model = model
        self.input_names = [i.name for i in model.graph.input if i.name not in initializers]
        self.output_names = [o.name for o in model.graph.output]
        self.mod, params = from_onnx(model, freeze_params=True)
        self.uses_vm = needs_vm(self.mod)
        self._executable = _compile(self.mod, params)

    def _ordered(self, inputs):
        if isinstance(inputs, dict):
            missing = [n for n in self.input_names if n not in inputs]
            if missing:
                raise RuntimeArgumentError(f"KilnBackendRep.run: missing inputs {', '.join(missing)}")
            return [inputs[n] for n in self.input_names]
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        inputs = list(inputs)
        if len(inputs) != len(self.input_names):
            raise RuntimeArgumentError(f"KilnBackendRep.run: the model takes {len(self.input_names)} inputs "
                                       f"({', '.join(self.input_names)}), got {len(inputs)}")
        return inputs

    def run(self, inputs, **kwargs):
        """Run the model on ``inputs``; returns the outputs as a named tuple of numpy arrays."""
        args = [np.asarray(a) for a in self._ordered(inputs)]
        outs = _numpy(self._executable(*args))
        return namedtupledict("Outputs", self.output_names)(*outs)


class KilnBackend(Backend):
    """The ONNX backend API over kiln (CPU only)."""

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        """Convert and optimize ``model``; returns a :class:`KilnBackendRep`."""
        if not cls.supports_device(device):
            raise KilnError(f"kiln's ONNX backend runs on CPU only, not {device!r}")
        return KilnBackendRep(model)

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        """``prepare(model, device).run(inputs)``."""
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, **kwargs):
        """Run a single node on ``inputs`` (a list of arrays): wraps it in a one-node model."""
        import onnx
        from onnx import helper

        opset = kwargs.get("opset_version")
        names = [n for n in node.input if n]
        infos = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.asarray(a).dtype),
                                               np.asarray(a).shape) for n, a in zip(names, inputs, strict=True)]
        outs = [onnx.ValueInfoProto(name=n) for n in node.output if n]  # types left to the node
        graph = helper.make_graph([node], "run_node", infos, outs)
        imports = [helper.make_opsetid("", opset)] if opset else None
        model = helper.make_model(graph, opset_imports=imports)
        return cls.run_model(model, [np.asarray(a) for a in inputs], device)

    @classmethod
    def supports_device(cls, device):
        """True for CPU devices."""
        try:
            return Device(device).type == DeviceType.CPU
        except (AttributeError, ValueError):
            return False


prepare = KilnBackend.prepare
run_model = KilnBackend.run_model
run_node = KilnBackend.run_node
supports_device = KilnBackend.supports_device

__all__ = ["KilnBackend", "KilnBackendRep", "prepare", "run_model", "run_node", "supports_device"]
