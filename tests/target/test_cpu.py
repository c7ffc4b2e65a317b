"""Tests of kiln/target/cpu.py (the CPU family table), of the features a library records and of the runtime's refusal
to run code built for features the host lacks (kiln/runtime/host.py, kiln/runtime/module.py)."""

import numpy as np
import pytest

import kiln
from kiln import relay, te
from kiln.contrib import graph_executor
from kiln.error import KilnError
from kiln.runtime.host import host_cpu_features, host_cpu_name
from kiln.target import Target
from kiln.target.compiler import _flags_key, have_cc
from kiln.target.cpu import FAMILIES, KNOWN_CPUS, cpu_info, family_of
from kiln.target.llvm_compile import have_llvmlite

needs_llvm = pytest.mark.skipif(not (have_cc() and have_llvmlite()), reason="needs llvmlite and a C compiler")
needs_cc = pytest.mark.skipif(not have_cc(), reason="needs a C compiler")


@pytest.mark.parametrize("mcpu, family, bits, registers", [
    ("x86-64", "x86-64", 128, 16), ("nehalem", "x86-64-v2", 128, 16), ("sandybridge", "sandybridge", 256, 16),
    ("haswell", "haswell", 256, 16), ("znver3", "haswell", 256, 16), ("skylake-avx512", "skylake-avx512", 512, 32),
    ("cascadelake", "cascadelake", 512, 32),
    ("icelake-server", "icelake", 512, 32), ("znver4", "znver4", 512, 32), ("sapphirerapids", "sapphirerapids", 512, 32),
])
def test_named_cpus(mcpu, family, bits, registers):
    info = Target(f"llvm -mcpu={mcpu}").cpu_info
    assert (info.family.name, info.vector_bits, info.vector_registers) == (family, bits, registers)
    assert Target(f"llvm -mcpu={mcpu}").vector_lanes("float32") == bits // 32
    assert set(info.features) == set(info.family.features)


def test_mattr_adds_and_removes_features():
    narrow = Target("llvm -mcpu=skylake-avx512 -mattr=-avx512f")
    assert narrow.vector_width == 256 and narrow.cpu_info.vector_registers == 16
    assert not any(f.startswith("avx512") for f in narrow.cpu_info.features)  # the extensions go with the foundation
    assert "-avx512f" in narrow.features  # LLVM is told, so it does not use the CPU's default
    wide = Target("llvm -mcpu=haswell -mattr=+avx512f")
    assert wide.vector_width == 512 and wide.cpu_info.vector_registers == 32 and "+avx512f" in wide.features
    assert Target("llvm -mcpu=haswell -mattr=-fma").cpu_info.fma_units == 0


def test_register_file_sets_the_tile_budgets():
    from kiln.topi.x86.micro_kernel import accumulator_budget, latency_accumulators

    assert accumulator_budget("llvm -mcpu=skylake-avx512") == 24
    assert accumulator_budget("llvm -mcpu=haswell") == 12
    assert latency_accumulators("llvm -mcpu=haswell") == 8  # two FMA pipes of 4 cycles
    assert latency_accumulators("llvm -mcpu=x86-64") == 4


@pytest.mark.parametrize("channels, avx512, avx2", [(64, 16, 8), (1000, 8, 8), (100, 10, 4), (24, 8, 8), (3, 3, 3),
                                                    (36, 12, 4), (88, 8, 8), (96, 16, 8)])
def test_channel_blocks_prefer_whole_vectors(channels, avx512, avx2):
    from kiln.topi.x86.micro_kernel import channel_block

    assert channel_block(channels, "llvm -mcpu=skylake-avx512") == avx512
    assert channel_block(channels, "llvm -mcpu=haswell") == avx2


def test_host_family_follows_features_over_name():
    spr = FAMILIES[-1]
    assert spr.name == "sapphirerapids"
    # a virtual machine reporting a client CPU's name with a server CPU's features is described by the features
    assert family_of("rocketlake", spr.features).name == "sapphirerapids"
    assert family_of("rocketlake", family_of("rocketlake").features).name == "icelake"
    # a name whose family needs more than the CPU has (FMA hidden) falls back to what the features support
    haswell_without_fma = [f for f in family_of("haswell").features if f != "fma"]
    assert family_of("haswell", haswell_without_fma).name == "sandybridge"
    assert family_of("a-future-cpu", family_of("znver4").features).name == "znver4"
    host = Target("llvm").cpu_info
    assert host.name == host_cpu_name() and host.features == host_cpu_features()
    assert set(host.family.features) <= host.features


def test_unknown_cpu_is_refused():
    with pytest.raises(KilnError, match="unknown CPU -mcpu=skylake-avx51 "):
        Target("llvm -mcpu=skylake-avx51")
    assert "haswell" in KNOWN_CPUS and "znver4" in KNOWN_CPUS


@needs_llvm
def test_every_listed_cpu_is_known_to_llvm(capfd):
    from kiln.target.llvm_compile import target_machine

    for name in sorted(KNOWN_CPUS):
        target_machine(Target(f"llvm -mcpu={name}"))
    assert "not a recognized processor" not in capfd.readouterr().err


def test_native_is_resolved_in_compile_cache_keys(monkeypatch):
    from kiln.target import compiler

    key = _flags_key(["-O3", "-march=native"])
    assert host_cpu_name() in key and "sse2" in key
    monkeypatch.setattr(compiler, "host_cpu_features", lambda: frozenset({"sse2"}))
    assert _flags_key(["-O3", "-march=native"]) != key  # another machine's objects are not this one's
    assert _flags_key(["-O3", "-march=haswell"]) == "-O3 -march=haswell"


def _addone(target):
    a = te.placeholder((16,), name="a")
    b = te.compute((16,), lambda i: a[i] + 1.0, name="b")
    s = te.create_schedule(b.op)
    s[b].vectorize(b.op.axis[0])
    return kiln.build(s, [a, b], target=target, name="addone")


@needs_llvm
def test_library_records_target_and_features(tmp_path):
    lib = _addone("llvm")
    assert lib.metadata["target"] == str(Target("llvm"))
    assert set(lib.metadata["cpu_features"]) == set(Target("llvm").cpu_info.features)
    path = lib.export_library(str(tmp_path / "addone.so"))
    loaded = kiln.runtime.load_module(path)
    assert loaded.metadata["targets"] == [str(Target("llvm"))]
    assert set(loaded.metadata["cpu_features"]) == set(host_cpu_features())
    out = np.zeros(16, "float32")
    loaded["addone"](np.arange(16, dtype="float32"), out)
    np.testing.assert_array_equal(out, np.arange(16) + 1)
    # code built for an older CPU runs here too, and records only that CPU's features
    haswell = _addone("llvm -mcpu=haswell") if "avx2" in host_cpu_features() else None
    if haswell is not None:
        assert set(haswell.metadata["cpu_features"]) == set(family_of("haswell").features)
        haswell["addone"](np.zeros(16, "float32"), out)
        np.testing.assert_array_equal(out, np.ones(16))


def _missing_feature(candidates):
    """A feature LLVM knows and this host lacks, preferring ``candidates`` (ones that change no calling convention).
    Only a feature a target keeps when it is added to the host's counts: an AVX-512 extension on a host without
    AVX-512F is dropped with it (``cpu_info``), so code built with it could not use it."""
    import llvmlite.binding as llvm

    known = llvm.get_host_cpu_features()
    missing = [f for f in known if f not in host_cpu_features() and f in cpu_info("", (f"+{f}",)).features]
    preferred = [f for f in candidates if f in missing]
    if not preferred and not missing:
        pytest.skip("this host has every CPU feature LLVM knows")
    return (preferred or missing)[0]


# features LLVM and gcc both know that many x86-64 hosts lack
# (gcc 12 knows the older ones first in line, not avxifma, avxvnniint8, sha512 or sm4)
_FOREIGN = ("avx512vp2intersect", "xop", "fma4", "tbm", "sse4a", "avx512fp16", "avxifma", "avxvnniint8", "amx-fp16",
            "sha512", "sm4", "avx512f", "avx2")


@needs_llvm
@pytest.mark.parametrize("kind", ["llvm", "c"])
def test_code_for_a_missing_feature_is_refused_not_run(kind, tmp_path):
    """Built for a feature the host lacks: building and exporting work (cross-compiling is fine), calling and
    loading raise a KilnError naming the feature instead of dying with an illegal instruction."""
    feature = _missing_feature(_FOREIGN)
    target = f"{kind} -mattr=+{feature}"
    lib = _addone(target)
    assert feature in lib.metadata["cpu_features"]
    with pytest.raises(KilnError, match=f"needs CPU features this host .* lacks: {feature}"):
        lib["addone"](np.zeros(16, "float32"), np.zeros(16, "float32"))
    path = lib.export_library(str(tmp_path / "foreign.so"))
    with pytest.raises(KilnError, match=feature):
        kiln.runtime.load_module(path)


@needs_llvm
def test_graph_executor_refuses_a_model_built_for_a_missing_feature(tmp_path):
    feature = _missing_feature(_FOREIGN)
    x = relay.var("x", shape=(2, 8))
    mod = kiln.IRModule.from_expr(relay.nn.relu(x) * relay.const(2.0))
    lib = relay.build(mod, target=f"llvm -mattr=+{feature}")
    with pytest.raises(KilnError, match=feature):
        graph_executor.GraphModule(lib["default"](kiln.cpu(0))).run(x=np.ones((2, 8), "float32"))
    path = str(tmp_path / "model.so")
    lib.export_library(path)
    with pytest.raises(KilnError, match=feature):
        kiln.runtime.load_module(path)
