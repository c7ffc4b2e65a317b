"""Where values live: ``on_device`` and ``device_copy`` (TVM's ``relay.annotation.on_device`` and
``relay.device_copy``), the operators ``PlanDevices`` reads and writes.

* ``on_device(body, virtual_device, constrain_result=False, constrain_body=True)``: ``body`` unchanged; with
  ``constrain_body`` the body is computed on ``virtual_device``; with ``constrain_result`` the result also stays
  there (``PlanDevices`` writes ``constrain_result=True`` on what it placed; an annotation with only
  ``constrain_body`` lets the planner copy the result wherever it is used). Compiled, it is the identity.
* ``device_copy(data, src_virtual_device, dst_virtual_device)``: ``data`` copied from one device to another. kiln
  runs every kernel on the host CPU, so a copy computes the identity.
"""

from dataclasses import dataclass, field

from ...error import OpAttributeInvalid
from ...ir.attrs import Attrs
from ...runtime.device import Device, device
from ...target.virtual_device import VirtualDevice
from .op import OpPattern, make_call, register_relay_op

__all__ = ["OnDeviceAttrs", "DeviceCopyAttrs", "on_device", "device_copy", "as_virtual_device"]


def as_virtual_device(value, what="virtual_device") -> VirtualDevice:
    """``value`` (a VirtualDevice, a Device, a device name such as ``"cpu"``, or None) as a VirtualDevice."""
    if value is None:
        return VirtualDevice()
    if isinstance(value, VirtualDevice):
        return value
    if isinstance(value, Device):
        return VirtualDevice(value)
    if isinstance(value, str | int):
        return VirtualDevice(device(value))
    raise OpAttributeInvalid(f"{what} must be a VirtualDevice, a Device or a device name, not {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class OnDeviceAttrs(Attrs):
    """``virtual_device``: where the body (and, with ``constrain_result``, the result) lives."""

    virtual_device: VirtualDevice = field(default_factory=VirtualDevice)
    constrain_result: bool = False
    constrain_body: bool = True

    def __post_init__(self):
        object.__setattr__(self, "virtual_device", as_virtual_device(self.virtual_device))
        object.__setattr__(self, "constrain_result", bool(self.constrain_result))
        object.__setattr__(self, "constrain_body", bool(self.constrain_body))


@dataclass(frozen=True, slots=True)
class DeviceCopyAttrs(Attrs):
    """The devices a ``device_copy`` copies from and to."""

    src_virtual_device: VirtualDevice = field(default_factory=VirtualDevice)
    dst_virtual_device: VirtualDevice = field(default_factory=VirtualDevice)

    def __post_init__(self):
        object.__setattr__(self, "src_virtual_device", as_virtual_device(self.src_virtual_device, "src"))
        object.__setattr__(self, "dst_virtual_device", as_virtual_device(self.dst_virtual_device, "dst"))


def _same_type_rel(types, attrs):
    """The result has the argument's type (a tensor, a tuple, a function...)."""
    return types[0]


register_relay_op("on_device", 1, _same_type_rel, OpPattern.OPAQUE, OnDeviceAttrs)
register_relay_op("device_copy", 1, _same_type_rel, OpPattern.OPAQUE, DeviceCopyAttrs)


def on_device(body, virtual_device, constrain_result=False, constrain_body=True):
    """``body`` annotated as living on ``virtual_device`` (a VirtualDevice, Device or device name).

    Parameters
    ----------
    body : RelayExpr
        The annotated expression.
    virtual_device : VirtualDevice, Device or str
        Where it lives.
    constrain_result : bool
        Whether the result of the annotation is also on ``virtual_device`` (else the planner may copy it).
    constrain_body : bool
        Whether ``body`` is computed on ``virtual_device``.
    """
    vd = as_virtual_device(virtual_device)
    if (constrain_result or constrain_body) and vd.is_fully_unconstrained:
        raise OpAttributeInvalid("on_device: a constraining annotation needs a device (the VirtualDevice is "
                                 "fully unconstrained)")
    if not (constrain_result or constrain_body):
        vd = VirtualDevice()
    return make_call("on_device", [body], OnDeviceAttrs(vd, constrain_result, constrain_body))


def device_copy(data, src_device, dst_device):
    """``data`` copied from ``src_device`` to ``dst_device`` (each a VirtualDevice, Device or device name)."""
    return make_call("device_copy", [data], DeviceCopyAttrs(as_virtual_device(src_device, "src_device"),
                                                            as_virtual_device(dst_device, "dst_device")))
