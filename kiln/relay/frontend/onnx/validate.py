"""Checking an ONNX model before converting it: every finding is a :class:`~kiln.error.KilnError` naming the node,
attribute, input or initializer at fault, raised before anything is allocated or converted.

What is checked, in order:

1. the model imports an opset for the default domain (or the caller gives one);
2. node order: a graph whose nodes are not in topological order is sorted (with a warning, as ONNX Runtime accepts
   such graphs); a cycle, an input no node, graph input or initializer produces, or a value produced twice is an
   error;
3. the operators: :func:`check_supported` lists every one kiln cannot convert in one error;
4. each node against its operator's schema (``onnx.checker.check_node``: input and output counts, required and
   unknown attributes, attribute types), for the operators the schema registry knows;
5. attribute values every converter relies on, one table for all operators (:data:`ATTRIBUTE_RULES`): strides,
   dilations and kernel sizes positive, pads non-negative, ``group`` positive, strings valid UTF-8;
6. initializers: a known element type, non-negative dimensions, a declared size this machine could hold, and data
   (raw bytes or the typed field) of exactly the declared size; graph input dimensions likewise;
7. while converting (:func:`check_input_types`, called by the graph converter, which knows the types): every input's
   element type against its operator's type constraints (a ``Conv`` of ``int32`` tensors is not an ONNX model), and
   every graph output's declared element type against the computed one.

Subgraphs (``If``/``Loop`` bodies) are checked with the names of the enclosing scopes visible.
"""

import heapq
import warnings

import numpy as np

from ....error import KilnError, OpNotImplemented
from ....runtime.host import physical_memory
from .common import CONVERTERS
from .functions import DEFAULT_DOMAINS, has_function


def _positive(values):
    return all(v > 0 for v in values)


def _non_negative(values):
    return all(v >= 0 for v in values)


ATTRIBUTE_RULES = {
    "strides": (_positive, "must be positive"),
    "dilations": (_positive, "must be positive"),
    "kernel_shape": (_positive, "must be positive"),
    "group": (_positive, "must be positive"),
    "pads": (_non_negative, "must not be negative"),
    "output_padding": (_non_negative, "must not be negative"),
}
"""Attribute name -> (check of its integer values, what the check demands), for the operators below."""

RULE_OPS = frozenset({"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool",
                      "MaxUnpool", "DeformConv", "MaxRoiPool", "Col2Im"})
"""Operators whose attributes :data:`ATTRIBUTE_RULES` applies to (``pads`` of ``Pad`` may be negative, say)."""


def validate_model(model, opset=None):
    """Check ``model`` (see the module docstring); returns it, or a copy with its nodes sorted topologically.

    Parameters
    ----------
    model : onnx.ModelProto
    opset : int, optional
        The opset the caller converts with (``from_onnx(opset=...)``), which stands in for a missing import.

    Raises
    ------
    KilnError
        Naming what is wrong and where.
    """
    import onnx

    if not model.HasField("graph"):
        raise KilnError("the ONNX model has no graph")
    _check_text(model.graph)
    if not model.graph.output:
        raise KilnError(f"ONNX graph {model.graph.name!r} has no outputs")
    imports = {entry.domain or "": int(entry.version) for entry in model.opset_import}
    if "ai.onnx" in imports:
        imports.setdefault("", imports.pop("ai.onnx"))
    if opset is not None:
        imports[""] = int(opset)
    if "" not in imports:
        raise KilnError("the ONNX model imports no opset for the default domain (its opset_import is empty): "
                        "re-export it, or give the opset with from_onnx(..., opset=N)")
    order = _topological_order(model.graph, set())
    if order != list(range(len(model.graph.node))):
        warnings.warn(f"ONNX graph {model.graph.name!r}: its nodes are not in topological order; kiln sorted them "
                      f"(as ONNX Runtime does)", stacklevel=3)
        sorted_model = onnx.ModelProto()
        sorted_model.CopyFrom(model)
        nodes = [sorted_model.graph.node[k] for k in order]
        copies = [onnx.NodeProto() for _ in nodes]
        for copy, node in zip(copies, nodes, strict=True):
            copy.CopyFrom(node)
        del sorted_model.graph.node[:]
        sorted_model.graph.node.extend(copies)
        model = sorted_model
    check_supported(model.graph, imports[""])  # every operator kiln cannot convert, listed at once, comes first
    context = onnx.checker.C.CheckerContext()
    context.ir_version = max(int(model.ir_version), 3)
    context.opset_imports = imports
    _check_graph(model.graph, context, set())
    return model


# kiln dtype -> the ONNX type string of a tensor of it
_TYPE_STRINGS = {"bool": "tensor(bool)", "int8": "tensor(int8)", "int16": "tensor(int16)", "int32": "tensor(int32)",
                 "int64": "tensor(int64)", "uint8": "tensor(uint8)", "uint16": "tensor(uint16)",
                 "uint32": "tensor(uint32)", "uint64": "tensor(uint64)", "float16": "tensor(float16)",
                 "float32": "tensor(float)", "float64": "tensor(double)"}


def check_input_types(node, opset, dtypes, where):
    """Raise KilnError when an input's element type (``dtypes``: kiln dtypes, None for omitted inputs or values
    that are not tensors) is not among those its operator's schema allows at ``opset``."""
    domain = "" if node.domain in DEFAULT_DOMAINS else node.domain
    schema = _schema(node.op_type, opset, domain)
    if schema is None or not schema.inputs:
        return
    allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
    for k, dtype in enumerate(dtypes):
        formal = schema.inputs[min(k, len(schema.inputs) - 1)]
        if k >= len(schema.inputs) and formal.option.name != "Variadic":
            return
        if dtype is None:
            continue
        types = allowed.get(formal.type_str, {formal.type_str})
        name = _TYPE_STRINGS.get(dtype)
        if name is not None and name not in types:
            readable = ", ".join(sorted(t.removeprefix("tensor(").removesuffix(")") for t in types
                                        if t.startswith("tensor(")))
            raise KilnError(f"{where}: input {k} ({formal.name}) is a tensor of {dtype}; {node.op_type} takes "
                            f"{readable}")


def _all_nodes(graph):
    """The nodes of ``graph`` and, depth first, of the subgraphs in their attributes (If branches)."""
    from onnx import AttributeProto

    for node in graph.node:
        yield node
        for a in node.attribute:
            if a.type == AttributeProto.GRAPH:
                yield from _all_nodes(a.g)
            elif a.type == AttributeProto.GRAPHS:
                for g in a.graphs:
                    yield from _all_nodes(g)


def check_supported(graph, opset):
    """Raise OpNotImplemented listing every op type of ``graph`` (subgraphs included) kiln cannot convert at
    ``opset``."""
    missing = []
    for node in _all_nodes(graph):
        label = node.op_type if node.domain in DEFAULT_DOMAINS else f"{node.domain}.{node.op_type}"
        converter = CONVERTERS.get(node.op_type) if node.domain in DEFAULT_DOMAINS else None
        if converter is not None and converter.get_converter(opset) is not None:
            continue
        if has_function(node.op_type, opset, "" if node.domain in DEFAULT_DOMAINS else node.domain):
            continue
        if converter is None:
            entry = label
        else:
            entry = f"{label} (opset {opset}; kiln converts it from opset {converter.versions()[0]})"
        if entry not in missing:
            missing.append(entry)
    if missing:
        raise OpNotImplemented(f"The following operators are not supported for frontend ONNX: {', '.join(missing)}")


def _check_text(graph):
    """Every name and op type of ``graph`` (and its subgraphs) is text: protobuf hands over bytes it cannot decode as
    UTF-8 instead of a str."""
    fields = [("graph name", graph.name)]
    fields += [(f"name of graph input #{k}", v.name) for k, v in enumerate(graph.input)]
    fields += [(f"name of graph output #{k}", v.name) for k, v in enumerate(graph.output)]
    fields += [(f"name of initializer #{k}", t.name) for k, t in enumerate(graph.initializer)]
    for k, node in enumerate(graph.node):
        where = f"ONNX node #{k}"
        fields += [(f"{where}: its name", node.name), (f"{where}: its op type", node.op_type),
                   (f"{where}: its domain", node.domain)]
        fields += [(f"{where}: an input name", i) for i in node.input]
        fields += [(f"{where}: an output name", o) for o in node.output]
        fields += [(f"{where}: an attribute name", a.name) for a in node.attribute]
        for sub in _subgraphs(node):
            _check_text(sub)
    for what, value in fields:
        if not isinstance(value, str):
            raise KilnError(f"{what} is not valid UTF-8 text: {bytes(value)[:40]!r}")


def _produced_names(graph, outer):
    return set(outer) | {i.name for i in graph.input} | {i.name for i in graph.initializer}


def _subgraphs(node):
    from onnx import AttributeProto

    for attr in node.attribute:
        if attr.type == AttributeProto.GRAPH:
            yield attr.g
        elif attr.type == AttributeProto.GRAPHS:
            yield from attr.graphs


def _captured(graph) -> set:
    """Names a subgraph's nodes read that the subgraph itself does not define (values of enclosing scopes)."""
    defined = _produced_names(graph, ()) | {o for n in graph.node for o in n.output}
    used = set()
    for node in graph.node:
        used.update(i for i in node.input if i)
        for sub in _subgraphs(node):
            used.update(_captured(sub))
    return used - defined


def _topological_order(graph, outer) -> list:
    """Indices of ``graph``'s nodes in a topological order, keeping the given order where it already is one."""
    available = _produced_names(graph, outer)
    producer = {}
    for k, node in enumerate(graph.node):
        for name in node.output:
            if not name:
                continue
            if name in producer or name in available:
                first = "an earlier node" if name in producer else "a graph input or initializer"
                raise KilnError(f"ONNX node {_label(graph, k)}: its output {name!r} is also produced by {first}")
            producer[name] = k
    needs = []
    for k, node in enumerate(graph.node):
        reads = [i for i in node.input if i] + [c for sub in _subgraphs(node) for c in _captured(sub)]
        deps = set()
        for name in reads:
            if name in producer:
                deps.add(producer[name])
            elif name not in available:
                raise KilnError(f"ONNX node {_label(graph, k)}: input {name!r} is not produced by any node, graph "
                                f"input or initializer")
        needs.append(deps)
    waiting = [len(deps) for deps in needs]
    consumers: list = [[] for _ in needs]
    for k, deps in enumerate(needs):
        for d in deps:
            consumers[d].append(k)
    ready = [k for k, count in enumerate(waiting) if count == 0]
    order: list = []
    while ready:
        first = heapq.heappop(ready)  # the earliest ready node: an already ordered graph keeps its order
        order.append(first)
        for k in consumers[first]:
            waiting[k] -= 1
            if waiting[k] == 0:
                heapq.heappush(ready, k)
    if len(order) < len(needs):
        placed = set(order)
        names = ", ".join(_label(graph, k) for k in [k for k in range(len(needs)) if k not in placed][:5])
        raise KilnError(f"ONNX graph {graph.name!r} has a cycle among the nodes {names}")
    return order


def _label(graph, k) -> str:
    node = graph.node[k]
    return f"{node.name or f'#{k}'!r} ({node.op_type})"


def _check_graph(graph, context, outer):
    from onnx import checker

    _check_initializers(graph)
    _check_inputs(graph)
    scope = checker.C.LexicalScopeContext()
    names = None  # what a subgraph may read: computed once, for the first node that has one
    for k, node in enumerate(graph.node):
        where = f"ONNX node {_label(graph, k)}"
        domain = "" if node.domain in DEFAULT_DOMAINS else node.domain
        schema = _schema(node.op_type, context.opset_imports[domain], domain) \
            if domain in context.opset_imports else None
        if schema is not None and any(True for _ in _subgraphs(node)):
            # the checker would check the branches without the enclosing scope's names (its scope cannot be filled
            # from Python): the node's own signature is checked here, its subgraphs below
            _check_signature(node, schema, where)
        elif schema is not None:
            try:
                checker.check_node(node, context, scope)
            except checker.ValidationError as exc:
                raise KilnError(f"{where}: {_first_line(exc)}") from None
        _check_attributes(node, where)
        for sub in _subgraphs(node):
            if names is None:
                names = outer | _produced_names(graph, ()) | {o for n in graph.node for o in n.output}
            _check_graph(sub, context, names)


def _schema(op_type, version, domain):
    from onnx import defs

    try:
        return defs.get_schema(op_type, version, domain)
    except Exception:  # SchemaError: unknown here; check_supported reports operators kiln cannot convert
        return None


def _check_signature(node, schema, where):
    """What ``check_node`` checks of a node itself: input and output counts, required, unknown and mistyped
    attributes."""
    for what, count, low, high in (("inputs", len(node.input), schema.min_input, schema.max_input),
                                   ("outputs", len(node.output), schema.min_output, schema.max_output)):
        if not low <= count <= high:
            raise KilnError(f"{where}: has {count} {what}, its schema allows {low} to {high}")
    given = {a.name: a for a in node.attribute}
    for name, spec in schema.attributes.items():
        if spec.required and name not in given:
            raise KilnError(f"{where}: the required attribute {name!r} is missing")
        if name in given and int(given[name].type) != int(spec.type):
            raise KilnError(f"{where}: attribute {name!r} has type {given[name].type}, its schema says {spec.type}")
    unknown = [name for name in given if name not in schema.attributes]
    if unknown:
        raise KilnError(f"{where}: unknown attribute {unknown[0]!r} for {node.op_type}")


def _first_line(exc) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _check_attributes(node, where):
    from onnx import AttributeProto

    for attr in node.attribute:
        if attr.type == AttributeProto.STRING:
            _utf8(attr.s, f"{where}: attribute {attr.name!r}")
        elif attr.type == AttributeProto.STRINGS:
            for s in attr.strings:
                _utf8(s, f"{where}: attribute {attr.name!r}")
        rule = ATTRIBUTE_RULES.get(attr.name)
        if rule is None or node.op_type not in RULE_OPS:
            continue
        values = list(attr.ints) if attr.type == AttributeProto.INTS else [attr.i] if attr.type == AttributeProto.INT \
            else None
        if values is not None and not rule[0](values):
            raise KilnError(f"{where}: attribute {attr.name!r} {rule[1]}, got {values}")


def _utf8(data: bytes, where):
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KilnError(f"{where} is not valid UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _declared_bytes(dims, itemsize, what) -> int:
    if any(d < 0 for d in dims):
        raise KilnError(f"{what} has a negative dimension: {list(dims)}")
    count = int(np.prod([int(d) for d in dims], dtype=object)) if dims else 1
    nbytes = count * itemsize
    if nbytes > physical_memory():
        raise KilnError(f"{what} declares {list(dims)} ({nbytes / 2**30:,.1f} GiB), more than this machine's "
                        f"memory ({physical_memory() / 2**30:,.1f} GiB)")
    return count


# TensorProto element type -> the typed field holding its values when raw_data is empty, and values per element
_TYPED_FIELD = {1: ("float_data", 1), 2: ("int32_data", 1), 3: ("int32_data", 1), 4: ("int32_data", 1),
                5: ("int32_data", 1), 6: ("int32_data", 1), 7: ("int64_data", 1), 9: ("int32_data", 1),
                10: ("int32_data", 1), 11: ("double_data", 1), 12: ("uint64_data", 1), 13: ("uint64_data", 1),
                14: ("float_data", 2), 15: ("double_data", 2), 16: ("int32_data", 1)}


def check_tensor(tensor, what):
    """Check an initializer or tensor attribute: element type, dimensions, and data of the declared size."""
    from onnx import TensorProto, helper

    if tensor.data_location == TensorProto.EXTERNAL and not tensor.raw_data:
        location = {e.key: e.value for e in tensor.external_data}.get("location", "?")
        raise KilnError(f"{what} keeps its data in the external file {location!r}, which was not loaded (load the "
                        f"model from its path, next to that file)")
    if tensor.data_type == TensorProto.STRING:
        return
    try:
        itemsize = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
    except (KeyError, TypeError, ValueError):
        raise KilnError(f"{what} has the unknown ONNX element type {tensor.data_type}") from None
    count = _declared_bytes(tensor.dims, itemsize, what)
    if tensor.HasField("raw_data"):
        if len(tensor.raw_data) != count * itemsize:
            raise KilnError(f"{what}: its raw data has {len(tensor.raw_data)} bytes, its dims {list(tensor.dims)} "
                            f"and type {TensorProto.DataType.Name(tensor.data_type)} need {count * itemsize}")
        return
    field, per = _TYPED_FIELD.get(tensor.data_type, (None, 1))
    if field is None:
        return
    have = len(getattr(tensor, field))
    if have != count * per:
        raise KilnError(f"{what}: it holds {have} values in {field}, its dims {list(tensor.dims)} need {count * per}")


def _check_initializers(graph):
    for init in graph.initializer:
        check_tensor(init, f"initializer {init.name!r}")


def _check_inputs(graph):
    from onnx import helper

    for info in graph.input:
        ttype = info.type.tensor_type
        if not info.type.HasField("tensor_type") or not ttype.HasField("shape"):
            continue
        dims = [d.dim_value for d in ttype.shape.dim if d.HasField("dim_value")]
        try:
            itemsize = np.dtype(helper.tensor_dtype_to_np_dtype(ttype.elem_type)).itemsize
        except (KeyError, TypeError, ValueError):
            itemsize = 1
        _declared_bytes(dims, itemsize, f"graph input {info.name!r}")
