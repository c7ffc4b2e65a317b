"""The operator ``relay.op.annotation.simulated_quantize`` (TVM's, from its quantization toolkit) and
:func:`attach_simulated_quantize`.

``simulated_quantize(data, dom_scale, clip_min, clip_max, kind, sign, rounding)`` computes, in floating point, what
quantizing ``data`` to integers of step ``dom_scale`` in ``[clip_min, clip_max]`` steps and converting back gives::

    round(clip(data / dom_scale, clip_min, clip_max)) * dom_scale

(``round`` ties away from zero, as topi's); the kind ``IDENTITY`` passes ``data`` through. ``dom_scale``,
``clip_min`` and ``clip_max`` are float32 scalars (calibration binds them to constants); untyped variables in their
places are typed so. Everything about the operator is registered here: type relation and argument types, fusion
pattern (element-wise), layout rule (the data's layout; the scalars have none), topi compute and schedule, and the
numpy reference the interpreter runs.
"""

from dataclasses import dataclass

import numpy as np

from ...error import OpNotImplemented, TypeInferenceError
from ...ir.attrs import Attrs
from ...ir.op import Op, register_op_attr
from ...ir.type import TensorType
from ...te.operation import compute
from ...tir import op as tir
from ...topi import elemwise as EW
from ...topi import tag as _tag
from ..expr import Call, var
from ..op.op import OpPattern, make_call, register_relay_op
from ..op.strategy.base import OpStrategy, register_compute, register_schedule, register_strategy
from ..op.strategy.generic import fschedule_by_tag
from ..op.type_relations import FLOAT, tensor_arg
from ..reference.common import register as register_reference
from ..reference.common import round_half_away
from ..transform.infer_layout_utils import InferCorrectLayoutOutput
from ..transform.layout_rules import register_rule
from .config import QAnnotateKind, quantize_context

__all__ = ["SimulatedQuantizeAttrs", "simulated_quantize", "attach_simulated_quantize", "OP_NAME"]

OP_NAME = "relay.op.annotation.simulated_quantize"
_SCALAR = TensorType((), "float32")


@dataclass(frozen=True, slots=True)
class SimulatedQuantizeAttrs(Attrs):
    """``kind`` (a :class:`QAnnotateKind`), ``sign`` (signed integers), ``rounding`` (``"round"``)."""

    kind: int = 0
    sign: bool = True
    rounding: str = "round"

    def __post_init__(self):
        object.__setattr__(self, "kind", int(self.kind))
        self._require(self.kind in tuple(QAnnotateKind), "kind", "must be a QAnnotateKind (0 to 3)")
        self._require(self.rounding in ("round", "stochastic_round"), "rounding", "must be round or stochastic_round")


def _relation(types, attrs):
    data = tensor_arg(types, 0, "data")
    for index, name in ((1, "dom_scale"), (2, "clip_min"), (3, "clip_max")):
        if tensor_arg(types, index, name) != _SCALAR:
            raise TypeInferenceError(f"simulated_quantize: {name} must be a float32 scalar, got {types[index]}")
    return data


def _arg_types(types, attrs):
    """Untyped ``dom_scale``/``clip_min``/``clip_max`` are float32 scalars (what the relation requires)."""
    return [_SCALAR if t is None and i > 0 else t for i, t in enumerate(types)]


register_relay_op(OP_NAME, 4, _relation, OpPattern.ELEMWISE, SimulatedQuantizeAttrs, dtypes=(FLOAT, ("float32",)))
register_op_attr(OP_NAME, "FInferArgTypes", _arg_types)


def simulated_quantize(data, dom_scale, clip_min, clip_max, kind=QAnnotateKind.IDENTITY, sign=True,
                       rounding="round"):
    """The call ``simulated_quantize(data, dom_scale, clip_min, clip_max)`` (see the module docstring)."""
    return make_call(OP_NAME, [data, dom_scale, clip_min, clip_max],
                     SimulatedQuantizeAttrs(int(kind), bool(sign), str(rounding)))


@register_rule(OP_NAME)
def _layout_rule(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """The data keeps its layout (TVM's ``SimQuantizeLayout``); the scalars broadcast against any."""
    layout = new_in_layouts[0] if new_in_layouts is not None else old_in_layouts[0]
    return InferCorrectLayoutOutput([layout, "C", "C", "C"], [layout], attrs)


def _check_supported(attrs):
    if attrs.rounding != "round" or not attrs.sign:
        raise OpNotImplemented(f"simulated_quantize: only signed quantization with rounding='round' is computed "
                               f"(got sign={attrs.sign}, rounding={attrs.rounding!r}), as in TVM")


def _compute(attrs, inputs, out_type):
    data, scale, clip_min, clip_max = inputs
    if attrs.kind == QAnnotateKind.IDENTITY:
        return [EW.identity(data)]
    _check_supported(attrs)
    dtype = data.dtype

    def quantized(*index):
        step = tir.cast(scale(), dtype)
        value = tir.div(data(*index), step)
        value = tir.maximum(tir.minimum(value, tir.cast(clip_max(), dtype)), tir.cast(clip_min(), dtype))
        return tir.multiply(EW.round_half_away(value), step)

    return [compute(data.shape, quantized, name="T_simulated_quantize", tag=_tag.ELEMWISE)]


register_compute(OP_NAME, _compute)
register_schedule(OP_NAME, fschedule_by_tag)
# one implementation on every target: the element-wise compute under the tag-dispatched schedule
register_strategy(OP_NAME, lambda attrs, inputs, out_type, target: OpStrategy().add_implementation(
    _compute, fschedule_by_tag, f"{OP_NAME}.generic", 10))


@register_reference(OP_NAME)
def _reference(attrs, data, dom_scale, clip_min, clip_max):
    """numpy: ``round(clip(data / dom_scale)) * dom_scale`` in the data's dtype."""
    if attrs.kind == QAnnotateKind.IDENTITY:
        return data
    _check_supported(attrs)
    dtype = data.dtype
    step = np.asarray(dom_scale).astype(dtype)
    value = np.maximum(np.minimum(data / step, np.asarray(clip_max).astype(dtype)), np.asarray(clip_min).astype(dtype))
    return (round_half_away(value) * step).astype(dtype)


def attach_simulated_quantize(data, kind, sign=True, rounding="round"):
    """``data`` followed by a simulated quantization of ``kind`` (TVM's function of the same name).

    A ``data`` that is already such a node of the same kind is returned as it is, and within one annotation run
    (:func:`~kiln.relay.quantize.quantize_context`) the same ``(data, kind, sign, rounding)`` gets the same node.
    The node's ``dom_scale``, ``clip_min`` and ``clip_max`` are new variables (float32 scalars) that calibration
    binds.
    """
    kind = QAnnotateKind(int(kind))
    if isinstance(data, Call) and data.op == Op.get(OP_NAME):
        attrs = data.attrs
        if attrs.kind == kind and attrs.sign == sign and attrs.rounding == rounding:
            return data
    qctx = quantize_context()
    key = (data, kind, sign, rounding)
    if key in qctx.qnode_map:
        return qctx.qnode_map[key]
    node = simulated_quantize(data, var("dom_scale"), var("clip_min"), var("clip_max"), kind, sign, rounding)
    qctx.qnode_map[key] = node
    return node
