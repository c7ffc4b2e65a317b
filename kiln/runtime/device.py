"""Devices: where an NDArray lives and where compiled code runs (DLPack device codes)."""

from dataclasses import dataclass

from ..error import KilnError

_CPU = 1  # kDLCPU in DLPack
_TYPE_CODES = {"cpu": _CPU, "llvm": _CPU, "c": _CPU, "stackvm": _CPU, "ext_dev": 12}
_TYPE_NAMES = {_CPU: "cpu", 12: "ext_dev"}


@dataclass(frozen=True, slots=True)
class Device:
    """A device: a DLPack type code and an index, printed as ``cpu(0)``."""

    device_type: int
    device_id: int = 0

    def __post_init__(self):
        if self.device_type not in _TYPE_NAMES:
            raise KilnError(f"unknown device type code {self.device_type}")

    @property
    def exist(self) -> bool:
        """Whether the device is present on this machine (only the CPU is)."""
        return self.device_type == _CPU

    def sync(self):
        """Wait for queued work to finish (a no-op on the CPU)."""

    def __dlpack_device__(self):
        return (self.device_type, self.device_id)

    def __str__(self):
        return f"{_TYPE_NAMES[self.device_type]}({self.device_id})"

    __repr__ = __str__


def device(dev_type, dev_id=0) -> Device:
    """Return the device named ``dev_type`` (``"cpu"``, ``"llvm"``, ``"c"`` or a DLPack code).

    Examples
    --------
    >>> device("llvm", 0)
    cpu(0)
    """
    if isinstance(dev_type, Device):
        return dev_type
    if isinstance(dev_type, str):
        key = dev_type.split()[0]
        if key not in _TYPE_CODES:
            raise KilnError(f"unknown device {dev_type!r}; known: {sorted(_TYPE_CODES)}")
        return Device(_TYPE_CODES[key], dev_id)
    return Device(int(dev_type), dev_id)


def cpu(dev_id=0) -> Device:
    """Return the CPU device ``cpu(dev_id)``."""
    return Device(_CPU, dev_id)
