"""``dyn.nn.pad``: :func:`kiln.relay.nn.pad` with ``pad_width`` an ``(ndim, 2)`` integer tensor known at run time
(TVM's ``relay/op/dyn/nn``). The shape function adds the widths to the data's shape and refuses a negative one."""

from dataclasses import dataclass

from ....error import TypeInferenceError
from ....ir.attrs import Attrs
from ....ir.type import Any, TensorType, is_any
from ....tir import op as _op
from ..nn import pad as static_pad
from ..op import OpPattern, make_call, register_op_attr, register_relay_op, register_shape_func
from ..type_relations import ALL, SIGNED, tensor_arg
from .common import dim64, int64, shape_tensor

__all__ = ["DynPadAttrs", "pad"]


@dataclass(frozen=True, slots=True)
class DynPadAttrs(Attrs):
    """``pad_mode``: ``constant`` (fill with the pad value), ``edge``, ``reflect`` or ``wrap`` (the axis repeated
    periodically, as numpy's and ONNX's ``wrap``; kiln's extension, with no static ``nn.pad`` form)."""

    pad_mode: str = "constant"

    def __post_init__(self):
        self._require(self.pad_mode in ("constant", "edge", "reflect", "wrap"), "pad_mode",
                      "must be constant, edge, reflect or wrap")


def _pad_rel(types, attrs):
    data, width, value = (tensor_arg(types, i, n) for i, n in enumerate(("data", "pad_width", "pad_value")))
    if width.ndim != 2 or width.shape[1] != 2 or is_any(width.shape[0]) or width.shape[0] != data.ndim:
        raise TypeInferenceError(f"pad_width must be a ({data.ndim}, 2) tensor for {data}, got {width}")
    if value.shape:
        raise TypeInferenceError(f"pad_value must be a scalar, got {value}")
    return TensorType((Any(),) * data.ndim, data.dtype)


register_relay_op("dyn.nn.pad", 3, _pad_rel, OpPattern.OPAQUE, DynPadAttrs, dtypes=(ALL, SIGNED, ALL))


@register_shape_func("dyn.nn.pad", True)
def _pad_shape_func(attrs, inputs, out_types):
    """``before + size + after`` per axis; checks: no negative width."""
    data, width = inputs[0], inputs[1]
    dims, checks = [], []
    for k in range(len(data.shape)):
        before, after = int64(width[k, 0]), int64(width[k, 1])
        dims.append(before + dim64(data, k) + after)
        checks += [(_op.greater_equal(before, 0), f"dyn.nn.pad: pad_width[{k}][0] is negative"),
                   (_op.greater_equal(after, 0), f"dyn.nn.pad: pad_width[{k}][1] is negative")]
    return [shape_tensor(dims, "dyn_pad_shape")], checks


def pad(data, pad_width, pad_value, pad_mode="constant"):
    """Pad each axis of ``data`` by the ``(before, after)`` rows of the ``(ndim, 2)`` integer tensor ``pad_width``."""
    return make_call("dyn.nn.pad", [data, pad_width, pad_value], DynPadAttrs(pad_mode))


@register_op_attr("dyn.nn.pad", "FDynamicToStatic")
def _pad_to_static(call, values):
    """``nn.pad(data, pad_width)`` once ``pad_width`` is a constant."""
    if values[1] is None or (values[1] < 0).any() or call.attrs.pad_mode == "wrap":
        return None
    return static_pad(call.args[0], values[1].tolist(), call.args[2], call.attrs.pad_mode)
