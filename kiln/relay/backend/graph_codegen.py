"""Graph codegen: the graph executor's JSON, storage plan and parameters from a lowered ``@main`` (TVM's
``GraphExecutorCodegen`` and ``GraphPlanMemory``).

The graph is TVM's JSON format, so tools that read TVM graphs read it:

* ``nodes``: each ``{"op": "null", "name", "inputs": []}`` (an input of ``@main`` named by its name hint, a
  repeated hint made distinct by :func:`input_names`; or a constant, named ``p0``,
  ``p1`` ... in visiting order, skipping a name an input has, and returned as a parameter) or ``{"op": "tvm_op",
  "name", "attrs": {"func_name", "num_inputs", "num_outputs", "flatten_data"}, "inputs": [[node, index, 0], ...]}``
  (one ``call_lowered``: the kernel ``func_name`` of the library, called with its inputs then its outputs). Like
  TVM's extra ``hash`` attribute, two string attributes describe the kernel for profilers (the debug executor),
  copied from the PrimFunc LowerTE made: ``relay_ops``, the Relay operators fused into it joined by commas, and
  ``flops``, its floating-point operations when it holds convolutions or matrix products;
* ``arg_nodes`` (the ``null`` nodes), ``heads`` (the outputs of ``@main``, a tuple result flattened),
  ``node_row_ptr`` (where each node's outputs start in the list of *entries*, one entry per tensor);
* ``attrs``: per entry ``shape`` (``list_shape``), ``dltype`` (``list_str``) and ``storage_id`` (``list_int``).

Tuples and projections produce no node: a tuple is the list of its fields' entries, ``.i`` selects the entries of
field ``i``; ``let`` binds a variable to its value's entries.

A kernel that only concatenates its inputs (LowerTE's ``kiln.concatenate_axis``) along an axis with nothing but
unit axes before it (so each input is one contiguous run of the result's bytes) is computed in place
(:func:`in_place_concatenations`) when each input is the output of a kernel (or of another such concatenation) not
already placed elsewhere, and each run starts 64-byte aligned (what the kernels check): the producers write straight
into their slices of the result's storage, and the concatenation becomes a ``__nop`` node whose kernel is not
compiled. DenseNet's dense blocks then fill one buffer; Inception's branches write their modules' outputs. Each
entry's byte offset into its storage is then listed in the graph attribute ``storage_offset`` (``list_int``, a
kiln extension; absent when every offset is 0).

Storage planning (:func:`plan_memory`) follows GraphPlanMemory: entries are visited in node order with a reference
count (their number of uses, one more for graph outputs); inputs and parameters get storage of their own; the
outputs of a kernel take a free block whose size is within a factor 16 of theirs (the smallest that fits, else the
largest smaller one, which grows), or a new one; then the kernel's inputs whose count drops to zero return their
block to the free list. A kernel's outputs are allocated before its inputs are released, so no kernel reads and
writes one block; an unused output is released at once. A kernel that only reshapes (:data:`RESHAPE_ONLY_OPS`)
becomes a ``__nop`` node, as in TVM: its output shares its input's block, which is released when both are dead,
and the kernel is not compiled. The slices of a concatenation computed in place share its block, taken when the
first of them is written and released when none of them nor the concatenation is used any more.
"""

import bisect
import itertools
import json
import math

import numpy as np

from ...error import CodegenError
from ...ir.expr import GlobalVar
from ...ir.module import IRModule
from ...ir.type import TensorType, TupleType
from ...tir.buffer import DEFAULT_ALIGNMENT
from ...tir.function import PrimFunc
from ..expr import Call, Constant, Let, Tuple, TupleGetItem, Var
from ..function import Function
from .call_lowered import is_call_lowered
from .te_compiler import flatten_type

__all__ = ["GraphCodegenResult", "codegen", "input_names", "plan_memory", "in_place_concatenations", "MATCH_RANGE"]

MATCH_RANGE = 16
"""A free block is reused for a tensor between 1/16 and 16 times its size (TVM's ``match_range_``)."""

NOP = "__nop"
"""The ``func_name`` of a node that runs nothing (TVM's): its output is its input's storage, viewed in its shape."""
RESHAPE_ONLY_OPS = frozenset({"reshape", "squeeze", "expand_dims", "nn.batch_flatten", "reshape_like",
                              "contrib_reverse_reshape"})
"""Operators that only reinterpret a tensor's shape: a kernel of nothing else becomes a :data:`NOP`."""


class GraphCodegenResult:
    """What :func:`codegen` produces.

    Attributes
    ----------
    graph_json : str
        The graph (see the module docstring).
    params : dict of str to NDArray
        The constants of ``@main`` by their node names (``p0``, ...).
    lowered_funcs : IRModule
        The PrimFuncs the graph calls.
    """

    def __init__(self, graph_json, params, lowered_funcs):
        self.graph_json = graph_json
        self.params = params
        self.lowered_funcs = lowered_funcs


def _nbytes(ttype: TensorType) -> int:
    count = int(np.prod(ttype.shape, dtype=np.int64))
    return count * np.dtype(ttype.dtype).itemsize


def _field_offset(ttype: TupleType, index: int) -> tuple:
    start = sum(len(flatten_type(f)) for f in ttype.fields[:index])
    return start, start + len(flatten_type(ttype.fields[index]))


class _GraphBuilder:
    """Walks ``@main`` and emits nodes (see the module docstring)."""

    def __init__(self, mod):
        self.mod = mod
        self.nodes: list = []
        self.entry_types: list = []  # per node: list of TensorType of its outputs
        self.params: dict = {}
        self.entries: dict = {}  # expr -> list of (node, index)
        self.used_funcs: dict = {}
        self.input_names: set = set()
        self.skipped = 0  # parameter numbers passed over because an input has that name
        self.concat_axes: dict = {}  # node id -> axis, for kernels that only concatenate their inputs

    def _add_node(self, node, types) -> list:
        nid = len(self.nodes)
        self.nodes.append(node)
        self.entry_types.append(types)
        return [(nid, k) for k in range(len(types))]

    def _reshape_only(self, func, inputs, outputs) -> bool:
        """Whether the kernel only changes the shape of its one input: its bytes are the output's."""
        ops = func.attrs.get("kiln.relay_ops") if func.attrs else None
        if not ops or not set(ops) <= RESHAPE_ONLY_OPS or len(inputs) != 1 or len(outputs) != 1:
            return False
        nid, k = inputs[0]
        return self.entry_types[nid][k].dtype == outputs[0].dtype

    def add_input(self, var, name):
        """The ``null`` node of parameter ``var`` of ``@main``, named ``name`` (see :func:`input_names`)."""
        ttype = var.checked_type_
        if not isinstance(ttype, TensorType):
            raise CodegenError(f"graph codegen: input %{var.name_hint} has type {ttype}; the graph executor takes "
                               f"tensor inputs only")
        self._check_static(ttype, f"input %{var.name_hint}")
        self.input_names.add(name)
        self.entries[var] = self._add_node({"op": "null", "name": name, "inputs": []}, [ttype])

    @staticmethod
    def _check_static(ttype, what):
        if not all(isinstance(d, int) for d in ttype.shape):
            raise CodegenError(f"graph codegen: {what} has the dynamic shape {ttype.shape}; the graph executor needs "
                               f"static shapes")

    def visit(self, root):
        """The entries of ``root``, visiting operands first without recursion (let chains walked by a loop)."""
        stack = [(root, False)]
        while stack:
            expr, ready = stack.pop()
            if expr in self.entries:
                continue
            kids = self._operands(expr)
            if not ready and any(k not in self.entries for k in kids):
                stack.append((expr, True))
                stack.extend((k, False) for k in reversed(kids) if k not in self.entries)
                continue
            self.entries[expr] = self._emit(expr)
        return self.entries[root]

    def _operands(self, expr):
        kind = type(expr)
        if kind is Call and is_call_lowered(expr):
            return expr.args[1].fields
        if kind is Tuple:
            return expr.fields
        if kind is TupleGetItem:
            return (expr.tuple_value,)
        if kind is Let:
            return (expr.value,)
        return ()

    def _emit(self, expr):
        kind = type(expr)
        if kind is Constant:
            name = f"p{len(self.params) + self.skipped}"
            while name in self.input_names:  # an input already has the name: take the next number
                self.skipped += 1
                name = f"p{len(self.params) + self.skipped}"
            self.params[name] = expr.data
            return self._add_node({"op": "null", "name": name, "inputs": []}, [expr.checked_type_])
        if kind is Tuple:
            return [e for f in expr.fields for e in self.entries[f]]
        if kind is TupleGetItem:
            start, stop = _field_offset(expr.tuple_value.checked_type_, expr.index)
            return self.entries[expr.tuple_value][start:stop]
        if kind is Let:
            while isinstance(expr, Let):
                self.entries[expr.var] = self.visit(expr.value)
                expr = expr.body
            return self.visit(expr)
        if kind is Call and is_call_lowered(expr):
            return self._emit_call(expr)
        if kind is Var:
            raise CodegenError(f"graph codegen: variable %{expr.name_hint} is free in @main")
        if kind is Call:
            callee = expr.op.name if hasattr(expr.op, "name") else (
                str(expr.op) if isinstance(expr.op, GlobalVar) else f"a {type(expr.op).__name__}")
            raise CodegenError(f"graph codegen: @main calls {callee}, which was not lowered; the graph executor runs "
                               f"only kernels (call_lowered). Global functions must be inlined (attribute Inline=1)")
        raise CodegenError(f"graph codegen: the graph executor cannot run a {kind.__name__} (control flow, closures "
                           f"and references need the Relay VM: relay.vm.compile)")

    def _emit_call(self, call):
        gv = call.args[0]
        func = self.mod[gv] if gv in self.mod else None
        if not isinstance(func, PrimFunc):
            raise CodegenError(f"graph codegen: call_lowered of {gv}, which is not a tir.PrimFunc of the module")
        inputs = [e for a in call.args[1].fields for e in self.entries[a]]
        outputs = flatten_type(call.checked_type_)
        for t in outputs:
            self._check_static(t, f"the result of {gv.name_hint}")
        nop = self._reshape_only(func, inputs, outputs)
        if not nop:
            self.used_funcs[gv] = func
        attrs = {"func_name": NOP if nop else gv.name_hint, "num_inputs": str(len(inputs)),
                 "num_outputs": str(len(outputs)), "flatten_data": "0"}
        if "kiln.relay_ops" in func.attrs:
            attrs["relay_ops"] = ",".join(func.attrs["kiln.relay_ops"])
        if "kiln.flops" in func.attrs:
            attrs["flops"] = str(func.attrs["kiln.flops"])
        node = {"op": "tvm_op", "name": gv.name_hint, "attrs": attrs, "inputs": [[nid, k, 0] for nid, k in inputs]}
        if "kiln.concatenate_axis" in func.attrs:
            self.concat_axes[len(self.nodes)] = int(func.attrs["kiln.concatenate_axis"])
        return self._add_node(node, outputs)


def _row_pointer(entry_types) -> list:
    """Where each node's entries start in the flat entry list, and the end (the graph's ``node_row_ptr``)."""
    row = [0]
    for types in entry_types:
        row.append(row[-1] + len(types))
    return row


def in_place_concatenations(nodes, entry_types, concat_axes) -> dict:
    """The concatenations computed in place (see the module docstring).

    Parameters
    ----------
    nodes, entry_types :
        As for :func:`plan_memory`.
    concat_axes : dict of int to int
        The nodes that only concatenate their inputs, with the axis.

    Returns
    -------
    slices : dict of int to (int, int)
        For each input entry written in place: the concatenation's entry and the byte offset of its slice.
    """
    row = _row_pointer(entry_types)
    slices: dict = {}
    in_place: set = set()
    for nid in sorted(concat_axes):
        axis, node, types = concat_axes[nid], nodes[nid], entry_types[nid]
        if len(types) != 1 or math.prod(types[0].shape[:axis]) != 1:
            continue  # the inputs interleave in the result
        inputs = [row[src] + k for src, k, _ in node["inputs"]]
        offsets = list(itertools.accumulate((_nbytes(entry_types[src][k]) for src, k, _ in node["inputs"]),
                                            initial=0))
        written_by_kernels = all(nodes[src]["op"] == "tvm_op" and (nodes[src]["attrs"].get("func_name") != NOP
                                                                    or src in in_place)
                                 for src, _, _ in node["inputs"])
        if (written_by_kernels and len(set(inputs)) == len(inputs) and not any(e in slices for e in inputs)
                and offsets[-1] == _nbytes(types[0]) and all(o % DEFAULT_ALIGNMENT == 0 for o in offsets[:-1])):
            in_place.add(nid)
            slices.update((eid, (row[nid], offset)) for eid, offset in zip(inputs, offsets, strict=False))
    return slices


def plan_memory(nodes, entry_types, heads, slices=None) -> tuple:
    """The storage of each entry (see the module docstring).

    Parameters
    ----------
    nodes : list of dict
        The graph nodes in execution order (a concatenation computed in place is a ``__nop`` node).
    entry_types : list of list of TensorType
        Each node's output types.
    heads : list of (node, index)
        The graph outputs.
    slices : dict, optional
        The slices of concatenations computed in place (:func:`in_place_concatenations`).

    Returns
    -------
    storage_ids, byte_offsets : list of int
        One each per entry, in entry order (node by node, output by output).
    """
    slices = slices or {}
    row = _row_pointer(entry_types)
    sizes = [_nbytes(t) for types in entry_types for t in types]
    refs = [0] * row[-1]
    for node in nodes:
        for nid, k, _ in node["inputs"]:
            refs[row[nid] + k] += 1
    for nid, k in heads:
        refs[row[nid] + k] += 1
    storage = [-1] * row[-1]
    block_size: list = []
    free: list = []  # sorted (size, sid)

    def request(size):
        if free:
            pos = bisect.bisect_left(free, (size, -1))
            for i in range(pos, len(free)):  # the smallest block that fits, within the match range
                if free[i][0] > size * MATCH_RANGE:
                    break
                return free.pop(i)[1]
            for i in range(pos - 1, -1, -1):  # else the largest smaller block, grown
                if free[i][0] * MATCH_RANGE < size:
                    break
                sid = free.pop(i)[1]
                block_size[sid] = size
                return sid
        block_size.append(size)
        return len(block_size) - 1

    def release(sid):
        bisect.insort(free, (block_size[sid], sid))

    owner = list(range(row[-1]))  # the entry whose storage an entry uses: itself, what a no-op viewed, or the
    offset = [0] * row[-1]  # outermost concatenation it is a slice of (at this byte offset)
    for eid in slices:
        root = eid
        while root in slices:
            root, start = slices[root]
            offset[eid] += start
        owner[eid] = root
        refs[root] += refs[eid]
    concatenations = {parent for parent, _ in slices.values()}
    external = [False] * row[-1]  # storage of an input or parameter, never released

    def use(eid):  # one use of entry ``eid`` done: its block is free once nothing reads it
        root = owner[eid]
        refs[root] -= 1
        if refs[root] == 0 and not external[root]:
            release(storage[root])

    for nid, node in enumerate(nodes):
        outs = range(row[nid], row[nid + 1])
        if node["op"] == "null":
            for eid in outs:
                block_size.append(sizes[eid])
                storage[eid] = len(block_size) - 1
                external[eid] = True
            continue
        if row[nid] in concatenations:  # computed in place: its slices already hold it
            storage[row[nid]] = storage[owner[row[nid]]]
            for src, k, _ in node["inputs"]:
                use(row[src] + k)
            continue
        if node.get("attrs", {}).get("func_name") == NOP:  # the output is the input's bytes: share, count its uses
            (src, k, _), eid = node["inputs"][0], row[nid]
            root = owner[row[src] + k]
            owner[eid], storage[eid], offset[eid] = root, storage[root], offset[row[src] + k]
            refs[root] += refs[eid] - 1
            if refs[root] == 0 and not external[root]:
                release(storage[root])
            continue
        for eid in outs:
            root = owner[eid]
            if storage[root] < 0:
                storage[root] = request(sizes[root])
            storage[eid] = storage[root]
        for src, k, _ in node["inputs"]:
            use(row[src] + k)
        for eid in outs:
            if refs[owner[eid]] == 0:
                release(storage[eid])
    return storage, offset


def input_names(params) -> list:
    """The graph's names for the parameters ``params`` of ``@main``: each its name hint, as in TVM, except that a
    hint an earlier parameter already has becomes ``<hint>_<k>`` with the smallest ``k >= 1`` no parameter has.

    TVM accepts parameters that share a name hint (the executor is then called by position); the graph executor
    finds inputs by name, so kiln gives each its own.
    """
    taken = {p.name_hint for p in params}
    names, seen = [], set()
    for param in params:
        name = param.name_hint
        if name in seen:
            k = 1
            while f"{name}_{k}" in taken:
                k += 1
            name = f"{name}_{k}"
            taken.add(name)
        seen.add(name)
        names.append(name)
    return names


def codegen(mod, entry="main") -> GraphCodegenResult:
    """The graph of the lowered ``mod[entry]`` (see the module docstring).

    Parameters
    ----------
    mod : IRModule
        A module after LowerTE: ``@main`` calling PrimFuncs of the module through ``call_lowered``.
    entry : str
        The function the graph runs.

    Returns
    -------
    GraphCodegenResult
    """
    func = mod[entry]
    if not isinstance(func, Function):
        raise CodegenError(f"graph codegen: @{entry} is a {type(func).__name__}, not a Relay function")
    builder = _GraphBuilder(mod)
    for param, name in zip(func.params, input_names(func.params), strict=True):
        builder.add_input(param, name)
    heads = builder.visit(func.body)
    nodes = builder.nodes
    slices = in_place_concatenations(nodes, builder.entry_types, builder.concat_axes)
    row = _row_pointer(builder.entry_types)
    concatenations = {parent for parent, _ in slices.values()}
    for nid in builder.concat_axes:
        if row[nid] in concatenations:
            nodes[nid]["attrs"]["func_name"] = NOP
    storage, offsets = plan_memory(nodes, builder.entry_types, heads, slices)
    flat = [t for types in builder.entry_types for t in types]
    graph = {
        "nodes": nodes,
        "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
        "heads": [[nid, k, 0] for nid, k in heads],
        "attrs": {
            "dltype": ["list_str", [t.dtype for t in flat]],
            "storage_id": ["list_int", storage],
            "shape": ["list_shape", [list(t.shape) for t in flat]],
        },
        "node_row_ptr": row,
    }
    if slices:
        graph["attrs"]["storage_offset"] = ["list_int", offsets]
    called = {n["attrs"]["func_name"] for n in nodes if n["op"] == "tvm_op"}
    lowered = IRModule({gv: f for gv, f in builder.used_funcs.items() if gv.name_hint in called})
    return GraphCodegenResult(json.dumps(graph, indent=2), builder.params, lowered)
