"""Tests of kiln/target/target.py: parsing, attributes, errors, the current target, registry and JSON."""

import threading

import pytest

import kiln
from kiln.error import KilnError
from kiln.ir import load_json, save_json
from kiln.target import Target
from kiln.target.target import host_cpu_name


def test_parse_llvm_options():
    t = Target("llvm -mcpu=native -num-cores=2")
    assert t.kind.name == "llvm"
    assert str(t.kind) == "llvm"
    assert t.mcpu == "native"
    assert t.num_cores == 2
    assert t.attrs["num_cores"] == 2
    assert t.attrs["mcpu"] == "native"
    assert t.keys == ("cpu",)
    assert t.is_host_cpu
    assert t.cpu_name == host_cpu_name()


def test_c_target_and_defaults():
    t = Target("c")
    assert t.kind.name == "c"
    assert t.mcpu == ""
    assert t.num_cores >= 1
    assert t.host is None
    assert t.opt_level == 3


def test_host_keyword():
    t = Target(target="llvm", host="llvm")
    assert t.kind.name == "llvm"
    assert t.host == Target("llvm")
    assert Target("c", host=Target("llvm")).host.kind.name == "llvm"
    assert t.with_host(None).host is None


def test_host_in_the_target_string():
    # TVM's tests write the host into the string: "llvm --host=llvm"
    assert Target("llvm --host=llvm").host == Target("llvm")
    t = Target("llvm -mcpu=native -host=c")
    assert t.host == Target("c") and t.mcpu == "native"
    assert Target("c --host=llvm", host="c").host == Target("c")  # the keyword wins


def test_str_round_trip_and_value_equality():
    t = Target("llvm -num-cores=2 -mcpu=skylake-avx512 -mattr=+avx512f,+fma")
    assert str(t) == "llvm -keys=cpu -mattr=+avx512f,+fma -mcpu=skylake-avx512 -num-cores=2"
    assert Target(str(t)) == t
    assert hash(Target(str(t))) == hash(t)
    assert t.mattr == ("+avx512f", "+fma")
    assert Target(t) is not None and Target(t) == t
    assert Target({"kind": "llvm", "mcpu": "skylake-avx512", "num_cores": 2,
                   "mattr": ["+avx512f", "+fma"]}) == t
    assert Target(t.export()) == t


def test_vector_width_from_host_and_named_cpus():
    host = Target("llvm")
    features = set(host.features)
    expected = 512 if "+avx512f" in features else 256 if "+avx2" in features or "+avx" in features else 128
    assert host.vector_width == expected
    assert host.vector_lanes("float32") == expected // 32
    assert host.vector_lanes("float64") == expected // 64
    assert Target("llvm -mcpu=skylake-avx512").vector_width == 512
    assert Target("llvm -mcpu=haswell").vector_width == 256
    assert Target("llvm -mcpu=haswell -mattr=+avx512f").vector_width == 512
    assert Target("llvm -vector-width=128").vector_lanes("int8") == 16


@pytest.mark.parametrize("text, fragment", [
    ("tpu", "unknown target kind 'tpu'"),
    ("", "empty target string"),
    ("llvm -frobnicate=3", "unknown option -frobnicate"),
    ("llvm -num-cores=two", "-num-cores needs an integer, got 'two'"),
    ("llvm -num-cores=0", "-num-cores must be at least 1"),
    ("llvm mcpu=native", "option 'mcpu=native' must look like -name=value"),
    ("llvm -mattr=avx2", "-mattr entry 'avx2' must start with + or -"),
    ("llvm -mcpu", "option -mcpu needs a value"),
    ("llvm --host=", "-host needs a target kind"),
    ("llvm --host=tpu", "unknown target kind 'tpu'"),
    ("llvm --host=cuda", "the host must be a CPU kind (llvm, c), got 'cuda'"),
])
def test_bad_target_strings_name_the_bad_part(text, fragment):
    with pytest.raises(KilnError) as info:
        Target(text)
    assert fragment in str(info.value)


def test_bad_config_dict():
    with pytest.raises(KilnError, match="unknown option -speed"):
        Target({"kind": "c", "speed": 3})
    with pytest.raises(KilnError, match="unknown target kind"):
        Target({"mcpu": "native"})
    with pytest.raises(KilnError, match="expected a target string"):
        Target(42)


def test_current_is_a_per_thread_stack():
    assert Target.current() is None
    with pytest.raises(KilnError, match="no target is set"):
        Target.current(allow_none=False)
    outer, inner = Target("llvm"), Target("c")
    seen = []
    with outer:
        assert Target.current() == outer
        with inner:
            assert Target.current() == inner
            thread = threading.Thread(target=lambda: seen.append(Target.current()))
            thread.start()
            thread.join()
        assert Target.current() == outer
    assert Target.current() is None
    assert seen == [None]


def test_registered_global_functions():
    make = kiln.get_global_func("target.Target")
    assert make("llvm -num-cores=3").num_cores == 3
    current = kiln.get_global_func("target.Target.current")
    with Target("c"):
        assert current().kind.name == "c"
    assert current() is None


def test_json_round_trip():
    t = Target("llvm -mcpu=znver4 -num-cores=2", host="llvm")
    back = load_json(save_json(t))
    assert back == t
    assert back.host == Target("llvm")


def test_list_kinds():
    assert Target.list_kinds() == ["c", "cuda", "llvm", "metal", "nvptx", "opencl", "rocm", "vulkan", "webgpu"]


def test_gpu_kinds_describe_their_device_with_tvm_defaults():
    """GPU kinds parse with TVM's attributes and defaults (what FuseOps reads), and every build refuses them."""
    import kiln
    from kiln import relay

    assert Target("opencl").max_function_args == 128 and Target("metal").max_function_args == 31
    assert Target("cuda").max_function_args == 0 and Target("llvm").max_function_args == 0
    assert Target("cuda").keys == ("cuda", "gpu") and Target("cuda").thread_warp_size == 32
    t = Target("metal -max_function_args=8 -max_num_threads=512")  # TVM spells these with underscores
    assert (t.max_function_args, t.max_num_threads, t.attrs["thread_warp_size"]) == (8, 512, 16)
    assert Target(str(t)) == t and load_json(save_json(t)) == t
    with pytest.raises(KilnError, match="unknown option -num-cores for kind 'cuda'"):
        Target("cuda -num-cores=2")
    x = relay.var("x", shape=(2,))
    with pytest.raises(KilnError, match="target kind 'opencl' is not supported"):
        relay.build(kiln.IRModule.from_expr(relay.Function([x], x + x)), target="opencl")


def test_a_device_leads_the_keys():
    """As TVM's: ``-device`` goes before the kind's keys (generic functions dispatch on it first), and the target
    still round-trips through its string."""
    arm = Target("llvm -device=arm_cpu -mtriple=aarch64-linux-gnu")
    assert arm.keys == ("arm_cpu", "cpu")
    assert Target(str(arm)) == arm and "-keys=arm_cpu,cpu" in str(arm)
    assert Target("opencl -device=mali").keys == ("mali", "opencl", "gpu")
    assert Target("llvm -device=arm_cpu -keys=cpu").keys == ("cpu",)  # explicit keys stay as given
    assert Target("llvm").keys == ("cpu",)
