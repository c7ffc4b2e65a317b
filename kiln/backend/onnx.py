"""kiln as an ONNX backend (``onnx.backend.base.Backend``), so the official ONNX backend tests can run against it.

``prepare`` converts the model with :func:`kiln.relay.frontend.from_onnx` (parameters frozen), runs the standard
Relay pipeline without FuseOps under ``PassContext(opt_level=3)``, and returns a :class:`KilnBackendRep` whose
``run`` feeds the graph inputs (a list in graph order, a dict by name, or one array) and returns the outputs as a
named tuple of numpy arrays. How the optimized module executes is decided in one place, :func:`_executable`:
today the reference interpreter.

Examples
--------
>>> import kiln.backend.onnx as backend            # doctest: +SKIP
>>> rep = backend.prepare(model, "CPU")             # doctest: +SKIP
>>> outputs = rep.run([x])                          # doctest: +SKIP
"""

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from ..error import KilnError, RuntimeArgumentError
from ..ir.transform import PassContext
from ..relay import create_executor
from ..relay.frontend import from_onnx
from ..relay.frontend.onnx.common import StaticValueRequired
from ..relay.optimize import standard_pipeline
from ..runtime.device import cpu


def _executable(mod):
    """The callable that runs an optimized module: ``f(*inputs) -> NDArray or tuple of NDArrays``."""
    return create_executor("debug", mod=mod, device=cpu(0)).evaluate()


def _compile(model):
    """Convert, optimize and make executable; returns ``(mod, callable)``."""
    mod, _ = from_onnx(model, freeze_params=True)
    with PassContext(opt_level=3):
        mod = standard_pipeline(fuse=False)(mod)
    return mod, _executable(mod)


def _bind_inputs(model, values):
    """A copy of ``model`` whose graph inputs named in ``values`` are initializers holding those values."""
    bound = onnx.ModelProto()
    bound.CopyFrom(model)
    kept = [i for i in bound.graph.input if i.name not in values]
    del bound.graph.input[:]
    bound.graph.input.extend(kept)
    bound.graph.initializer.extend(numpy_helper.from_array(np.asarray(v), name) for name, v in values.items())
    return bound


class KilnBackendRep(BackendRep):
    """A prepared model: call :meth:`run` with its inputs.

    kiln compiles for static shapes, so when a graph input decides a shape (the ``shape`` of a Reshape, the ``axes``
    of a reduction, Resize's ``scales``...) the model is compiled at ``run`` time with that input bound to its value,
    once per distinct value (``bound_inputs`` names them).
    """

    def __init__(self, model):
        initializers = {init.name for init in model.graph.initializer}
        self.model = model
        self.input_names = [i.name for i in model.graph.input if i.name not in initializers]
        self.output_names = [o.name for o in model.graph.output]
        self.bound_inputs: tuple = ()
        self._specialized: dict = {}
        try:
            self.mod, self._executable = _compile(model)
        except StaticValueRequired as exc:
            if not exc.input_names:
                raise
            self.mod, self._executable = None, None
            self.bound_inputs = exc.input_names

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

    def _specialize(self, named):
        """The executable for the values of the bound inputs in ``named``, compiled on first use."""
        key = tuple((n, named[n].dtype.str, named[n].shape, named[n].tobytes()) for n in self.bound_inputs)
        if key not in self._specialized:
            while True:
                try:
                    _, exe = _compile(_bind_inputs(self.model, {n: named[n] for n in self.bound_inputs}))
                    break
                except StaticValueRequired as exc:
                    more = [n for n in exc.input_names if n not in self.bound_inputs]
                    if not more:
                        raise
                    self.bound_inputs += tuple(more)
                    key = tuple((n, named[n].dtype.str, named[n].shape, named[n].tobytes())
                                for n in self.bound_inputs)
            self._specialized[key] = exe
        return self._specialized[key]

    def run(self, inputs, **kwargs):
        """Run the model on ``inputs``; returns the outputs as a named tuple of numpy arrays."""
        args = [np.asarray(a) for a in self._ordered(inputs)]
        if self._executable is not None:
            out = self._executable(*args)
        else:
            named = dict(zip(self.input_names, args, strict=True))
            exe = self._specialize(named)
            out = exe(*[a for n, a in named.items() if n not in self.bound_inputs])
        outs = out if isinstance(out, tuple) else (out,)
        return namedtupledict("Outputs", self.output_names)(*[o.numpy() for o in outs])


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
