"""ONNX operators defined as functions: expanding a node into the nodes of its function body.

Many ONNX operators (Swish, RMSNormalization, Attention, GroupNormalization...) come with a definition in terms of
other ONNX operators, a ``FunctionProto`` in their schema; some bodies depend on the node's attributes and input
types ("context-dependent" functions). When kiln has no converter for such an operator, the graph converter
replaces the node by its body: formal inputs and outputs are renamed to the node's actual ones, internal values get
a prefix unique to the node, attributes that refer to the node's (``ref_attr_name``) are resolved against the node
or the schema defaults, and the body is converted at the opset its function declares.
"""

import numpy as np

from ....error import OpNotImplemented

DEFAULT_DOMAINS = ("", "ai.onnx")


def _schema(op_type, opset, domain):
    from onnx import defs

    try:
        return defs.get_schema(op_type, opset, domain)
    except Exception:  # SchemaError: no such operator at this opset
        return None


def _latest(versions, opset):
    usable = [v for v in versions if v <= opset]
    return max(usable) if usable else None


def has_function(op_type, opset, domain=""):
    """Whether the schema of ``op_type`` at ``opset`` defines the operator as a (possibly context-dependent)
    function."""
    schema = _schema(op_type, opset, domain)
    if schema is None:
        return False
    return (_latest(schema.function_opset_versions, opset) is not None
            or _latest(schema.context_dependent_function_opset_versions, opset) is not None)


def _type_proto(ttype):
    from onnx import helper

    elem = helper.np_dtype_to_tensor_dtype(np.dtype(ttype.dtype))
    return helper.make_tensor_type_proto(elem, list(ttype.shape))


def function_body(node, opset, input_types):
    """The function defining ``node`` at ``opset``: ``(FunctionProto, body opset)``; ``input_types`` are the
    TensorTypes of the node's inputs (None for omitted ones), for context-dependent bodies.

    Raises OpNotImplemented when the schema defines no function.
    """
    from onnx import FunctionProto, helper

    domain = "" if node.domain in DEFAULT_DOMAINS else node.domain
    schema = _schema(node.op_type, opset, domain)
    label = node.op_type if not domain else f"{domain}.{node.op_type}"
    if schema is None:
        raise OpNotImplemented(f"The following operators are not supported for frontend ONNX: {label}")
    proto = FunctionProto()
    version = _latest(schema.function_opset_versions, opset)
    if version is not None:
        proto.ParseFromString(schema.get_function_with_opset_version(version))
    else:
        version = _latest(schema.context_dependent_function_opset_versions, opset)
        if version is None:
            raise OpNotImplemented(f"The following operators are not supported for frontend ONNX: {label}")
        full = _with_defaults(node, schema)
        types = [_type_proto(t) if t is not None else helper.make_tensor_type_proto(0, None) for t in input_types]
        proto.ParseFromString(schema.get_context_dependent_function_with_opset_version(
            version, full.SerializeToString(), [t.SerializeToString() for t in types]))
    # the body's own import of the default domain (a body of another domain may not declare one: keep the caller's)
    body_opset = next((int(o.version) for o in proto.opset_import if o.domain in DEFAULT_DOMAINS), None)
    return proto, body_opset if body_opset is not None else (version if not domain else opset)


def _with_defaults(node, schema):
    """A copy of ``node`` with the schema's default attributes added where the node omits them."""
    from onnx import NodeProto

    full = NodeProto()
    full.CopyFrom(node)
    present = {a.name for a in node.attribute}
    for name, spec in schema.attributes.items():
        if name not in present and spec.default_value is not None and spec.default_value.name:
            full.attribute.append(spec.default_value)
    return full


def expand(node, proto, prefix, opset):
    """The nodes of ``proto`` instantiated for ``node``: values renamed, attribute references resolved."""
    from onnx import NodeProto

    domain = "" if node.domain in DEFAULT_DOMAINS else node.domain
    schema = _schema(node.op_type, opset, domain)
    attrs = {a.name: a for a in _with_defaults(node, schema).attribute} if schema is not None else {}
    for a in proto.attribute_proto:  # defaults the function itself declares
        attrs.setdefault(a.name, a)
    names = {formal: (node.input[i] if i < len(node.input) else "") for i, formal in enumerate(proto.input)}
    names.update({formal: (node.output[i] if i < len(node.output) else "") for i, formal in enumerate(proto.output)})

    def rename(value):
        if not value:
            return ""
        return names[value] if value in names else f"{prefix}{value}"

    nodes = []
    for body_node in proto.node:
        new = NodeProto()
        new.CopyFrom(body_node)
        del new.input[:], new.output[:], new.attribute[:]
        new.input.extend(rename(i) for i in body_node.input)
        new.output.extend(rename(o) for o in body_node.output)
        for a in body_node.attribute:
            if a.ref_attr_name:
                if a.ref_attr_name not in attrs:
                    continue  # an optional attribute the node leaves unset
                resolved = type(a)()
                resolved.CopyFrom(attrs[a.ref_attr_name])
                resolved.name = a.name
                new.attribute.append(resolved)
            else:
                new.attribute.append(_renamed_subgraphs(a, rename))
        nodes.append(new)
    return nodes


def _renamed_subgraphs(attribute, rename):
    """``attribute``, its subgraphs (a Loop or Scan body, If branches) with every value renamed by ``rename``: their
    references to the function's values must follow those values' new names, and their own values get the same
    prefix, so they stay distinct from the caller's."""
    from onnx import AttributeProto

    if attribute.type not in (AttributeProto.GRAPH, AttributeProto.GRAPHS):
        return attribute
    new = AttributeProto()
    new.CopyFrom(attribute)
    for graph in ([new.g] if attribute.type == AttributeProto.GRAPH else list(new.graphs)):
        _rename_graph(graph, rename)
    return new


def _rename_graph(graph, rename):
    for info in list(graph.input) + list(graph.output) + list(graph.value_info):
        info.name = rename(info.name)
    for init in graph.initializer:
        init.name = rename(init.name)
    for node in graph.node:
        inputs, outputs = [rename(i) for i in node.input], [rename(o) for o in node.output]
        del node.input[:], node.output[:]
        node.input.extend(inputs)
        node.output.extend(outputs)
        for a in node.attribute:
            if a.type == a.GRAPH:
                _rename_graph(a.g, rename)
            elif a.type == a.GRAPHS:
                for g in a.graphs:
                    _rename_graph(g, rename)
