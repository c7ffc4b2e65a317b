"""``GraphPlanMemory`` on a fused Relay function (TVM's ``relay.backend._backend.GraphPlanMemory``): the storage
plan the graph executor would get, reported per expression.

The function (after ``FuseOps``) is read as the graph codegen reads a lowered one: parameters and constants are
inputs, each call (of a primitive function, or of an operator) a kernel over its arguments' tensors; tuples,
projections and lets only regroup tensors. The graph codegen's :func:`~.graph_codegen.plan_memory` then assigns
storage, so the plan reported here is the one ``relay.build`` uses. A primitive function that only reshapes shares
its input's storage, as in the graph, and the inputs of a concatenation computed in place share its storage.

Each expression's :class:`StorageInfo` lists, per tensor of its value, the storage id, the device type (the CPU,
1), the virtual device, and the size in bytes of the tensor that first took that storage (TVM reports its storage
token's prototype, so a block that grew for a later tensor keeps its first size).
"""

from ...error import KilnError
from ...ir.op import Op
from ...ir.type import TensorType
from ...runtime.device import cpu
from ...target.virtual_device import VirtualDevice
from ..expr import Call, Constant, Let, Tuple, TupleGetItem, Var
from ..expr_functor import post_order_visit
from ..function import Function
from ..transform.infer_type import infer_type
from .graph_codegen import (
    NOP,
    RESHAPE_ONLY_OPS,
    _field_offset,
    _nbytes,
    _row_pointer,
    in_place_concatenations,
    plan_memory,
)
from .lower_te import concatenate_axis
from .te_compiler import flatten_type

__all__ = ["StorageInfo", "StaticMemoryPlan", "graph_plan_memory"]


class StorageInfo:
    """The storage of one expression's tensors (TVM's ``relay.StorageInfo``)."""

    def __init__(self, storage_ids, device_types, virtual_devices, storage_sizes):
        self.storage_ids = list(storage_ids)
        self.device_types = list(device_types)
        self.virtual_devices = list(virtual_devices)
        self.storage_sizes = list(storage_sizes)

    def __repr__(self):
        return f"StorageInfo(storage_ids={self.storage_ids}, storage_sizes={self.storage_sizes})"


class StaticMemoryPlan:
    """``expr_to_storage_info``: each expression's :class:`StorageInfo` (TVM's ``relay.StaticMemoryPlan``)."""

    def __init__(self, expr_to_storage_info):
        self.expr_to_storage_info = expr_to_storage_info


def _reshape_only(func) -> bool:
    ops: set = set()
    post_order_visit(func.body, lambda e: ops.add(e.op.name) if isinstance(e, Call) and isinstance(e.op, Op)
                     else None)
    return bool(ops) and ops <= RESHAPE_ONLY_OPS


class _Graph:
    """The graph nodes of a fused function and each expression's entries."""

    def __init__(self):
        self.nodes: list = []
        self.types: list = []
        self.entries: dict = {}
        self.concat_axes: dict = {}  # node -> axis, for the primitive functions that only concatenate

    def node(self, node, types) -> list:
        self.nodes.append(node)
        self.types.append(list(types))
        return [(len(self.nodes) - 1, k) for k in range(len(types))]

    def visit(self, root):
        """The entries of ``root``: operands first, without recursion; a let binds its variable to its value's
        entries between the value and the body."""
        stack = [(root, False)]
        while stack:
            expr, ready = stack.pop()
            if isinstance(expr, tuple):  # ("bind", let)
                self.entries[expr[1].var] = self.entries[expr[1].value]
                continue
            if expr in self.entries:
                continue
            if ready:
                self.entries[expr] = self._entries(expr)
                continue
            stack.append((expr, True))
            if isinstance(expr, Let):
                stack += [(expr.body, False), (("bind", expr), False), (expr.value, False)]
                continue
            kids = (list(expr.args) if isinstance(expr, Call) else list(expr.fields) if isinstance(expr, Tuple)
                    else [expr.tuple_value] if isinstance(expr, TupleGetItem) else [])
            stack.extend((k, False) for k in reversed(kids) if k not in self.entries)
        return self.entries[root]

    def _entries(self, expr):
        if isinstance(expr, Var | Constant):
            ttype = expr.checked_type_
            if not isinstance(ttype, TensorType):
                raise KilnError(f"GraphPlanMemory: {expr} has type {ttype}; graph inputs are tensors")
            return self.node({"op": "null", "name": getattr(expr, "name_hint", "const"), "inputs": []}, [ttype])
        if isinstance(expr, Tuple):
            return [e for f in expr.fields for e in self.entries[f]]
        if isinstance(expr, TupleGetItem):
            start, stop = _field_offset(expr.tuple_value.checked_type_, expr.index)
            return self.entries[expr.tuple_value][start:stop]
        if isinstance(expr, Let):
            return self.entries[expr.body]
        if isinstance(expr, Call) and isinstance(expr.op, Function | Op):
            inputs = [e for a in expr.args for e in self.entries[a]]
            outputs = flatten_type(expr.checked_type_)
            nop = isinstance(expr.op, Function) and _reshape_only(expr.op) and len(inputs) == len(outputs) == 1
            attrs = {"func_name": NOP if nop else "kernel"}
            axis = concatenate_axis(expr.op) if isinstance(expr.op, Function) else None
            if axis is not None:
                self.concat_axes[len(self.nodes)] = axis
            return self.node({"op": "tvm_op", "name": "kernel", "attrs": attrs,
                              "inputs": [[nid, k, 0] for nid, k in inputs]}, outputs)
        raise KilnError(f"GraphPlanMemory: the graph executor cannot run a {type(expr).__name__}")


def graph_plan_memory(func) -> StaticMemoryPlan:
    """The storage plan of a fused, typed Relay function (see the module docstring)."""
    if not isinstance(func, Function):
        raise KilnError(f"GraphPlanMemory takes a Relay function, got {type(func).__name__}")
    if func.checked_type_ is None:
        func = infer_type(func)
    graph = _Graph()
    for param in func.params:
        graph.entries[param] = graph._entries(param)
    heads = graph.visit(func.body)
    slices = in_place_concatenations(graph.nodes, graph.types, graph.concat_axes)
    storage, _ = plan_memory(graph.nodes, graph.types, heads, slices)
    sizes: dict = {}
    flat = [t for types in graph.types for t in types]
    for eid, sid in enumerate(storage):
        sizes.setdefault(sid, _nbytes(flat[eid]))
    row = _row_pointer(graph.types)
    device = VirtualDevice(cpu(0))
    info = {}
    for expr, entries in graph.entries.items():
        if not entries:
            continue
        sids = [storage[row[nid] + k] for nid, k in entries]
        info[expr] = StorageInfo(sids, [device.device_type] * len(sids), [device] * len(sids),
                                 [sizes[s] for s in sids])
    return StaticMemoryPlan(info)
