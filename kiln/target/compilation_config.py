"""``CompilationConfig`` (TVM's ``tvm.target.make_compilation_config``): the targets a program is compiled for,
the host that runs the glue code, and the device that holds whatever no annotation places (the PassContext key
``relay.fallback_device_type``, else the first target's device). ``PlanDevices`` asks it for the canonical form
of a ``VirtualDevice``: one naming a device type but no target gets the target compiling for that device type.
"""

from ..error import KilnError
from ..ir.pass_context import register_config
from ..runtime.device import Device
from .target import Target
from .virtual_device import VirtualDevice

__all__ = ["CompilationConfig", "make_compilation_config", "target_device_type"]

register_config("relay.fallback_device_type", int, 1)

_DEVICE_TYPE_OF_KIND = {"llvm": 1, "c": 1, "cuda": 2, "nvptx": 2, "opencl": 4, "vulkan": 7, "metal": 8,
                        "rocm": 10, "webgpu": 15, "hexagon": 16}


def target_device_type(target) -> int:
    """The DLPack device type code of the device ``target`` compiles for (1 for a CPU, 2 for CUDA...)."""
    kind = target.kind.name
    if kind not in _DEVICE_TYPE_OF_KIND:
        raise KilnError(f"no device type is known for target kind {kind!r}")
    return _DEVICE_TYPE_OF_KIND[kind]


class CompilationConfig:
    """The targets, host and default device of one compilation (see the module docstring)."""

    def __init__(self, targets, host_target=None, fallback_device_type=None):
        targets = [t if isinstance(t, Target) else Target(t) for t in targets]
        if not targets:
            raise KilnError("make_compilation_config: at least one target is needed")
        if host_target is None:
            host_target = next((t.host for t in targets if t.host is not None), None)
        if host_target is None:
            host_target = next((t for t in targets if target_device_type(t) == 1), Target("llvm"))
        self.host_target = host_target if isinstance(host_target, Target) else Target(host_target)
        self.host_target = self.host_target.with_host(None) if self.host_target.host is not None else self.host_target
        # every primitive target runs its glue code on the host
        self.primitive_targets = [t if t.host is not None else t.with_host(self.host_target) for t in targets]
        self.host_virtual_device = VirtualDevice(Device(1, 0), self.host_target)
        device_type = fallback_device_type if fallback_device_type is not None else \
            target_device_type(self.primitive_targets[0])
        self.default_primitive_virtual_device = VirtualDevice(Device(int(device_type), 0),
                                                              self.target_for_device_type(int(device_type)))

    def target_for_device_type(self, device_type) -> Target:
        """The primitive target compiling for devices of ``device_type``."""
        for target in self.primitive_targets:
            if target_device_type(target) == device_type:
                return target
        raise KilnError(f"no target given for device type {device_type}; the targets are "
                        f"{[str(t) for t in self.primitive_targets]}")

    def canonical_virtual_device(self, vd) -> VirtualDevice:
        """``vd`` with its target filled in from its device type (unchanged when it has a target or no device)."""
        if vd.target is not None or vd.device_type_int == -1:
            return vd
        target = self.target_for_device_type(vd.device_type_int)
        out = VirtualDevice(Device(vd.device_type_int, max(vd.virtual_device_id, 0)), target, vd.memory_scope)
        if vd.virtual_device_id < 0:
            object.__setattr__(out, "virtual_device_id", vd.virtual_device_id)
        return out

    # TVM's attribute names
    CanonicalVirtualDevice = canonical_virtual_device


def make_compilation_config(ctxt, target, target_host=None) -> CompilationConfig:
    """The compilation configuration for ``target`` (a Target, a name, or a list of them) in the PassContext
    ``ctxt`` (whose ``relay.fallback_device_type`` picks the default device), with host ``target_host``."""
    targets = list(target) if isinstance(target, list | tuple) else [target]
    fallback = None
    if ctxt is not None and "relay.fallback_device_type" in ctxt.config:
        fallback = int(ctxt.config["relay.fallback_device_type"])
    return CompilationConfig(targets, target_host, fallback)
