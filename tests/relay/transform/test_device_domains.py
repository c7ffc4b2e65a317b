"""The unification domain of PlanDevices: joining and defaulting virtual devices, unifying domains."""

import kiln
from kiln.ir import TensorType
from kiln.ir.type import FuncType
from kiln.relay.transform.device_domains import DeviceDomains, default_virtual_device, join_virtual_devices
from kiln.target import Target, VirtualDevice, make_compilation_config

LLVM = Target("llvm")
CUDA = Target("cuda").with_host(LLVM)


def test_join_takes_each_field_from_whichever_side_sets_it_and_fails_on_disagreement():
    cpu = VirtualDevice(kiln.cpu(0))
    scoped = VirtualDevice(None, None, "global")
    joined = join_virtual_devices(cpu, scoped)
    assert (joined.device_type, joined.virtual_device_id, joined.memory_scope) == (1, 0, "global")
    assert join_virtual_devices(cpu, VirtualDevice(kiln.device("cuda"))) is None
    assert join_virtual_devices(cpu, VirtualDevice()) == cpu


def test_default_fills_only_unset_fields_and_a_target_of_the_same_device_type():
    gpu = VirtualDevice(kiln.device("cuda"), CUDA)
    assert default_virtual_device(VirtualDevice(), gpu) == gpu
    cpu_only = default_virtual_device(VirtualDevice(kiln.cpu(0)), gpu)
    assert cpu_only.device_type == 1 and cpu_only.target is None  # cuda's target does not compile for a CPU


def test_unification_of_function_domains_and_defaulting():
    config = make_compilation_config(kiln.transform.PassContext(config={"relay.fallback_device_type": 2}),
                                     [LLVM, CUDA])
    domains = DeviceDomains(config, lambda e: None)
    ty = TensorType((2,), "float32")
    fn_ty = FuncType((ty, ty), ty)
    f = domains.free(fn_ty)
    cpu = domains.for_virtual_device(ty, VirtualDevice(kiln.cpu(0)))
    assert domains.unify_or_none(f.function_param(0), cpu) is not None
    assert domains.result_virtual_device(f.function_param(0)).target.kind.name == "llvm"  # made canonical
    domains.set_result_default_then_params(f, config.default_primitive_virtual_device)
    assert domains.result_virtual_device(f).device_type == 2
    assert domains.result_virtual_device(f.function_param(1)).device_type == 2  # free params follow the result
    assert domains.result_virtual_device(f.function_param(0)).device_type == 1
    gpu = domains.for_virtual_device(ty, VirtualDevice(kiln.device("cuda")))
    assert domains.unify_or_none(f.function_param(0), gpu) is None
