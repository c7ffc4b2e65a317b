"""The graph executor (TVM's ``GraphExecutor``): runs a graph JSON's kernels from a compiled library, in order.

Setup, once per executor:

1. the JSON is parsed (format in :mod:`kiln.relay.backend.graph_codegen`): nodes, ``arg_nodes`` (the inputs, among
   them the parameters ``p0``...), ``heads`` (the outputs), per entry shape, dtype and storage id;
2. one zeroed, 64-byte aligned byte buffer is allocated per storage id, as large as the largest entry sharing it,
   and each entry becomes a numpy view of its buffer with its own shape and dtype, from its ``storage_offset``
   when the graph has one (the planner made entries that share bytes of a buffer live at different times, or be
   slices of a concatenation computed in place);
3. each ``tvm_op`` node becomes a prepared call: the library function ``func_name`` and the views of its input
   entries followed by its output entries.

``run()`` makes the prepared calls in order. ``set_input`` copies into an input's view after checking its shape and
dtype; ``get_output`` copies out of an output's view. The executor is a runtime :class:`~kiln.runtime.Module`, so
its methods are also PackedFuncs by TVM's names: ``m["set_input"](0, data)``, ``m["run"]()``,
``m["get_output"](0)``, ``m["get_num_outputs"]()``, ``m["load_params"](blob)``...
"""

import ctypes
import json
import math

import numpy as np

from ..error import KilnError, RuntimeArgumentError
from .container import Map, ShapeTuple, String
from .device import Device, cpu
from .graph_json import entry_dtype, parse_graph
from .graph_json import graph_attr as _attr
from .host import physical_memory
from .library import TYPE_CODE_DLTENSOR, LibraryFunction, TVMValue, _dltensor
from .module import Module
from .ndarray import NDArray, _aligned_empty
from .packed_func import PackedFunc, register_func
from .params import load_param_dict

__all__ = ["GraphExecutor", "parse_graph", "FUNCTION_NAMES"]

FUNCTION_NAMES = ("set_input", "set_input_zero_copy", "run", "get_output", "get_input", "get_num_outputs",
                  "get_num_inputs", "get_input_index", "get_output_index", "get_input_info", "load_params")
"""The PackedFuncs an executor module provides (``m[name]``)."""


def _describe(value) -> str:
    return f"shape {tuple(value.shape)} and dtype {value.dtype}"


class GraphExecutor(Module):
    """An executor of ``graph_json`` over the kernels of ``lib`` on ``device`` (see the module docstring).

    Parameters
    ----------
    graph_json : str
        The graph.
    lib : Module or None
        The library holding the kernels (None for a graph without kernels).
    device : Device
        Where arrays live (the CPU).
    """

    type_key = "GraphExecutor"

    def __init__(self, graph_json, lib, device=None):
        super().__init__()
        graph = parse_graph(graph_json)
        self.graph_json = graph_json if isinstance(graph_json, str) else json.dumps(graph)
        self.device = device if isinstance(device, Device) else cpu(0)
        self.lib = lib
        if lib is not None:
            self.import_module(lib)
        self.nodes = graph["nodes"]
        self.row = graph["node_row_ptr"]
        self.shapes = [tuple(s) for s in _attr(graph, "shape", "list_shape")]
        self.dtypes = [entry_dtype(d) for d in _attr(graph, "dltype", "list_str")]
        self.input_nodes = list(graph["arg_nodes"])
        self.input_names = [self.nodes[n]["name"] for n in self.input_nodes]
        self.input_index = {name: k for k, name in enumerate(self.input_names)}
        self.param_names: set = set()  # inputs set as parameters (by the factory or load_params)
        self.output_entries = [self._eid(nid, k) for nid, k, *_ in graph["heads"]]
        offsets = _attr(graph, "storage_offset", "list_int") if "storage_offset" in graph["attrs"] else None
        self.data = self._allocate(_attr(graph, "storage_id", "list_int"), offsets)
        self.ops = self._prepare()
        # the inputs run() refuses to read before they are set (or are parameters); one no kernel reads and no
        # output is (a parameter the function ignores) may stay unset, as it cannot reach a result
        read = {i[0] for node in self.nodes if node["op"] != "null" for i in node.get("inputs", ())}
        read |= {nid for nid, *_ in graph["heads"]}
        self.unset = {name for nid, name in zip(self.input_nodes, self.input_names, strict=True) if nid in read}

    def _eid(self, nid, index) -> int:
        return self.row[nid] + index

    def _allocate(self, storage_ids, offsets=None) -> list:
        offsets = offsets or [0] * len(storage_ids)
        sizes: dict = {}
        for eid, sid in enumerate(storage_ids):
            nbytes = math.prod(self.shapes[eid]) * self.dtypes[eid].itemsize  # Python ints: a huge shape must not wrap
            sizes[sid] = max(sizes.get(sid, 0), offsets[eid] + nbytes)
        total, limit = sum(sizes.values()), physical_memory()
        if total > limit:
            raise KilnError(f"graph executor: the graph needs {total / 2**30:,.1f} GiB of tensors, more than this "
                            f"machine's memory ({limit / 2**30:,.1f} GiB)")
        pools = {}
        for sid, nbytes in sizes.items():
            pools[sid] = _aligned_empty((max(nbytes, 1),), np.uint8)
            pools[sid].fill(0)
        data = []
        for eid, sid in enumerate(storage_ids):
            count = int(np.prod(self.shapes[eid], dtype=np.int64))
            nbytes = count * self.dtypes[eid].itemsize
            start = offsets[eid]
            data.append(pools[sid][start:start + nbytes].view(self.dtypes[eid]).reshape(self.shapes[eid]))
        return data

    def _prepare(self) -> list:
        ops = []
        self.op_node_ids = []  # the graph node of each prepared call (the debug executor reports calls by node)
        for nid, node in enumerate(self.nodes):
            if node["op"] == "null":
                continue
            if node["op"] != "tvm_op":
                raise KilnError(f"graph executor: node {nid} ({node.get('name')}) has the unknown op {node['op']!r}")
            name = node.get("attrs", {}).get("func_name", node.get("name"))
            if name == "__nop":
                continue
            if self.lib is None:
                raise KilnError(f"graph executor: node {nid} calls {name!r} but no library was given")
            func = self.lib.get_function(name)
            args = [self.data[self._eid(src, k)] for src, k, *_ in node.get("inputs", ())]
            args += [self.data[self._eid(nid, k)] for k in range(self.row[nid + 1] - self.row[nid])]
            ops.append((func, tuple(args), _prepared_call(func, tuple(args))))
            self.op_node_ids.append(nid)
        return ops

    # ---------------------------------------------------------------------------------------------- inputs
    def get_input_index(self, name) -> int:
        """The index of input ``name`` (-1 when there is none, as in TVM)."""
        return self.input_index.get(name, -1)

    def _input_position(self, key, what) -> int:
        if isinstance(key, str):
            index = self.input_index.get(key)
            if index is None:
                raise KilnError(f"{what}: the graph has no input named {key!r}; inputs: "
                                f"{', '.join(self.input_names) or 'none'}")
            return index
        if isinstance(key, int | np.integer) and not isinstance(key, bool):
            if not 0 <= int(key) < len(self.input_nodes):
                raise KilnError(f"{what}: input index {key} is out of range (the graph has {len(self.input_nodes)} "
                                f"inputs)")
            return int(key)
        raise KilnError(f"{what}: an input is named by a str or an int index, not a {type(key).__name__}")

    def _input_view(self, position):
        return self.data[self._eid(self.input_nodes[position], 0)]

    def set_input(self, key, value):
        """Copy ``value`` (NDArray, numpy array, or Python number/list) into input ``key`` (name or index).

        Raises
        ------
        KilnError
            Unknown input; RuntimeArgumentError when the shape or dtype differs from the input's.
        """
        position = self._input_position(key, "set_input")
        name = self.input_names[position]
        target = self._input_view(position)
        if isinstance(value, NDArray):
            src = value.handle
        elif isinstance(value, np.ndarray | np.generic):
            src = np.asarray(value)
        elif isinstance(value, bool | int | float | list | tuple):
            try:
                src = np.asarray(value, dtype=target.dtype)
            except (TypeError, ValueError, OverflowError) as exc:  # ragged lists, values the dtype cannot hold
                raise RuntimeArgumentError(f"set_input {name!r}: the value is not a {target.dtype} array ({exc})") \
                    from None
        else:
            raise RuntimeArgumentError(f"set_input {name!r}: expected an NDArray or numpy array, got "
                                       f"{type(value).__name__}")
        if src.dtype != target.dtype or src.shape != target.shape:
            raise RuntimeArgumentError(f"set_input {name!r}: the input has {_describe(target)}, the value has "
                                       f"{_describe(src)}")
        np.copyto(target, src)
        self.unset.discard(name)

    def set_input_zero_copy(self, key, value):
        """Set input ``key``; kiln copies (the kernels were bound to the executor's own storage)."""
        self.set_input(key, value)

    def get_input(self, key, out=None):
        """Input ``key`` (name or index) as an NDArray sharing the executor's storage, or copied into ``out``."""
        position = self._input_position(key, "get_input")
        view = self._input_view(position)
        if out is not None:
            return _copy_into(out, view, "get_input")
        self.unset.discard(self.input_names[position])  # the caller holds the storage and may fill it in place
        return NDArray(view, self.device)

    def get_num_inputs(self) -> int:
        """The number of graph inputs, parameters included (as TVM counts them)."""
        return len(self.input_nodes)

    def get_input_info(self):
        """``(shape_dict, dtype_dict)`` of the inputs that were not set as parameters (by the factory or
        :meth:`load_params`): dicts (TVM's ``Map``) of ``ShapeTuple`` and ``String``."""
        shapes, dtypes = Map(), Map()
        for position, name in enumerate(self.input_names):
            if name in self.param_names:
                continue
            eid = self._eid(self.input_nodes[position], 0)
            shapes[name] = ShapeTuple(self.shapes[eid])
            dtypes[name] = String(self.dtypes[eid].name)
        return shapes, dtypes

    def load_params(self, params_bytes):
        """Set the inputs named in a serialized parameter dictionary (names the graph lacks are skipped, as TVM)."""
        self.set_params(load_param_dict(params_bytes))

    def set_params(self, params):
        """Set the inputs named in ``{name: array}`` as parameters (names the graph lacks are skipped)."""
        for name, value in params.items():
            if name in self.input_index:
                self.set_input(name, value)
                self.param_names.add(name)
                self.unset.discard(name)

    # ---------------------------------------------------------------------------------------------- running
    def _unset_message(self, what) -> str:
        missing = [name for name in self.input_names if name in self.unset]
        return (f"{what}: input{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))} "
                f"{'were' if len(missing) > 1 else 'was'} never set (set_input, or run(name=array))")

    def require_inputs(self, what="run"):
        """Raise KilnError naming the inputs never set (for callers that must not run on unset inputs)."""
        if self.unset:
            raise KilnError(self._unset_message(what))

    def run(self):
        """Run every kernel of the graph once, in order.

        Raises
        ------
        KilnError
            Naming the inputs never set. TVM runs on whatever the storage holds; a result computed from inputs nobody
            gave is not one a user wants.
        """
        self.require_inputs("run")
        for _, _, call in self.ops:
            call()

    def get_num_outputs(self) -> int:
        """The number of outputs (a tuple result counts each field)."""
        return len(self.output_entries)

    def get_output_index(self, name) -> int:
        """TVM looks outputs up by node name; kiln's heads have no names of their own, so an index is returned only
        for ``"output_<i>"``."""
        if isinstance(name, str) and name.startswith("output_") and name[7:].isdigit():
            index = int(name[7:])
            return index if index < len(self.output_entries) else -1
        return -1

    def get_output(self, index, out=None):
        """A copy of output ``index`` as a new NDArray, or copied into ``out`` (NDArray or numpy array), which is
        returned."""
        if not isinstance(index, int | np.integer) or not 0 <= int(index) < len(self.output_entries):
            raise KilnError(f"get_output: output index {index} is out of range (the graph has "
                            f"{len(self.output_entries)} outputs)")
        view = self.data[self.output_entries[int(index)]]
        if out is not None:
            return _copy_into(out, view, "get_output")
        result = _aligned_empty(view.shape, view.dtype)
        np.copyto(result, view)
        return NDArray(result, self.device)

    # ---------------------------------------------------------------------------------------------- module
    def get_own_function(self, name):
        if name not in FUNCTION_NAMES:
            return None
        return PackedFunc(getattr(self, name), name)

    def own_function_names(self) -> list:
        return list(FUNCTION_NAMES)

    def __repr__(self):
        return (f"GraphExecutor({len(self.ops)} kernels, inputs={self.input_names[:8]}"
                f"{'...' if len(self.input_names) > 8 else ''}, outputs={len(self.output_entries)})")


def _prepared_call(func, args):
    """A zero-argument function calling ``func(*args)``.

    For a packed function of a compiled library the argument arrays (TVMValues, type codes, DLTensors) are built once
    here, since the executor's views never move: a call then costs about 1.5 us instead of 15 us. Anything else is
    called the ordinary way.
    """
    target = getattr(func, "_func", None)
    if not isinstance(target, LibraryFunction) or not target.packed:
        return lambda: func(*args)
    count = len(args)
    values = (TVMValue * max(count, 1))()
    codes = (ctypes.c_int32 * max(count, 1))()
    keep: list = []  # the DLTensors and shape arrays the values point to, alive as long as the closure
    for i, arr in enumerate(args):
        values[i].v_handle = ctypes.addressof(_dltensor(arr, keep))
        codes[i] = TYPE_CODE_DLTENSOR
    ret, ret_code = TVMValue(), ctypes.c_int32(0)
    native, library, name = target._fn, target.library, target.name
    ret_ref, code_ref = ctypes.byref(ret), ctypes.byref(ret_code)

    def call():
        if native(values, codes, count, ret_ref, code_ref, None) != 0:
            message = library.last_error()
            raise RuntimeArgumentError(message if name in message else f"{name}: {message}")

    call.keep = keep
    return call


def _copy_into(out, view, what):
    target = out.handle if isinstance(out, NDArray) else out
    if not isinstance(target, np.ndarray):
        raise RuntimeArgumentError(f"{what}: out must be an NDArray or numpy array, got {type(out).__name__}")
    if target.shape != view.shape or target.dtype != view.dtype:
        raise RuntimeArgumentError(f"{what}: out has {_describe(target)}, the value has {_describe(view)}")
    np.copyto(target, view)
    return out


def _create(graph_json, lib, *devices):
    """TVM's ``tvm.graph_executor.create(graph_json, lib, device...)``: an executor on the first device."""
    dev = devices[0] if devices else cpu(0)
    return GraphExecutor(graph_json, lib, dev)


register_func("tvm.graph_executor.create", _create)
