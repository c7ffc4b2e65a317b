"""Late-bound constants of VM executables (TVM's move/get/load_late_bound_consts): large constants kept apart
from the exported executable, loaded back by name before a VM runs it."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.runtime.vm import Executable, VirtualMachine


@pytest.fixture(scope="module")
def program():
    big = np.random.default_rng(0).standard_normal((64, 32)).astype("float32")
    small = np.array([2.0], "float32")
    x = relay.var("x", shape=(64, 32))
    # the relu keeps SimplifyExpr from moving the scale into the large constant ((x + c1) * c2 -> x * c2 + c1 * c2),
    # so the late-bound constant is ``big`` itself
    body = relay.multiply(relay.nn.relu(relay.add(x, relay.const(big))), relay.const(small))
    mod = kiln.IRModule.from_expr(relay.Function([x], body))
    return mod, big, small


def _run(exe, x):
    return VirtualMachine(exe, kiln.cpu(0)).invoke("main", x).numpy()


def test_file_round_trip_through_an_exported_library(program, tmp_path):
    mod, big, small = program
    exe = relay.vm.compile(mod, target="llvm")
    consts, lib = tmp_path / "consts", tmp_path / "lib.so"
    exe.move_late_bound_consts(str(consts), byte_limit=256)
    assert [name[:6] for name in exe.late_bound_missing()] == ["const_"]
    exe.mod.export_library(str(lib))
    loaded = kiln.runtime.load_module(str(lib))
    with pytest.raises(KilnError, match="late-bound constants const_. were not loaded"):
        VirtualMachine(loaded, kiln.cpu(0))
    loaded["load_late_bound_consts"](str(consts))
    x = np.ones((64, 32), "float32")
    np.testing.assert_allclose(_run(loaded, x), np.maximum(x + big, 0) * small, rtol=1e-6)
    again = Executable(kiln.runtime.load_module(str(lib)))  # TVM's wrapper form: the module itself
    assert isinstance(again, Executable)
    again.load_late_bound_consts(str(consts))
    np.testing.assert_allclose(_run(again, x), np.maximum(x + big, 0) * small, rtol=1e-6)


def test_map_round_trip_and_errors(program):
    mod, big, small = program
    exe = relay.vm.compile(mod, target="llvm")
    code, lib = exe.save()
    consts = exe.get_late_bound_consts(byte_limit=256)
    assert isinstance(consts, kiln.container.Map) and len(consts) == 1
    (name, value), = consts.items()
    np.testing.assert_array_equal(value.numpy(), big)
    code_without = exe.save()[0]
    assert len(code_without) < len(code) - big.nbytes // 2  # the large constant is no longer inside
    restored = Executable.load_exec(code_without, lib)
    assert restored.late_bound_missing() == [name]
    with pytest.raises(KilnError, match="no constant named"):
        restored.load_late_bound_consts_from_map({})
    with pytest.raises(KilnError, match=r"must be float32\[64, 32\]"):
        restored.load_late_bound_consts_from_map({name: np.zeros((2, 2), "float32")})
    restored.load_late_bound_consts_from_map(consts)
    x = np.full((64, 32), 3, "float32")
    np.testing.assert_allclose(_run(restored, x), np.maximum(x + big, 0) * small, rtol=1e-6)
    with pytest.raises(KilnError, match="already taken out"):
        exe.get_late_bound_consts(byte_limit=256)


def test_nothing_to_bind_below_the_limit(program):
    mod, big, small = program
    exe = relay.vm.compile(mod, target="llvm")
    assert len(exe.get_late_bound_consts(byte_limit=big.nbytes + 1)) == 0
    exe.load_late_bound_consts_from_map({})  # nothing to load: fine
    np.testing.assert_allclose(_run(exe, np.zeros((64, 32), "float32")), np.maximum(big, 0) * small,
                               rtol=1e-6)
    with pytest.raises(KilnError, match="not a VM executable module"):
        Executable(relay.build(mod, "llvm").lib)
