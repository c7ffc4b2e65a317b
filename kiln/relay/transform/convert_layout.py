"""ConvertLayout(desired_layouts): compute chosen operators in chosen layouts (TVM's ``relay.transform.ConvertLayout``).

``ConvertLayout({"nn.conv2d": ["NHWC", "default"]})`` rewrites every conv2d to NHWC data and the natural kernel
layout for it (HWIO; HWOI for depthwise), with ``layout_transform`` only at the boundaries of the converted region:
see :mod:`.layout_rewriter` for how layouts propagate. A kernel that is a constant gets a ``layout_transform`` that
FoldConstant folds.

Per operator, the conversion is the op attribute ``FTVMConvertOpLayout``: a function ``(attrs, inputs, tinfos,
desired_layouts) -> Expr`` (TVM's ``register_convert_op_layout``) that returns the operator rebuilt with the desired
layouts over ``inputs`` (the call's arguments, in the layouts their rewritten producers compute them in, as TVM's).
conv2d, the 2-D poolings and the global poolings have one here, conv2d_transpose, conv3d(_transpose),
deformable_conv2d, the resizes and roi_align in :mod:`.convert_layout_ops`; others can be registered with
:func:`register_convert_op_layout`.
"""

import re
from dataclasses import dataclass

from ...error import KilnError
from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ...ir.type import TupleType
from ...tir.layout import layout as parse_layout
from ..expr import Call
from ..op import nn as _nn
from ..op.op import register_convert_op_layout
from .convert_layout_ops import LayoutConfig, skip_layer  # (also registers the other operators' conversions)
from .fold_scale_util import is_depthwise_conv2d, retype_function, typed_function
from .function_pass import FunctionPass
from .layout_rewriter import rewrite_layouts

__all__ = ["ConvertLayout", "LayoutConfig", "register_convert_op_layout"]




@register_convert_op_layout("nn.conv2d")
def convert_conv2d(attrs, inputs, tinfos, desired_layouts):
    """conv2d in the desired ``[data_layout, kernel_layout]`` (its blocked form ``nn.contrib_conv2d_NCHWc`` for
    ``NCHW{n}c``, as TVM's); ``"default"`` picks the kernel layout that suits the data layout: OIHW for NCHW, HWIO for
    NHWC (HWOI when depthwise), OIHW{n}i{n}o for NCHW{n}c (TVM requires it given there)."""
    data, weight = inputs
    if skip_layer():
        return _nn.conv2d(data, weight, **attrs)
    if len(desired_layouts) != 2:
        raise KilnError(f"ConvertLayout: nn.conv2d needs two desired layouts [data, kernel], got {desired_layouts}")
    data_layout, kernel_layout = (str(lay) for lay in desired_layouts)
    if data_layout == "default":
        raise KilnError("ConvertLayout: the data layout of nn.conv2d cannot be 'default'")
    new_attrs = dict(attrs)
    new_attrs["data_layout"] = data_layout
    tiled = re.fullmatch(r"NCHW(\d+)c", data_layout)
    if kernel_layout == "default":
        depthwise = is_depthwise_conv2d(attrs, tinfos[1].shape)
        if data_layout == "NCHW":
            kernel_layout = "OIHW"
        elif data_layout == "NHWC":
            kernel_layout = "HWOI" if depthwise else "HWIO"
        elif data_layout == "HWNC":
            kernel_layout = "HWOI"
        elif tiled:
            block = tiled.group(1)
            kernel_layout = f"OIHW1i{block}o" if depthwise else f"OIHW{block}i{block}o"
        else:
            raise KilnError(f"ConvertLayout: nn.conv2d has no default kernel layout for data layout {data_layout}")
    parse_layout(kernel_layout)
    new_attrs["kernel_layout"] = kernel_layout
    if new_attrs.get("out_layout"):
        new_attrs["out_layout"] = data_layout
    if tiled:  # the blocked form, as TVM's
        return _nn.contrib_conv2d_nchwc(data, weight, **new_attrs)
    return _nn.conv2d(data, weight, **new_attrs)


def _convert_pool(builder):
    def convert(attrs, inputs, tinfos, desired_layouts):
        if len(desired_layouts) != 1:
            raise KilnError(f"ConvertLayout: pooling needs one desired layout, got {desired_layouts}")
        new_attrs = dict(attrs)
        new_attrs["layout"] = new_attrs["out_layout"] = str(desired_layouts[0])
        return builder(*inputs, **new_attrs)

    convert.__name__ = f"convert_{builder.__name__}"
    convert.__doc__ = f"{builder.__name__} with ``layout`` and ``out_layout`` set to the desired layout."
    return convert


POOLS = ("nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.global_max_pool2d")
for _name in POOLS:
    register_convert_op_layout(_name, _convert_pool(getattr(_nn, _name.split(".")[1])))


def _normalize(desired_layouts):
    out = {}
    for name, layouts in desired_layouts.items():
        Op.get(str(name))  # KilnError naming an unknown operator
        if isinstance(layouts, str) or not isinstance(layouts, list | tuple):
            raise TypeError(f"ConvertLayout: the desired layouts of {name} must be a list, not {layouts!r}")
        for lay in layouts:
            if str(lay) != "default":
                parse_layout(str(lay))
        out[str(name)] = [str(lay) for lay in layouts]
    return out


def convert_layout(func, desired_layouts):
    """Rewrite the typed function ``func`` so the operators of ``desired_layouts`` use those layouts.

    Returns ``func`` when nothing changed, else an untyped rebuilt function.
    """

    def call_with_new_layouts(ref_call, attrs, args):
        """The operator's ``FTVMConvertOpLayout`` answer when the operator has desired layouts, else the operator
        over ``args`` (TVM's ``ConvertTransformMemorizerNode::CallWithNewLayouts``)."""
        desired = desired_layouts.get(ref_call.op.name)
        fconvert = ref_call.op.get_attr("FTVMConvertOpLayout") if desired is not None else None
        if fconvert is not None:
            tinfos = [t for a in ref_call.args for t in _tensor_types(a.checked_type)]
            converted = fconvert(attrs, list(args), tinfos, desired)
            if converted is not None:
                if not isinstance(converted, Call):
                    raise KilnError(f"FTVMConvertOpLayout of {ref_call.op.name} returned a "
                                    f"{type(converted).__name__}: it can only replace the call with another call")
                return converted.with_fields(span=ref_call.span)
        return ref_call.with_fields(args=tuple(args), attrs=attrs)

    return rewrite_layouts(func, call_with_new_layouts)


def _tensor_types(ttype):
    return list(ttype.fields) if isinstance(ttype, TupleType) else [ttype]


@register_pass("ConvertLayout")
@dataclass(frozen=True)
class ConvertLayout(FunctionPass):
    """Convert the layouts of operators as ``desired_layouts`` says (TVM's ``ConvertLayout``).

    Parameters
    ----------
    desired_layouts : dict of str to list of str
        Operator name to its desired layouts, one per layout-carrying input: ``{"nn.conv2d": ["NHWC",
        "default"], "nn.max_pool2d": ["NHWC"]}``. ``"default"`` lets the operator choose (the kernel layout).

    Examples
    --------
    >>> seq = tvm.transform.Sequential([relay.transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]}),
    ...                                 relay.transform.FoldConstant()])   # doctest: +SKIP
    >>> with tvm.transform.PassContext(opt_level=3):
    ...     mod = seq(mod)
    """

    desired_layouts: dict[str, list[str]]
    info = PassInfo(3, "ConvertLayout", required=("InferType", "CanonicalizeOps"))

    def __post_init__(self):
        super().__post_init__()  # desired_layouts is a dict
        object.__setattr__(self, "desired_layouts", _normalize(self.desired_layouts))

    def __hash__(self):
        return hash(tuple((k, tuple(v)) for k, v in sorted(self.desired_layouts.items())))

    def transform_function(self, func, mod, ctx):
        typed = typed_function(func, mod)
        out = convert_layout(typed, self.desired_layouts)
        return func if out is typed else retype_function(out, mod)
