"""The debug executor (TVM's ``tvm.contrib.debugger.debug_executor``): a graph executor that times every kernel and
reads the output of any node.

:func:`create` gives a :class:`GraphModuleDebug`, which runs a model as :class:`~kiln.contrib.graph_executor.
GraphModule` does, plus

* :meth:`GraphModuleDebug.profile`: one warm-up run, then ``repeat`` rounds, each running the kernels one by one
  under a timer and then the whole graph under one timer (interleaved, so both see the same machine load). The
  :class:`~kiln.runtime.profiling.Report` has a row per kernel call: its time, its share of the whole run, the
  argument shapes, the Relay operators fused into it and its floating-point operations where the graph records them
  (convolutions and matrix products; graph codegen copies them from LowerTE), hence GFLOP/s. Times are means over
  the quieter half of the rounds: the rounds whose calls add up to the least, and for the whole run its quicker
  half of the runs. A round the OS preempted (common on a shared machine) is left out, and since every call is
  averaged over the same rounds, the calls add up to the mean of those rounds' totals, which measure what the whole
  runs measure: the calls account for the run, however busy the machine (a median per call would not: on a busy
  machine most calls escape preemption, most runs of 50 calls do not);
* :meth:`GraphModuleDebug.debug_get_output`: runs the kernels up to a node (by name or index) and copies its first
  output, before later kernels reuse the storage.

The executor behind it, :class:`GraphExecutorDebug`, is a runtime Module whose PackedFuncs ``profile`` and
``debug_get_output`` add to the graph executor's.

Examples
--------
>>> m = debug_executor.create(lib.get_graph_json(), lib.get_lib(), kiln.cpu(0))   # doctest: +SKIP
>>> m.set_input(**lib.get_params())                                              # doctest: +SKIP
>>> print(m.profile(data=x))                                                     # doctest: +SKIP
"""

import time

import numpy as np

from ...error import KilnError
from ...runtime.device import Device
from ...runtime.device import device as make_device
from ...runtime.graph_executor import FUNCTION_NAMES, GraphExecutor, _copy_into
from ...runtime.ndarray import NDArray, _aligned_empty
from ...runtime.packed_func import PackedFunc, register_func
from ...runtime.profiling import Report
from ..graph_executor import GraphModule

__all__ = ["create", "GraphModuleDebug", "GraphExecutorDebug"]

DEBUG_FUNCTION_NAMES = (*FUNCTION_NAMES, "profile", "debug_get_output")


class GraphExecutorDebug(GraphExecutor):
    """A :class:`~kiln.runtime.graph_executor.GraphExecutor` that also profiles its kernels and reads node outputs
    (see the module docstring)."""

    type_key = "GraphExecutorDebug"

    def time_kernels(self, repeat):
        """``(spent, runs)``: the seconds of every prepared call in each of ``repeat`` rounds (an array, call x round),
        and of the whole run in each round.

        Each round times the calls one by one, then one plain :meth:`run`; one untimed run comes first.
        """
        self.require_inputs()  # timings of kernels reading unset inputs would mislead
        self.run()
        calls = [call for _, _, call in self.ops]
        spent = np.zeros((len(calls), repeat))
        runs = np.zeros(repeat)
        clock = time.perf_counter
        for r in range(repeat):
            for i, call in enumerate(calls):
                start = clock()
                call()
                spent[i, r] = clock() - start
            start = clock()
            self.run()
            runs[r] = clock() - start
        return spent, runs

    def _argument_shapes(self, nid) -> str:
        node = self.nodes[nid]
        entries = [self._eid(src, k) for src, k, *_ in node["inputs"]]
        entries += [self._eid(nid, k) for k in range(self.row[nid + 1] - self.row[nid])]
        return ", ".join(f"{self.dtypes[e].name}[{', '.join(map(str, self.shapes[e]))}]" for e in entries)

    def profile(self, repeat=10) -> Report:
        """Time every kernel over ``repeat`` rounds (see the module docstring).

        Parameters
        ----------
        repeat : int
            Rounds measured after the warm-up run.

        Returns
        -------
        Report
            A row per kernel call; ``device_metrics["cpu0"]["Duration (us)"]`` is the whole run.
        """
        if not isinstance(repeat, int) or repeat < 1:
            raise KilnError(f"profile: repeat must be a positive int, got {repeat!r}")
        spent, runs = self.time_kernels(repeat)
        half = (repeat + 1) // 2
        quiet = np.argsort(spent.sum(axis=0), kind="stable")[:half]  # rounds whose calls add up to the least
        total = float(np.sort(runs)[:half].mean())
        calls = []
        for nid, times in zip(self.op_node_ids, spent, strict=True):
            seconds = float(times[quiet].mean())
            node = self.nodes[nid]
            attrs = node.get("attrs", {})
            call = {"Name": attrs.get("func_name", node["name"]), "Node": nid, "Duration (us)": seconds * 1e6,
                    "Percent": 100.0 * seconds / total if total > 0 else 0.0, "Count": 1,
                    "Argument Shapes": self._argument_shapes(nid)}
            if attrs.get("relay_ops"):
                call["Relay Ops"] = attrs["relay_ops"].replace(",", ", ")
            if attrs.get("flops"):
                call["FLOPs"] = int(attrs["flops"])
            calls.append(call)
        device = str(self.device).replace("(", "").replace(")", "")  # cpu(0) -> cpu0, as TVM names devices
        return Report(calls, {device: {"Duration (us)": total * 1e6}},
                      {"Executor": "Graph (debug)", "Number of runs": repeat})

    def debug_get_output(self, node_index, out=None):
        """Run the kernels up to node ``node_index`` (the graph's node list) and return a copy of its first output,
        or copy it into ``out`` (an input or parameter node is read without running anything; a ``__nop`` node after
        the kernels before it)."""
        if not isinstance(node_index, int | np.integer) or not 0 <= int(node_index) < len(self.nodes):
            raise KilnError(f"debug_get_output: node index {node_index} is out of range (the graph has "
                            f"{len(self.nodes)} nodes)")
        node_index = int(node_index)
        if self.nodes[node_index]["op"] != "null":
            if self.unset:  # as run() refuses to
                raise KilnError(f"debug_get_output: input(s) {', '.join(map(repr, sorted(self.unset)))} never set "
                                f"(set_input first)")
            # up to the node's own kernel; a node running none (a reshape's view, a concatenation computed in
            # place) is complete once the kernels before it ran
            for nid, (_, _, call) in zip(self.op_node_ids, self.ops, strict=True):
                if nid > node_index:
                    break
                call()
        view = self.data[self._eid(node_index, 0)]
        if out is not None:
            return _copy_into(out, view, "debug_get_output")
        result = _aligned_empty(view.shape, view.dtype)
        np.copyto(result, view)
        return NDArray(result, self.device)

    def get_own_function(self, name):
        if name in ("profile", "debug_get_output"):
            return PackedFunc(getattr(self, name), name)
        return super().get_own_function(name)

    def own_function_names(self) -> list:
        return list(DEBUG_FUNCTION_NAMES)


class GraphModuleDebug(GraphModule):
    """A :class:`~kiln.contrib.graph_executor.GraphModule` over a :class:`GraphExecutorDebug` (TVM's
    ``GraphModuleDebug``).

    Parameters
    ----------
    module : GraphExecutorDebug
        The executor.
    """

    def __init__(self, module):
        super().__init__(module)
        if "profile" not in module:
            raise KilnError(f"GraphModuleDebug wraps a debug executor (debug_executor.create), not a "
                            f"{module.type_key} module")
        self._profile = module["profile"]
        self._debug_get_output = module["debug_get_output"]
        self.nodes = module.nodes

    def get_node_index(self, node) -> int:
        """The index of the first node named ``node`` (a kernel or input name), or ``node`` itself when an int."""
        if isinstance(node, int | np.integer) and not isinstance(node, bool):
            return int(node)
        if not isinstance(node, str):
            raise KilnError(f"debug_get_output: a node is named by a str or an int index, not a "
                            f"{type(node).__name__}")
        for index, graph_node in enumerate(self.nodes):
            if graph_node["name"] == node:
                return index
        raise KilnError(f"debug_get_output: the graph has no node named {node!r} (nodes are named after their "
                        f"kernels, inputs and parameters: {self.nodes[0]['name']!r} ... {self.nodes[-1]['name']!r})")

    def debug_get_output(self, node, out=None):
        """The first output of ``node`` (a node name, the first node of that name, or an index into the graph's
        nodes) after running the kernels up to it; copied into ``out`` when given (and ``out`` returned), else a
        new NDArray."""
        return self._debug_get_output(self.get_node_index(node), out)

    def profile(self, collectors=None, repeat=10, **input_dict) -> Report:
        """Set the inputs given by name, then time every kernel (see the module docstring).

        Parameters
        ----------
        collectors : None
            TVM's metric collectors (hardware counters); kiln measures time only, so it must be None or empty.
        repeat : int
            Rounds measured after one warm-up run.
        input_dict : arrays
            Inputs set by name first.

        Returns
        -------
        Report
            Prints as a table; ``.csv()``, ``.json()``.
        """
        if collectors:
            raise KilnError("profile: kiln has no metric collectors (it measures time only); pass collectors=None")
        if input_dict:
            self.set_input(**input_dict)
        return self._profile(repeat)


def create(graph_json_str, libmod, device):
    """A :class:`GraphModuleDebug` running ``graph_json_str`` over the kernels of ``libmod`` (TVM's
    ``debug_executor.create``).

    Parameters
    ----------
    graph_json_str : str
        The graph (``lib.get_graph_json()``).
    libmod : Module
        The kernels (``lib.get_lib()``, or a library loaded with ``kiln.runtime.load_module``).
    device : Device
        Where it runs (the CPU).
    """
    if isinstance(device, list | tuple):
        device = device[0]
    device = device if isinstance(device, Device) else make_device(device)
    return GraphModuleDebug(GraphExecutorDebug(graph_json_str, libmod, device))


register_func("tvm.graph_executor_debug.create", lambda graph_json, lib, dev: GraphExecutorDebug(graph_json, lib, dev))
