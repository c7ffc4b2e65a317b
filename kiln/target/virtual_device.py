"""``VirtualDevice`` (TVM's ``tvm.target.VirtualDevice``): where a value lives at run time and how the code
computing it is compiled, as far as it is known at compile time.

Each field may be unconstrained: the device type ``-1`` (any device), the device id ``-1``, no target, the empty
memory scope (global memory). kiln compiles for the host CPU only, so the virtual devices it meets in practice are
the fully unconstrained one and ``VirtualDevice(kiln.cpu(0), Target("llvm"))``; the class exists so programs and
attributes that name devices (``on_device``, ``virtual_device=`` of ``memory.alloc_storage``, the metadata of
parsed text) carry them faithfully.
"""

from dataclasses import dataclass

from ..error import KilnError
from ..ir.node import Node
from .target import Target

__all__ = ["VirtualDevice"]


@dataclass(frozen=True, slots=True, init=False, repr=False)
class VirtualDevice(Node):
    """A compile-time description of a device, a target and a memory scope.

    Parameters
    ----------
    device : Device, optional
        The device (its type code and id); unconstrained (``-1``, ``-1``) when None.
    target : Target or str, optional
        The target that compiles code for the device.
    memory_scope : str
        The memory scope (``""`` or ``"global"`` for ordinary memory).

    Examples
    --------
    >>> vd = VirtualDevice(kiln.cpu(0), Target("llvm"))
    >>> vd.device_type, vd.virtual_device_id, vd.memory_scope
    (1, 0, '')
    """

    device_type_int: int
    virtual_device_id: int
    target: "Target | None"
    memory_scope: str

    type_key = "VirtualDevice"

    def __init__(self, device=None, target=None, memory_scope=""):
        if device is None:
            device_type, device_id = -1, -1
        elif hasattr(device, "device_type") and hasattr(device, "device_id"):
            device_type, device_id = int(device.device_type), int(device.device_id)
        else:
            raise KilnError(f"VirtualDevice: device must be a Device (kiln.cpu(0)) or None, got "
                            f"{type(device).__name__}")
        if target is not None and not isinstance(target, Target):
            target = Target(target)
        if not isinstance(memory_scope, str):
            raise KilnError(f"VirtualDevice: memory_scope must be a str, got {type(memory_scope).__name__}")
        object.__setattr__(self, "device_type_int", device_type)
        object.__setattr__(self, "virtual_device_id", device_id)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "memory_scope", memory_scope)

    @classmethod
    def __from_json__(cls, fields):
        out = cls(None, fields.get("target"), fields.get("memory_scope", ""))
        object.__setattr__(out, "device_type_int", int(fields["device_type_int"]))
        object.__setattr__(out, "virtual_device_id", int(fields["virtual_device_id"]))
        return out

    @property
    def device_type(self) -> int:
        """The DLPack device type code (``-1`` when unconstrained)."""
        return self.device_type_int

    @property
    def is_fully_unconstrained(self) -> bool:
        """Whether nothing is known: any device, any target, global memory."""
        return self.device_type_int == -1 and self.virtual_device_id == -1 and self.target is None and \
            not self.memory_scope

    def __str__(self):
        if self.is_fully_unconstrained:
            return "VirtualDevice()"
        parts = []
        if self.device_type_int != -1:
            parts.append(f"device_type={self.device_type_int}")
        if self.virtual_device_id != -1:
            parts.append(f"virtual_device_id={self.virtual_device_id}")
        if self.target is not None:
            parts.append(f"target={self.target}")
        if self.memory_scope:
            parts.append(f"memory_scope='{self.memory_scope}'")
        return f"VirtualDevice({', '.join(parts)})"

    __repr__ = __str__
