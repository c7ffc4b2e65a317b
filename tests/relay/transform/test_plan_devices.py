"""PlanDevices: every parameter, function result and annotated value gets a virtual device; values used on
another device are copied; the planned program computes what the original does."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import InvalidIRError, KilnError
from kiln.ir import assert_structural_equal
from kiln.target import Target, VirtualDevice, make_compilation_config

CPU_TARGET = Target("llvm").with_host(Target("llvm"))
GPU_TARGET = Target("cuda").with_host(Target("llvm"))
CPU = VirtualDevice(kiln.cpu(0), CPU_TARGET)
GPU = VirtualDevice(kiln.device("cuda"), GPU_TARGET)


def _plan(mod, fallback=2):
    ctx = kiln.transform.PassContext(config={"relay.fallback_device_type": fallback})
    config = make_compilation_config(ctx, [CPU_TARGET, GPU_TARGET])
    return relay.transform.InferType()(relay.transform.PlanDevices(config)(relay.transform.InferType()(mod)))


def _parse(text):
    return relay.parse('#[version = "0.0.5"]\n' + text, "from_string", None, {"VirtualDevice": [CPU, GPU]})


def _run(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()


def test_unannotated_program_goes_to_the_default_device():
    planned = _plan(_parse("def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32]) { add(%a, %b) }"))
    main = planned["main"]
    assert [p.virtual_device for p in main.params] == [GPU, GPU] and main.virtual_device == GPU
    cpu_default = _plan(_parse("def @main(%a: Tensor[(2,), float32]) { negative(%a) }"), fallback=1)
    assert cpu_default["main"].virtual_device == CPU


def test_annotated_value_is_copied_to_where_it_is_used_and_values_agree():
    before = _parse("""
        def @main(%a: Tensor[(5, 7), float32], %b: Tensor[(5, 7), float32], %c: Tensor[(5, 7), float32]) {
          %0 = add(%a, %b);
          %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);
          subtract(%1, %c)
        }""")
    expected = _parse("""
        def @main(%a {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32],
                  %b {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32],
                  %c {virtual_device=meta[VirtualDevice][1]}: Tensor[(5, 7), float32],
                  virtual_device=meta[VirtualDevice][1]) {
          %0 = add(%a, %b);
          %1 = on_device(%0, virtual_device=meta[VirtualDevice][0], constrain_result=True);
          %2 = device_copy(%1, src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][1]);
          subtract(%2, %c)
        }""")
    planned = _plan(before)
    assert_structural_equal(planned, relay.transform.InferType()(expected), map_free_vars=True)
    assert_structural_equal(_plan(planned), planned)  # planning a planned program changes nothing
    args = [np.random.rand(5, 7).astype("float32") for _ in range(3)]
    want = args[0] + args[1] - args[2]
    np.testing.assert_allclose(_run(planned, *args), want, rtol=1e-6)
    with kiln.transform.PassContext(opt_level=3):  # kiln runs on one device: annotations and copies are identities
        lib = relay.build(planned, target="llvm")
    m = kiln.contrib.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    m.run(a=args[0], b=args[1], c=args[2])
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-6)


def test_let_bound_values_are_fixed_and_function_results_flow_to_callers():
    planned = _plan(_parse("""
        def @main(%a: Tensor[(4,), float32], %b: Tensor[(4,), float32]) {
          let %f = fn (%x, %y) { add(%x, %y) };
          %0 = %f(%a, %b);
          %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);
          negative(%1)
        }"""))
    let = planned["main"].body
    assert let.value.virtual_device == CPU and [p.virtual_device for p in let.value.params] == [CPU, CPU]
    args = [np.random.rand(4).astype("float32") for _ in range(2)]
    np.testing.assert_allclose(_run(planned, *args), -(args[0] + args[1]), rtol=1e-6)


def test_recover_virtual_device_map_reads_the_plan_back():
    planned = _plan(_parse("""
        def @main(%a: Tensor[(3,), float32], %b: Tensor[(3,), float32]) {
          %0 = add(%a, %b);
          %1 = device_copy(%0, src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][1]);
          negative(%1)
        }"""))
    recover = kiln.get_global_func("relay.transform.RecoverVirtualDeviceMap")
    found = recover(planned, planned["main"])
    by_op = {e.op.name: vd for e, vd in found.items() if isinstance(e, relay.Call)}
    assert by_op["add"] == CPU and by_op["negative"] == GPU and by_op["device_copy"] == GPU


def test_one_value_fixed_to_two_devices_is_an_error():
    mod = _parse("""
        def @main(%a: Tensor[(3,), float32]) {
          %0 = negative(%a);
          %1 = on_device(%0, virtual_device=meta[VirtualDevice][0], constrain_result=True);
          on_device(%1, virtual_device=meta[VirtualDevice][1], constrain_result=True)
        }""")
    with pytest.raises((KilnError, ValueError), match="PlanDevices|devices"):
        _plan(mod)


def test_config_must_be_a_compilation_config():
    with pytest.raises(KilnError, match="CompilationConfig"):
        relay.transform.PlanDevices("llvm")


def test_an_annotation_of_an_annotation_on_another_device_is_refused():
    # both annotations constrain the value: one value cannot live on two devices
    from kiln.relay.transform.plan_devices_util import maybe_on_device

    x = relay.var("x", shape=(2,))
    cpu, gpu = VirtualDevice(kiln.cpu(0)), VirtualDevice(kiln.device("cuda"))
    inner = relay.annotation.on_device(relay.add(x, x), cpu, constrain_body=True)
    with pytest.raises(InvalidIRError, match="PlanDevices: nested on_device annotations") as info:
        maybe_on_device(inner, gpu, True, True)
    assert isinstance(info.value, ValueError)  # what TVM's check raises
    merged = maybe_on_device(inner, cpu, True, True)  # the same device twice: one annotation
    assert merged.args[0].op.name == "add"
