"""Layers that create their own weights (TVM's ``relay.testing.layers``), for building model-zoo networks.

TVM's layers create untyped weight variables and leave their shapes to type inference. kiln's type inference wants
every parameter annotated, so these layers give each weight the shape it must have: they read the type of the
layer's input (:func:`type_of`) and derive the weight's shape from the operator's attributes and layouts, as the
operator's type relation would constrain it. Weights are named as in TVM (``{name}_weight``, ``{name}_gamma``...),
so parameters keep their TVM names.

:func:`type_of` types one new node at a time: each node's type is computed from its operands' (cached) types with
a one-node function, so building a network of ``n`` layers costs ``O(n)`` type computations, not ``O(n^2)``.

Examples
--------
>>> data = relay.var("data", shape=(1, 3, 32, 32))
>>> conv = layers.conv2d(data, channels=8, kernel_size=(3, 3), padding=(1, 1), name="conv0")
>>> type_of(conv).shape
(1, 8, 32, 32)
"""

from ...error import KilnError
from ...ir.op import Op
from ...ir.type import TensorType
from .. import op as _op
from ..expr import Call, Constant, Tuple, TupleGetItem, Var, var
from ..transform.infer_type import infer_type

__all__ = ["type_of", "batch_norm_infer", "conv2d", "conv3d", "conv2d_transpose", "dense_add_bias", "bias_add",
           "conv_kernel_layout"]

# id(expr) -> (expr, type). Holding the expression keeps its id from being reused while the entry lives.
_TYPES: dict = {}
_MAX_CACHED = 200_000


def _cached(expr):
    entry = _TYPES.get(id(expr))
    return None if entry is None or entry[0] is not expr else entry[1]


def _children(expr) -> tuple:
    if isinstance(expr, Call) and isinstance(expr.op, Op):
        return tuple(expr.args)
    if isinstance(expr, Tuple):
        return tuple(expr.fields)
    if isinstance(expr, TupleGetItem):
        return (expr.tuple_value,)
    return ()


def _local_type(expr, child_types):
    """The type of ``expr`` given its operands' types: a call is typed with annotated stand-ins for its
    operands; anything else but a tuple or projection is typed whole."""
    if isinstance(expr, Var):
        if expr.type_annotation is None:
            raise KilnError(f"layers: variable %{expr.name_hint} has no type annotation (give it a shape)")
        return expr.type_annotation
    if isinstance(expr, Tuple):
        from ...ir.type import TupleType

        return TupleType(tuple(child_types))
    if isinstance(expr, TupleGetItem):
        return child_types[0].fields[expr.index]
    if isinstance(expr, Call) and isinstance(expr.op, Op):
        stand_ins = tuple(var(f"arg{i}", t) for i, t in enumerate(child_types))
        return infer_type(expr.with_fields(args=stand_ins)).checked_type
    if isinstance(expr, Constant):
        return expr.checked_type_
    return infer_type(expr).checked_type


def type_of(expr):
    """The type of a Relay expression whose free variables are annotated (cached per node; see the module
    docstring)."""
    if len(_TYPES) > _MAX_CACHED:
        _TYPES.clear()
    stack = [expr]
    while stack:
        node = stack[-1]
        if _cached(node) is not None:
            stack.pop()
            continue
        pending = [c for c in _children(node) if _cached(c) is None]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        _TYPES[id(node)] = (node, _local_type(node, [_cached(c) for c in _children(node)]))
    return _cached(expr)


def _tensor_type(data, what) -> TensorType:
    ttype = type_of(data)
    if not isinstance(ttype, TensorType):
        raise KilnError(f"layers.{what}: the input must be a tensor, got type {ttype}")
    return ttype


def _param(name, shape, dtype):
    return var(name, shape=tuple(int(s) for s in shape), dtype=dtype)


def _need_name(kwargs, what) -> str:
    name = kwargs.pop("name", None)
    if not name:
        raise KilnError(f"layers.{what}: give a name= for the weights it creates")
    return name


def _pair(value, n) -> tuple:
    return tuple(value) if isinstance(value, list | tuple) else (value,) * n


def batch_norm_infer(data, gamma=None, beta=None, moving_mean=None, moving_var=None, **kwargs):
    """``batch_norm(...)[0]`` creating ``{name}_gamma``, ``_beta``, ``_moving_mean``, ``_moving_var`` of the size
    of the channel axis (``axis``, 1 by default) where not given."""
    name = _need_name(kwargs, "batch_norm_infer")
    ttype = _tensor_type(data, "batch_norm_infer")
    axis = kwargs.get("axis", 1)
    channels = ttype.shape[axis]
    made = {}
    for key, given in (("gamma", gamma), ("beta", beta), ("moving_mean", moving_mean), ("moving_var", moving_var)):
        made[key] = given if given is not None else _param(f"{name}_{key}", (channels,), ttype.dtype)
    return _op.nn.batch_norm(data, made["gamma"], made["beta"], made["moving_mean"], made["moving_var"],
                             **kwargs)[0]


def _kernel_shape(kernel_layout, sizes) -> tuple:
    """The weight shape of a convolution: each letter of ``kernel_layout`` replaced by its size in ``sizes``."""
    try:
        return tuple(sizes[letter] for letter in kernel_layout)
    except KeyError as exc:
        raise KilnError(f"layers: unsupported kernel layout {kernel_layout!r}") from exc


def _conv_weight(data, kwargs, spatial, default_data, default_kernel, transpose, what):
    ttype = _tensor_type(data, what)
    data_layout = kwargs.get("data_layout", default_data)
    kernel_layout = kwargs.get("kernel_layout", default_kernel)
    channels, kernel_size = kwargs.get("channels"), kwargs.get("kernel_size")
    if channels is None or kernel_size is None:
        raise KilnError(f"layers.{what}: channels= and kernel_size= are needed to create the weight")
    groups = int(kwargs.get("groups", 1))
    in_channels = ttype.shape[data_layout.index("C")]
    kernel = _pair(kernel_size, len(spatial))
    sizes = dict(zip(spatial, kernel, strict=True))
    if transpose:  # conv2d_transpose: I is the input's channels, O the output's per group
        sizes.update(I=in_channels, O=int(channels) // groups)
    else:
        sizes.update(O=int(channels), I=in_channels // groups)
    return _kernel_shape(kernel_layout, sizes), ttype.dtype


def conv2d(data, weight=None, **kwargs):
    """``nn.conv2d``, creating ``{name}_weight`` (shaped by ``channels``, ``kernel_size``, ``groups`` and the
    layouts) when ``weight`` is not given."""
    name = _need_name(kwargs, "conv2d")
    if weight is None:
        shape, dtype = _conv_weight(data, kwargs, "HW", "NCHW", "OIHW", False, "conv2d")
        weight = _param(f"{name}_weight", shape, dtype)
    return _op.nn.conv2d(data, weight, **kwargs)


def conv3d(data, weight=None, **kwargs):
    """``nn.conv3d``, creating ``{name}_weight`` when ``weight`` is not given."""
    name = _need_name(kwargs, "conv3d")
    if weight is None:
        shape, dtype = _conv_weight(data, kwargs, "DHW", "NCDHW", "OIDHW", False, "conv3d")
        weight = _param(f"{name}_weight", shape, dtype)
    return _op.nn.conv3d(data, weight, **kwargs)


def conv2d_transpose(data, weight=None, **kwargs):
    """``nn.conv2d_transpose``, creating ``{name}_weight`` (layout ``IOHW`` by default) when not given."""
    name = _need_name(kwargs, "conv2d_transpose")
    if weight is None:
        shape, dtype = _conv_weight(data, kwargs, "HW", "NCHW", "IOHW", True, "conv2d_transpose")
        weight = _param(f"{name}_weight", shape, dtype)
    return _op.nn.conv2d_transpose(data, weight, **kwargs)


def dense_add_bias(data, weight=None, bias=None, units=None, **kwargs):
    """``bias_add(dense(data, weight), bias)``, creating ``{name}_weight`` ``(units, in)`` and ``{name}_bias``
    ``(units,)`` where not given."""
    name = _need_name(kwargs, "dense_add_bias")
    if weight is None or bias is None:
        if units is None:
            raise KilnError("layers.dense_add_bias: units= is needed to create the weight and bias")
        ttype = _tensor_type(data, "dense_add_bias")
        if weight is None:
            weight = _param(f"{name}_weight", (units, ttype.shape[-1]), ttype.dtype)
        if bias is None:
            bias = _param(f"{name}_bias", (units,), ttype.dtype)
    out = _op.nn.dense(data, weight, units, **kwargs)
    return _op.nn.bias_add(out, bias, axis=-1)


def bias_add(data, name, axis=1):
    """``nn.bias_add`` with a new bias variable ``name`` of the size of ``data``'s axis ``axis`` (kiln's helper
    for TVM's ``bias_add(x, relay.var(name))``, whose shape TVM leaves to inference)."""
    ttype = _tensor_type(data, "bias_add")
    return _op.nn.bias_add(data, _param(name, (ttype.shape[axis],), ttype.dtype), axis=axis)


def conv_kernel_layout(data_layout, is_depthwise=False) -> str:
    """The kernel layout matching ``data_layout``: ``OIHW`` for NCHW; ``HWIO`` (``HWOI`` depthwise) for NHWC."""
    mapping = {"NCHW": "OIHW", "NHWC": "HWOI" if is_depthwise else "HWIO"}
    if data_layout not in mapping:
        raise KilnError(f"conv_kernel_layout: unknown data layout {data_layout!r} (NCHW or NHWC)")
    return mapping[data_layout]
