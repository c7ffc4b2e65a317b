"""Conversion of an ONNX graph into a Relay function (TVM's ``GraphProto``).

How it works:

1. Every node gets a name: its own, or ``<OpType>_<k>`` (the k-th unnamed node of that type) as TVM names them; the
   names are used in error messages and written back by ``export_node_renamed_model_path``.
2. Before converting anything, the model is validated (:mod:`.validate`), which checks every node's op type against
   the converter table (with the model's opset) and the ONNX function definitions
   (:func:`~.validate.check_supported`), so one :class:`~kiln.error.OpNotImplemented` lists all unsupported
   operators at once. An operator without a converter but with an ONNX function body is expanded into that body
   (:mod:`.functions`).
3. Initializers become constants (``freeze_params=True``) or typed parameters whose values are returned in
   ``params``; graph inputs that are not initializers become typed parameters, with the shape from ``shape`` or the
   model (a symbolic dimension without a ``shape`` entry is ``relay.Any``: the module then runs on the VM).
4. Nodes are converted in order. Every value stored in the table is typed (type inference keeps already typed
   subexpressions, so typing each new node costs only the node itself), which lets converters read static shapes.
   A node whose inputs are all constants is folded to constants at once: this is how shape computations
   (``Shape -> Gather -> Concat -> Reshape``) become the static shapes Relay needs.
5. The graph outputs form the body (a tuple when there are several); the parameters are the graph inputs in order
   followed by the parameters (initializers) the body uses.
"""

import numpy as np

from ....error import KilnError, OpNotImplemented
from ....ir.module import IRModule
from ....ir.type import Any, TensorType
from ....runtime.ndarray import array as nd_array
from ...analysis import free_vars
from ...expr import Constant, Tuple, TupleGetItem, TupleWrapper, Var
from ...function import Function
from ...interpreter import evaluate_expr
from ...transform.fold_constant import fold_constant
from ...transform.infer_type import infer_type
from .common import CONVERTERS, ConvertContext, onnx_dtype, parse_attributes
from .functions import DEFAULT_DOMAINS, expand, function_body
from .validate import check_input_types


def node_names(graph) -> list[str]:
    """The name of every node of ``graph``: its own, or ``<OpType>_<k>`` for the k-th unnamed node of a type."""
    counts: dict = {}
    names = []
    for node in graph.node:
        if node.name:
            names.append(node.name)
            continue
        k = counts[node.op_type] = counts.get(node.op_type, -1) + 1
        names.append(f"{node.op_type}_{k}")
    return names


def _input_shape(value_info, shape_override, what):
    """The shape of a graph input, from ``shape_override`` or the model's type (a symbolic dimension is
    :class:`~kiln.ir.type.Any`)."""
    ttype = value_info.type.tensor_type
    if shape_override is not None:
        try:
            dims = tuple(int(d) for d in shape_override)
        except (TypeError, ValueError):
            raise KilnError(f"{what}: shape={{{value_info.name!r}: {shape_override!r}}} is not a tuple of "
                            f"integers") from None
        if any(d < 0 for d in dims):
            raise KilnError(f"{what}: shape={{{value_info.name!r}: {dims}}} has a negative dimension")
        if ttype.HasField("shape") and len(ttype.shape.dim) != len(dims):
            raise KilnError(f"{what} has rank {len(ttype.shape.dim)} in the model; shape= gives it rank {len(dims)} "
                            f"({dims})")
        return dims
    if not ttype.HasField("shape"):
        raise KilnError(f"{what} has no shape in the model: give it with shape={{{value_info.name!r}: (...)}}")
    dims = []
    for d in ttype.shape.dim:
        if d.HasField("dim_value") and d.dim_value >= 0:
            dims.append(int(d.dim_value))
        else:  # symbolic ("batch") or unnamed: known only at run time, which the VM runs
            dims.append(Any())
    return tuple(dims)


class GraphProto:
    """Converts one ONNX graph (see the module docstring)."""

    def __init__(self, shape=None, dtype="float32", freeze_params=True):
        self.shape = dict(shape or {})
        self.dtype = dtype
        self.freeze_params = freeze_params
        self.values: dict = {}      # ONNX value name -> typed Relay expression
        self.param_vars: dict = {}  # initializer Var -> numpy array (freeze_params=False)
        self.input_names: set = set()
        self.mod = IRModule()       # global functions converters add (Loop bodies), typed against each other

    def _input_dtype(self, value_info):
        if isinstance(self.dtype, dict) and value_info.name in self.dtype:
            return str(self.dtype[value_info.name])
        elem = value_info.type.tensor_type.elem_type
        if elem == 0:
            raise KilnError(f"graph input {value_info.name!r} has no element type in the model: give it with "
                            f"dtype={{{value_info.name!r}: 'float32'}}")
        return onnx_dtype(elem, f"graph input {value_info.name!r}")

    def _add_initializers(self, graph):
        from onnx import numpy_helper

        for init in graph.initializer:
            if not init.name.strip():
                raise KilnError("an initializer of the ONNX graph has no name")
            dtype = onnx_dtype(init.data_type, f"initializer {init.name!r}")
            array = np.asarray(numpy_helper.to_array(init)).astype(dtype, copy=False)
            if self.freeze_params:
                self.values[init.name] = Constant(nd_array(array))
            else:
                ttype = TensorType(array.shape, dtype)
                var = Var(init.name, ttype, checked_type_=ttype)
                self.param_vars[var] = array
                self.values[init.name] = var

    def _add_inputs(self, graph):
        inputs = []
        known = {i.name for i in graph.input} | {i.name for i in graph.initializer}
        unknown = [name for name in self.shape if name not in known]
        if unknown:
            names = ", ".join(i.name for i in graph.input if i.name not in self.values)
            raise KilnError(f"shape names {', '.join(map(repr, unknown))}, which the model does not have "
                            f"(its inputs: {names})")
        for info in graph.input:
            if info.name in self.values:  # an initializer listed as an input (older exporters do this)
                continue
            if not info.type.HasField("tensor_type"):
                raise OpNotImplemented(f"graph input {info.name!r} is not a tensor (sequences, maps and optionals "
                                       f"are not supported)")
            ttype = TensorType(_input_shape(info, self.shape.get(info.name), f"graph input {info.name!r}"),
                               self._input_dtype(info))
            var = Var(info.name, ttype, checked_type_=ttype)
            self.values[info.name] = var
            self.input_names.add(info.name)
            inputs.append(var)
        return inputs

    def evaluate_with_params(self, expr):
        """The numpy value of ``expr`` when its only free variables are initializers (else None)."""
        used = free_vars(expr)
        if not used or any(v not in self.param_vars for v in used):
            return None
        value = evaluate_expr(expr, {v: self.param_vars[v] for v in used})
        return value if isinstance(value, np.ndarray) else None

    def _inputs(self, node, name):
        inputs = []
        for i in node.input:
            if not i:
                inputs.append(None)
            elif i not in self.values:
                raise KilnError(f"ONNX node {name!r} ({node.op_type}): input {i!r} is not produced by an earlier "
                                f"node, a graph input or an initializer")
            else:
                inputs.append(self.values[i])
        return inputs

    def _convert(self, node, name, ctx, opset):
        """Convert ``node`` with its converter, or expand it into its ONNX function body and convert that."""
        converter = CONVERTERS.get(node.op_type) if node.domain in DEFAULT_DOMAINS else None
        if converter is not None and converter.get_converter(opset) is not None:
            ctx.opset = opset
            self._convert_node(node, name, ctx)
            return
        types = [None if i is None else i.checked_type for i in self._inputs(node, name)]
        proto, body_opset = function_body(node, opset, types)
        for k, body_node in enumerate(expand(node, proto, f"{name}/", opset)):
            self._convert(body_node, f"{name}/{body_node.op_type}_{k}", ctx, body_opset)

    def convert_subgraph(self, graph, prefix, ctx, inputs=None):
        """Convert the nodes of a subgraph (an If branch, a Loop body) in this graph's scope, its inputs bound to
        ``inputs`` (a dict from name to expression); returns its output values."""
        from onnx import numpy_helper

        opset, node, name = ctx.opset, ctx.node, ctx.name
        self.values.update(inputs or {})
        for init in graph.initializer:
            dtype = onnx_dtype(init.data_type, f"initializer {init.name!r}")
            self.values[init.name] = Constant(nd_array(np.asarray(numpy_helper.to_array(init)).astype(dtype)))
        for k, sub in enumerate(graph.node):
            self._convert(sub, sub.name or f"{prefix}/{sub.op_type}_{k}", ctx, opset)
        ctx.opset, ctx.node, ctx.name = opset, node, name
        missing = [o.name for o in graph.output if o.name not in self.values]
        if missing:
            raise KilnError(f"{prefix}: subgraph outputs {', '.join(missing)} are not produced")
        return [self.values[o.name] for o in graph.output]

    def _convert_node(self, node, name, ctx):
        op_type = node.op_type
        inputs = self._inputs(node, name)
        ctx.node, ctx.name = node, name
        check_input_types(node, ctx.opset, [_tensor_dtype(i) for i in inputs], f"ONNX node {name!r} ({op_type})")
        impl = CONVERTERS[op_type].get_converter(ctx.opset)
        try:
            out = impl(inputs, parse_attributes(node), ctx)
        except KilnError as exc:
            if f"ONNX node {name!r}" in str(exc):
                raise
            raise _renamed(exc, f"ONNX node {name!r} ({op_type}): {exc}") from exc
        outputs = self._split_outputs(out, len(node.output))
        fold = all(i is None or isinstance(i, Constant) for i in inputs)
        # a node may omit trailing optional outputs (LSTM without Y_c): the values computed for them are dropped
        wanted = [(out_name, value) for out_name, value in zip(node.output, outputs, strict=False) if out_name]
        for out_name, value in wanted:
            if value is None:
                raise KilnError(f"ONNX node {name!r} ({op_type}): kiln does not compute its output {out_name!r}")
        # typed together, the outputs keep sharing what they have in common (an LSTM's Y, Y_h and Y_c are one
        # recurrence; typed one by one, each would get its own copy of it)
        typed = infer_type(Tuple([v for _, v in wanted]), self.mod).fields
        for (out_name, _), value in zip(wanted, typed, strict=True):
            if fold and not isinstance(value, Constant):
                value = fold_constant(value)
            self.values[out_name] = value

    def _split_outputs(self, out, count):
        if isinstance(out, TupleWrapper):
            tup = infer_type(out.astuple(), self.mod)
            return [TupleGetItem(tup, i) for i in range(len(out))]
        if isinstance(out, list | tuple):
            return list(out) + [None] * (count - len(out))
        return [out] + [None] * (count - 1)

    def from_onnx(self, graph, opset, names):
        """Convert ``graph`` at ``opset``; returns ``(IRModule, params)``."""
        self._add_initializers(graph)
        inputs = self._add_inputs(graph)
        ctx = ConvertContext(self, opset)
        for node, name in zip(graph.node, names, strict=True):
            self._convert(node, name, ctx, opset)
        outputs = []
        for out in graph.output:
            if out.name not in self.values:
                raise KilnError(f"graph output {out.name!r} is not produced by any node, input or initializer")
            value = self.values[out.name]
            declared = out.type.tensor_type.elem_type if out.type.HasField("tensor_type") else None
            if declared == 0:
                raise KilnError(f"graph output {out.name!r} is declared a tensor with no element type")
            if isinstance(self.dtype, dict):  # the caller retyped inputs: the declared outputs no longer hold
                declared = None
            if declared and _tensor_dtype(value) not in (None, onnx_dtype(declared, f"graph output {out.name!r}")):
                raise KilnError(f"graph output {out.name!r} is declared as {onnx_dtype(declared)}, the graph computes "
                                f"{_tensor_dtype(value)}")
            outputs.append(value)
        body = outputs[0] if len(outputs) == 1 else Tuple(tuple(outputs))
        used = set(free_vars(body))
        params = inputs + [v for v in self.param_vars if v in used]
        param_values = {v.name_hint: nd_array(a) for v, a in self.param_vars.items() if v in used}
        if not self.mod.functions:
            return IRModule.from_expr(infer_type(Function(params, body))), param_values
        mod = IRModule(self.mod.functions)
        mod["main"] = Function(params, body)
        return infer_type(mod), param_values


def _tensor_dtype(expr):
    """The dtype of a typed tensor expression; None for an omitted input or a value that is not a tensor."""
    ttype = None if expr is None else getattr(expr, "checked_type_", None)
    return ttype.dtype if isinstance(ttype, TensorType) else None


def _renamed(exc, message):
    """``exc``'s class with ``message`` (falls back to a KilnError for classes with other constructors)."""
    try:
        return type(exc)(message)
    except TypeError:
        return KilnError(message)
