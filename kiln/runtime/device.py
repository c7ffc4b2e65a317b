"""Devices: where an NDArray lives and where compiled code runs (DLPack device codes).

A device of an RPC session (``remote.cpu(0)``, :mod:`kiln.rpc`) has its type code offset by ``RPC_SESS_MASK``
times one plus the session's index in the session table, as in TVM: ``dev._rpc_sess`` finds the session again, and
``kiln.nd.array(x, dev)`` allocates in the remote process through it.
"""

import weakref
from dataclasses import dataclass

from ..error import KilnError

RPC_SESS_MASK = 128
"""Device type codes at or above this belong to RPC sessions (TVM's ``rpc.base.RPC_SESS_MASK``)."""

_RPC_SESSIONS: list = []  # weak references to sessions, by table index


def register_rpc_session(session) -> int:
    """Add an RPC session to the table; returns its index (what its devices' type codes encode)."""
    _RPC_SESSIONS.append(weakref.ref(session))
    return len(_RPC_SESSIONS) - 1

_CPU = 1  # kDLCPU in DLPack
# the accelerators' codes are known so programs can name devices they are planned for (PlanDevices, VirtualDevice);
# kiln compiles and runs for the CPU only, so such a device never exists here (Device.exist, runtime.enabled)
_TYPE_CODES = {"cpu": _CPU, "llvm": _CPU, "c": _CPU, "stackvm": _CPU, "ext_dev": 12, "cuda": 2, "gpu": 2,
               "nvptx": 2, "cuda_host": 3, "opencl": 4, "cl": 4, "vulkan": 7, "metal": 8, "vpi": 9, "rocm": 10,
               "hexagon": 16, "webgpu": 15}
_TYPE_NAMES = {_CPU: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi", 10: "rocm",
               12: "ext_dev", 15: "webgpu", 16: "hexagon"}


@dataclass(frozen=True, slots=True)
class Device:
    """A device: a DLPack type code and an index, printed as ``cpu(0)``."""

    device_type: int
    device_id: int = 0

    def __post_init__(self):
        if self.device_type % RPC_SESS_MASK not in _TYPE_NAMES or self.device_type < 0:
            raise KilnError(f"unknown device type code {self.device_type}")

    @property
    def _rpc_sess(self):
        """The RPC session of a remote device (None for a local one, or when the session is gone)."""
        if self.device_type < RPC_SESS_MASK:
            return None
        index = self.device_type // RPC_SESS_MASK - 1
        return _RPC_SESSIONS[index]() if index < len(_RPC_SESSIONS) else None

    @property
    def is_remote(self) -> bool:
        """Whether the device belongs to an RPC session."""
        return self.device_type >= RPC_SESS_MASK

    @property
    def local_device(self) -> "Device":
        """The device as the process that owns it sees it (the RPC session bits removed)."""
        return Device(self.device_type % RPC_SESS_MASK, self.device_id) if self.is_remote else self

    @property
    def exist(self) -> bool:
        """Whether the device is present (only CPUs are: this machine's, or an RPC server's)."""
        return self.device_type % RPC_SESS_MASK == _CPU

    def sync(self):
        """Wait for queued work to finish (a no-op on the CPU)."""

    def __dlpack_device__(self):
        return (self.device_type, self.device_id)

    def __str__(self):
        name = f"{_TYPE_NAMES[self.device_type % RPC_SESS_MASK]}({self.device_id})"
        return f"remote[{self.device_type // RPC_SESS_MASK - 1}]:{name}" if self.is_remote else name

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


def enabled(target) -> bool:
    """Whether code for ``target`` (a target kind or device name: ``"llvm"``, ``"cuda"``) can be compiled and run
    here (TVM's ``runtime.enabled``): the CPU targets only."""
    key = str(target).split()[0]
    return _TYPE_CODES.get(key) == _CPU


def cpu(dev_id=0) -> Device:
    """Return the CPU device ``cpu(dev_id)``."""
    return Device(_CPU, dev_id)
