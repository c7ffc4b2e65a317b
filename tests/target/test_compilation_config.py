"""make_compilation_config: host, default device and canonical virtual devices."""

import pytest

import kiln
from kiln.error import KilnError
from kiln.target import Target, VirtualDevice, make_compilation_config


def test_default_device_comes_from_the_fallback_key_else_the_first_target():
    llvm, cuda = Target("llvm"), Target("cuda")
    ctx = kiln.transform.PassContext(config={"relay.fallback_device_type": 2})
    config = make_compilation_config(ctx, [llvm, cuda])
    assert config.default_primitive_virtual_device.device_type == 2
    assert config.default_primitive_virtual_device.target.kind.name == "cuda"
    assert config.host_virtual_device.device_type == 1 and config.host_target.kind.name == "llvm"
    assert all(t.host is not None for t in config.primitive_targets)  # every target runs its glue on the host
    assert make_compilation_config(None, "llvm").default_primitive_virtual_device.device_type == 1


def test_canonical_virtual_device_fills_the_target_of_its_device_type():
    config = make_compilation_config(None, [Target("llvm"), Target("cuda")])
    canon = config.canonical_virtual_device(VirtualDevice(kiln.device("cuda")))
    assert canon.target.kind.name == "cuda" and canon.virtual_device_id == 0
    assert config.canonical_virtual_device(VirtualDevice()).is_fully_unconstrained
    with pytest.raises(KilnError, match="no target given for device type 4"):
        config.canonical_virtual_device(VirtualDevice(kiln.device("opencl")))
