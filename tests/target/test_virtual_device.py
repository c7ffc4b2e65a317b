"""kiln.target.VirtualDevice: fields, the unconstrained default, value equality and JSON round trip."""

import pytest

import kiln
from kiln.error import KilnError
from kiln.target import Target, VirtualDevice


def test_fields_of_a_cpu_virtual_device():
    vd = VirtualDevice(kiln.cpu(0), Target("llvm"))
    assert (vd.device_type, vd.device_type_int, vd.virtual_device_id, vd.memory_scope) == (1, 1, 0, "")
    assert vd.target == Target("llvm") and not vd.is_fully_unconstrained
    assert vd == VirtualDevice(kiln.cpu(0), "llvm") and hash(vd) == hash(VirtualDevice(kiln.cpu(0), "llvm"))
    assert str(vd) == "VirtualDevice(device_type=1, virtual_device_id=0, target=llvm -keys=cpu)"


def test_unconstrained_and_memory_scope_only():
    vd = VirtualDevice()
    assert (vd.device_type, vd.virtual_device_id, vd.target) == (-1, -1, None) and vd.is_fully_unconstrained
    scoped = VirtualDevice(memory_scope="global.texture")
    assert scoped.memory_scope == "global.texture" and scoped != vd
    assert str(scoped) == "VirtualDevice(memory_scope='global.texture')"


def test_json_round_trip_and_errors():
    for vd in (VirtualDevice(), VirtualDevice(kiln.cpu(0), Target("c"), "global")):
        assert kiln.ir.load_json(kiln.ir.save_json(vd)) == vd
    with pytest.raises(KilnError, match="device must be a Device"):
        VirtualDevice("cpu")
    with pytest.raises(KilnError, match="memory_scope must be a str"):
        VirtualDevice(memory_scope=1)
