"""Convolutions beyond ``nn.conv2d`` (``relay.nn``): ``nn.conv1d nn.conv3d nn.conv1d_transpose nn.conv2d_transpose
nn.conv3d_transpose``, and the poolings beyond 2-D: ``nn.max_pool1d nn.avg_pool1d nn.max_pool3d nn.avg_pool3d``,
``nn.adaptive_{avg,max}_pool{1,2,3}d``; ``nn.deformable_conv2d``; ``nn.contrib_conv2d_NCHWc`` and
``nn.contrib_depthwise_conv2d_NCHWc`` (``nn.conv2d`` in blocked layouts, under TVM's names).

Each type relation reads the data and kernel through their layouts' primal axes (``NCW``/``OIW``, ``NCDHW``/
``OIDHW``; the transposed convolutions' kernels are ``IO...``), so any layout with those axes types.
"""

from ...error import TypeInferenceError
from ...ir.op import register_op_attr
from ...ir.type import TensorType
from ...tir.layout import layout as parse_layout
from ...topi.nn.conv2d import conv_out_size
from ...topi.nn.convnd import conv_transpose_out_size
from ...topi.nn.pooling import pool_out_size
from . import attrs as AS
from . import attrs_image as AI
from . import attrs_nn as A
from .op import OpPattern, make_call, register_relay_op
from .type_relations import (
    FLOAT,
    NUMERIC,
    check_dtype,
    dims_match,
    nonpositive,
    same_dtype,
    shapes_match,
    tensor_arg,
)


def _primal(ttype, layout_name, what, op):
    try:
        return parse_layout(layout_name).shape_to_primal(ttype.shape)
    except Exception as exc:  # KilnError from the layout helper, reported as a typing error
        raise TypeInferenceError(f"{op}: {what} {ttype} does not fit layout {layout_name}: {exc}") from exc


def _from_primal(sizes, layout_name, dtype):
    return TensorType(parse_layout(layout_name).shape_from_primal(sizes), dtype)


def depthwise_multiplier(channels, kernel_o, kernel_i, groups) -> bool:
    """Whether a convolution's kernel is in TVM's depthwise form with a channel multiplier: with ``groups`` equal to
    the data's ``channels``, an ``O x I`` kernel of ``channels x multiplier`` (``multiplier > 1``) gives output channel
    ``c * multiplier + m`` from input channel ``c`` and kernel row ``(c, m)``. It is the ``(O, 1, ...)`` grouped
    kernel reshaped, and unambiguous: a grouped kernel of that convolution has ``I = 1``. TVM's relation accepts it
    when ``channels`` (the attribute) is ``channels x multiplier``. (kiln's ``nn.conv1d`` and ``nn.conv3d`` take it;
    ``nn.conv2d``, whose x86 layout and depthwise paths assume ``I = 1``, refuses it.)"""
    return isinstance(kernel_i, int) and kernel_i > 1 and groups > 1 and groups == channels == kernel_o


def _conv_rel(op, spatial, transpose):
    def relation(types, attrs):
        data, weight = tensor_arg(types, 0, "data"), tensor_arg(types, 1, "weight")
        d = _primal(data, attrs.data_layout, "data", op)
        w = _primal(weight, attrs.kernel_layout, "weight", op)
        if set(d) != set("NC" + spatial) or set(w) != set("OI" + spatial):
            raise TypeInferenceError(f"{op}: data layout {attrs.data_layout} must have axes NC{spatial} and kernel "
                                     f"layout {attrs.kernel_layout} OI{spatial}")
        g = attrs.groups
        in_per_group, out_channels = (w["I"], w["O"]) if not transpose else (w["I"] // g, w["O"] * g)
        if transpose and (w["I"] != d["C"] or d["C"] % g):
            raise TypeInferenceError(f"{op}: data {data} has {d['C']} channels, weight {weight} expects {w['I']} "
                                     f"(groups={g})")
        if not transpose and depthwise_multiplier(d["C"], w["O"], w["I"], g) and attrs.channels == d["C"] * w["I"]:
            out_channels = attrs.channels  # TVM's depthwise weight (C, multiplier, ...): see depthwise_multiplier
        elif not transpose and (not dims_match(d["C"], w["I"] * g) or w["O"] % g):
            raise TypeInferenceError(f"{op}: data has {d['C']} input channels, weight {weight} expects "
                                     f"{w['I']} x groups={g} = {w['I'] * g}")
        del in_per_group
        if attrs.channels is not None and attrs.channels != out_channels:
            raise TypeInferenceError(f"{op}: channels={attrs.channels} but weight {weight} gives {out_channels}")
        ksize = tuple(w[a] for a in spatial)
        if attrs.kernel_size is not None and tuple(attrs.kernel_size) != ksize:
            raise TypeInferenceError(f"{op}: kernel_size={list(attrs.kernel_size)} but weight {weight} has "
                                     f"{list(ksize)}")
        if attrs.out_dtype:
            check_dtype(attrs.out_dtype, NUMERIC, "out_dtype", op)
        else:
            same_dtype([data, weight], f"{op} data and weight")
        n = len(spatial)
        out = {"N": d["N"], "C": out_channels}
        for j, a in enumerate(spatial):
            before, after = attrs.padding[j], attrs.padding[n + j]
            if transpose:
                out[a] = conv_transpose_out_size(d[a], w[a], attrs.strides[j], attrs.dilation[j], before, after,
                                                 attrs.output_padding[j])
            else:
                out[a] = conv_out_size(d[a], w[a], attrs.strides[j], attrs.dilation[j], before, after)
            if nonpositive(out[a]):
                raise TypeInferenceError(f"{op}: weight {weight} and padding {list(attrs.padding)} leave no output "
                                         f"of {data}")
        return _from_primal(out, attrs.out_layout or attrs.data_layout, attrs.out_dtype or data.dtype)

    return relation


def conv_weight_types(op, spatial, transpose):
    """``FInferArgTypes`` of a convolution: an untyped weight is found from the data's channels, ``channels``,
    ``groups`` and ``kernel_size`` in the kernel layout, as TVM's convolution relations do (a depthwise convolution,
    ``channels == groups``, gets one input channel per group)."""
    def complete(types, attrs):
        data = tensor_arg(types, 0, "data")
        if types[1] is not None:
            return types
        if attrs.channels is None or attrs.kernel_size is None:
            raise TypeInferenceError(f"{op}: an untyped weight needs channels= and kernel_size= to be inferred")
        c, g, channels = _primal(data, attrs.data_layout, "data", op)["C"], attrs.groups, attrs.channels
        if transpose:
            primal = {"I": c, "O": channels // g}
        elif channels == g and channels != 1:
            primal = {"O": c, "I": g // c}
        else:
            primal = {"O": channels, "I": c // g}
        primal.update(zip(spatial, attrs.kernel_size, strict=True))
        return [data, _from_primal(primal, attrs.kernel_layout, data.dtype)]

    return complete


_CONVS = {"nn.conv1d": ("W", False, A.Conv1DAttrs), "nn.conv3d": ("DHW", False, A.Conv3DAttrs),
          "nn.conv1d_transpose": ("W", True, A.Conv1DTransposeAttrs),
          "nn.conv2d_transpose": ("HW", True, A.Conv2DTransposeAttrs),
          "nn.conv3d_transpose": ("DHW", True, A.Conv3DTransposeAttrs)}
for _name, (_spatial, _transpose, _attrs) in _CONVS.items():
    register_relay_op(_name, 2, _conv_rel(_name, _spatial, _transpose), OpPattern.OUT_ELEMWISE_FUSABLE, _attrs,
                      dtypes=NUMERIC)
    register_op_attr(_name, "FInferArgTypes", conv_weight_types(_name, _spatial, _transpose))


def conv1d(data, weight, strides=1, padding=0, dilation=1, groups=1, channels=None, kernel_size=None,
           data_layout="NCW", kernel_layout="OIW", out_layout="", out_dtype=""):
    """1-D convolution (TVM's signature); ``padding`` is an int or ``(left, right)``."""
    return make_call("nn.conv1d", [data, weight], A.Conv1DAttrs(
        strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout, out_layout, out_dtype))


def conv3d(data, weight, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, channels=None,
           kernel_size=None, data_layout="NCDHW", kernel_layout="OIDHW", out_layout="", out_dtype=""):
    """3-D convolution; ``padding`` is an int, ``(d, h, w)`` or ``(front, top, left, back, bottom, right)``."""
    return make_call("nn.conv3d", [data, weight], A.Conv3DAttrs(
        strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout, out_layout, out_dtype))


def conv1d_transpose(data, weight, strides=(1,), padding=(0,), dilation=(1,), groups=1, channels=None,
                     kernel_size=None, data_layout="NCW", kernel_layout="IOW", out_layout="", output_padding=(0,),
                     out_dtype=""):
    """1-D transposed convolution (the gradient of ``conv1d`` with respect to its input)."""
    return make_call("nn.conv1d_transpose", [data, weight], A.Conv1DTransposeAttrs(
        channels, kernel_size, strides, padding, output_padding, dilation, groups, data_layout, kernel_layout,
        out_layout, out_dtype))


def conv2d_transpose(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, channels=None,
                     kernel_size=None, data_layout="NCHW", kernel_layout="IOHW", out_layout="",
                     output_padding=(0, 0), out_dtype=""):
    """2-D transposed convolution (the gradient of ``conv2d`` with respect to its input)."""
    return make_call("nn.conv2d_transpose", [data, weight], A.Conv2DTransposeAttrs(
        channels, kernel_size, strides, padding, output_padding, dilation, groups, data_layout, kernel_layout,
        out_layout, out_dtype))


def conv3d_transpose(data, weight, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1), groups=1,
                     channels=None, kernel_size=None, data_layout="NCDHW", kernel_layout="IODHW", out_layout="",
                     output_padding=(0, 0, 0), out_dtype=""):
    """3-D transposed convolution (the gradient of ``conv3d`` with respect to its input)."""
    return make_call("nn.conv3d_transpose", [data, weight], A.Conv3DTransposeAttrs(
        channels, kernel_size, strides, padding, output_padding, dilation, groups, data_layout, kernel_layout,
        out_layout, out_dtype))


# ------------------------------------------------------------------------------------------------- 1-D/3-D pooling
def _pool_rel(op, spatial):
    def relation(types, attrs):
        data = tensor_arg(types, 0, "data")
        d = _primal(data, attrs.layout, "data", op)
        if any(a not in d for a in spatial):
            raise TypeInferenceError(f"{op}: layout {attrs.layout} has no {spatial} axes")
        n, out = len(spatial), dict(d)
        for j, a in enumerate(spatial):
            out[a] = pool_out_size(d[a], attrs.pool_size[j], attrs.strides[j], attrs.dilation[j], attrs.padding[j],
                                   attrs.padding[n + j], attrs.ceil_mode)
            if nonpositive(out[a]):
                raise TypeInferenceError(f"{op}: pool_size {list(attrs.pool_size)} is larger than the padded input "
                                         f"{data}")
        return _from_primal(out, attrs.out_layout or attrs.layout, data.dtype)

    return relation


_POOLS = {"nn.max_pool1d": ("W", A.MaxPool1DAttrs), "nn.avg_pool1d": ("W", A.AvgPool1DAttrs),
          "nn.max_pool3d": ("DHW", A.MaxPool3DAttrs), "nn.avg_pool3d": ("DHW", A.AvgPool3DAttrs)}
for _name, (_spatial, _attrs) in _POOLS.items():
    register_relay_op(_name, 1, _pool_rel(_name, _spatial), OpPattern.OUT_ELEMWISE_FUSABLE, _attrs, dtypes=NUMERIC)


def max_pool1d(data, pool_size=(1,), strides=(1,), dilation=(1,), padding=(0,), layout="NCW", out_layout="",
               ceil_mode=False):
    """1-D max pooling."""
    return make_call("nn.max_pool1d", [data], A.MaxPool1DAttrs(pool_size, strides, dilation, padding, layout,
                                                               out_layout, ceil_mode))


def avg_pool1d(data, pool_size=(1,), strides=(1,), dilation=(1,), padding=(0,), layout="NCW", out_layout="",
               ceil_mode=False, count_include_pad=False):
    """1-D average pooling."""
    return make_call("nn.avg_pool1d", [data], A.AvgPool1DAttrs(pool_size, strides, dilation, padding, layout,
                                                               out_layout, ceil_mode, count_include_pad))


def max_pool3d(data, pool_size=(1, 1, 1), strides=(1, 1, 1), dilation=(1, 1, 1), padding=(0, 0, 0),
               layout="NCDHW", out_layout="", ceil_mode=False):
    """3-D max pooling."""
    return make_call("nn.max_pool3d", [data], A.MaxPool3DAttrs(pool_size, strides, dilation, padding, layout,
                                                               out_layout, ceil_mode))


def avg_pool3d(data, pool_size=(1, 1, 1), strides=(1, 1, 1), dilation=(1, 1, 1), padding=(0, 0, 0),
               layout="NCDHW", out_layout="", ceil_mode=False, count_include_pad=False):
    """3-D average pooling."""
    return make_call("nn.avg_pool3d", [data], A.AvgPool3DAttrs(pool_size, strides, dilation, padding, layout,
                                                               out_layout, ceil_mode, count_include_pad))


def _adaptive_rel(op, spatial):
    def relation(types, attrs):
        data = tensor_arg(types, 0, "data")
        d = _primal(data, attrs.layout, "data", op)
        if any(a not in d for a in spatial):
            raise TypeInferenceError(f"{op}: layout {attrs.layout} has no {spatial} axes")
        out = dict(d)
        for j, a in enumerate(spatial):
            out[a] = attrs.output_size[j] if attrs.output_size else d[a]
        return _from_primal(out, attrs.out_layout or attrs.layout, data.dtype)

    return relation


_ADAPTIVE = {1: ("W", A.AdaptivePool1DAttrs, "NCW"), 2: ("HW", A.AdaptivePool2DAttrs, "NCHW"),
             3: ("DHW", A.AdaptivePool3DAttrs, "NCDHW")}
for _n, (_spatial, _attrs, _layout) in _ADAPTIVE.items():
    for _kind in ("avg", "max"):
        register_relay_op(f"nn.adaptive_{_kind}_pool{_n}d", 1, _adaptive_rel(f"nn.adaptive_{_kind}_pool{_n}d",
                                                                              _spatial),
                          OpPattern.OUT_ELEMWISE_FUSABLE, _attrs, dtypes=NUMERIC)


def _adaptive(kind, n):
    spatial, attrs_type, default_layout = _ADAPTIVE[n]

    def build(data, output_size=None, layout=default_layout, out_layout=""):
        if isinstance(output_size, int):
            output_size = (output_size,) * n
        return make_call(f"nn.adaptive_{kind}_pool{n}d", [data],
                         attrs_type(None if output_size is None else tuple(output_size), layout, out_layout))

    build.__name__ = f"adaptive_{kind}_pool{n}d"
    build.__doc__ = (f"Adaptive {kind} pooling of the {spatial} axes to ``output_size`` (the input size when None): "
                     "each output cell pools its proportional share of the input.")
    return build


adaptive_avg_pool1d, adaptive_max_pool1d = _adaptive("avg", 1), _adaptive("max", 1)
adaptive_avg_pool2d, adaptive_max_pool2d = _adaptive("avg", 2), _adaptive("max", 2)
adaptive_avg_pool3d, adaptive_max_pool3d = _adaptive("avg", 3), _adaptive("max", 3)


def _global(kind, n):
    adaptive = _adaptive(kind, n)
    default_layout = _ADAPTIVE[n][2]

    def build(data, layout=default_layout, out_layout=""):
        return adaptive(data, (1,) * n, layout, out_layout)

    build.__name__ = f"global_{kind}_pool{n}d"
    build.__doc__ = (f"Global {kind} pooling over the {_ADAPTIVE[n][0]} axes (TVM's: adaptive {kind} pooling to "
                     "size 1).")
    return build


global_avg_pool1d, global_max_pool1d = _global("avg", 1), _global("max", 1)
global_avg_pool3d, global_max_pool3d = _global("avg", 3), _global("max", 3)


# -------------------------------------------------------------------------------------------- deformable convolution
def _deformable_sizes(data, weight_hw, attrs):
    """The data's primal sizes and the output's (``N C H W``) for a kernel of spatial size ``weight_hw``."""
    op = "nn.deformable_conv2d"
    d = _primal(data, attrs.data_layout, "data", op)
    oh, ow = (conv_out_size(d[a], k, attrs.strides[j], attrs.dilation[j], attrs.padding[j], attrs.padding[2 + j])
              for j, (a, k) in enumerate(zip("HW", weight_hw, strict=True)))
    if nonpositive(oh) or nonpositive(ow):
        raise TypeInferenceError(f"{op}: a {weight_hw[0]}x{weight_hw[1]} kernel and padding {list(attrs.padding)} "
                                 f"leave no output of {data}")
    return d, {"N": d["N"], "H": oh, "W": ow}


def _offset_type(data, weight_hw, attrs):
    """The type the offsets must have: a ``(dy, dx)`` pair per deformable group and tap, per output pixel."""
    _, out = _deformable_sizes(data, weight_hw, attrs)
    out["C"] = attrs.deformable_groups * weight_hw[0] * weight_hw[1] * 2
    return _from_primal(out, attrs.data_layout, data.dtype)


def _deformable_conv2d_rel(types, attrs):
    data, offset, weight = (tensor_arg(types, i, n) for i, n in enumerate(["data", "offset", "weight"]))
    op = "nn.deformable_conv2d"
    w = _primal(weight, attrs.kernel_layout, "weight", op)
    d, out = _deformable_sizes(data, (w["H"], w["W"]), attrs)
    g, dg = attrs.groups, attrs.deformable_groups
    if not shapes_match((d["C"],), (w["I"] * g,)) or not shapes_match((d["C"] % dg, w["O"] % g), (0, 0)):
        raise TypeInferenceError(f"{op}: weight {weight} does not fit the {d['C']} channels of {data} "
                                 f"(groups={g}, deformable_groups={dg})")
    if attrs.channels is not None and not shapes_match((attrs.channels,), (w["O"],)):
        raise TypeInferenceError(f"{op}: channels={attrs.channels} but weight {weight} has {w['O']} output channels")
    if attrs.kernel_size is not None and not shapes_match(tuple(attrs.kernel_size), (w["H"], w["W"])):
        raise TypeInferenceError(f"{op}: kernel_size={list(attrs.kernel_size)} but weight {weight} is "
                                 f"{w['H']}x{w['W']}")
    want = _offset_type(data, (w["H"], w["W"]), attrs)
    if not shapes_match(offset.shape, want.shape):
        raise TypeInferenceError(f"{op}: offset {offset} must have shape {want.shape}")
    same_dtype([data, offset, weight], f"{op} data, offset and weight")
    out["C"] = w["O"]
    return _from_primal(out, attrs.out_layout or attrs.data_layout, attrs.out_dtype or data.dtype)


def _deformable_arg_types(types, attrs):
    """``FInferArgTypes``: an untyped weight from ``channels`` and ``kernel_size`` (``I = C / groups``), untyped
    offsets from the data, the kernel size and the deformable groups."""
    op = "nn.deformable_conv2d"
    data = tensor_arg(types, 0, "data")
    weight = types[2]
    if weight is None:
        if attrs.channels is None or attrs.kernel_size is None:
            raise TypeInferenceError(f"{op}: an untyped weight needs channels= and kernel_size= to be inferred")
        c = _primal(data, attrs.data_layout, "data", op)["C"]
        kh, kw = attrs.kernel_size
        weight = _from_primal({"O": attrs.channels, "I": c // attrs.groups, "H": kh, "W": kw}, attrs.kernel_layout,
                              data.dtype)
    w = _primal(weight, attrs.kernel_layout, "weight", op)
    offset = types[1] if types[1] is not None else _offset_type(data, (w["H"], w["W"]), attrs)
    return [data, offset, weight]


register_relay_op("nn.deformable_conv2d", 3, _deformable_conv2d_rel, OpPattern.OUT_ELEMWISE_FUSABLE,
                  AI.DeformableConv2DAttrs, dtypes=FLOAT)
register_op_attr("nn.deformable_conv2d", "FInferArgTypes", _deformable_arg_types)


def deformable_conv2d(data, offset, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), deformable_groups=1,
                      groups=1, channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="OIHW",
                      out_layout="", out_dtype=""):
    """2-D convolution whose kernel taps read the input at positions moved by ``offset`` (bilinearly sampled):
    ``offset`` holds a (dy, dx) pair per deformable group, tap and output pixel. Layouts NCHW with an OIHW kernel
    or NHWC with HWIO; ``groups`` split the channels as in ``nn.conv2d``."""
    return make_call("nn.deformable_conv2d", [data, offset, weight], AI.DeformableConv2DAttrs(
        strides, padding, dilation, deformable_groups, groups, channels, kernel_size, data_layout, kernel_layout,
        out_layout, out_dtype))


# ------------------------------------------------------------- convolutions in blocked layouts (AlterOpLayout's form)
def _blocked_conv_rel(op):
    def relation(types, attrs):
        from .nn import _conv2d_rel

        if not any(a.islower() for a in attrs.data_layout):
            raise TypeInferenceError(f"{op}: data_layout {attrs.data_layout} must be blocked (NCHW[x]c)")
        return _conv2d_rel(types, attrs)

    return relation


register_relay_op("nn.contrib_conv2d_NCHWc", 2, _blocked_conv_rel("nn.contrib_conv2d_NCHWc"),
                  OpPattern.OUT_ELEMWISE_FUSABLE, AS.Conv2DAttrs, dtypes=NUMERIC)
register_relay_op("nn.contrib_depthwise_conv2d_NCHWc", 2, _blocked_conv_rel("nn.contrib_depthwise_conv2d_NCHWc"),
                  OpPattern.OUT_ELEMWISE_FUSABLE, AS.Conv2DAttrs, dtypes=NUMERIC)


def contrib_conv2d_nchwc(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, channels=None,
                         kernel_size=None, data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="",
                         out_dtype=""):
    """2-D convolution of data and kernel already in blocked layouts (``NCHW[x]c``, ``OIHW[x]i[y]o``)."""
    return make_call("nn.contrib_conv2d_NCHWc", [data, kernel], AS.Conv2DAttrs(
        strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout, out_layout, out_dtype))


def contrib_depthwise_conv2d_nchwc(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                                   channels=None, kernel_size=None, data_layout="NCHW8c", kernel_layout="OIHW1i8o",
                                   out_layout="", out_dtype=""):
    """Depthwise 2-D convolution in blocked layouts."""
    return make_call("nn.contrib_depthwise_conv2d_NCHWc", [data, kernel], AS.Conv2DAttrs(
        strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout, out_layout, out_dtype))
