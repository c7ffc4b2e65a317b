"""kiln.testing: the tvm.testing helpers TVM's unit tests import."""

import numpy as np
import pytest

import kiln
import kiln.testing

from ..target.conftest import HAVE_LLVM


def test_assert_allclose_has_tvms_defaults():
    kiln.testing.assert_allclose(kiln.nd.array(np.ones(3, "float32")), np.ones(3))
    with pytest.raises(AssertionError):
        kiln.testing.assert_allclose([1.0], [1.0 + 1e-5])  # beyond 1e-7
    with pytest.raises(AssertionError):
        kiln.testing.assert_allclose(np.ones((2, 1)), np.ones(2))  # shapes must match, no broadcasting


def test_enabled_targets_are_cpu_targets_that_run_here():
    targets = dict(kiln.testing.enabled_targets())
    assert set(targets) <= {"llvm", "c"} and all(dev == kiln.cpu(0) for dev in targets.values())
    assert ("llvm" in targets) == HAVE_LLVM
    assert kiln.testing.device_enabled("llvm -mcpu=haswell") == HAVE_LLVM
    assert not kiln.testing.device_enabled("cuda")


def test_parametrize_targets_marks_one_case_per_target():
    @kiln.testing.parametrize_targets("llvm", "cuda")
    def case(target, dev):
        pass

    (mark,) = [m for m in case.pytestmark if m.name == "parametrize"]
    assert mark.args[0] == "target,dev" and [p.values[0] for p in mark.args[1]] == ["llvm", "cuda"]
    assert mark.args[1][1].marks[0].args[0] is True  # cuda cannot run here: skipped, not dropped
    @kiln.testing.parametrize_targets
    def bare(target, dev):
        pass

    assert [p.values[0] for p in bare.pytestmark[0].args[1]] == ["llvm", "c"]

    @kiln.testing.parametrize_targets("llvm -mcpu=x86-64")
    def compile_only(target):  # no dev argument: parametrized by the target alone, as in TVM
        pass

    (mark,) = compile_only.pytestmark
    assert mark.args[0] == "target" and mark.args[1][0].values == ("llvm -mcpu=x86-64",)


def test_cpu_requirement_marks():
    import platform

    on_x86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
    assert kiln.testing.requires_x86.args[0] is (not on_x86)
    assert kiln.testing.requires_arm_dot.name == "skip"


dtype = kiln.testing.parameter("float32", "int8")


@kiln.testing.fixture
def doubled(dtype):
    return dtype * 2


def test_parameter_and_fixture_run_each_value(dtype, doubled):
    assert dtype in ("float32", "int8") and doubled == dtype * 2


elem_dtype, elem_shape = kiln.testing.parameters(("float32", (1, 2)), ("int8", (3,)))
_PAIRS_SEEN: list = []


def test_parameters_run_their_value_sets_together(elem_dtype, elem_shape):
    _PAIRS_SEEN.append((elem_dtype, elem_shape))
    assert (elem_dtype, elem_shape) in [("float32", (1, 2)), ("int8", (3,))]


def test_parameters_made_two_cases_not_four():
    assert sorted(_PAIRS_SEEN) == [("float32", (1, 2)), ("int8", (3,))]


def test_parameters_need_value_sets_of_one_length():
    with pytest.raises(kiln.error.KilnError, match="same length"):
        kiln.testing.parameters((1, 2), (3,))


class TestParametersInAClass:
    width, height = kiln.testing.parameters((1, 2), (3, 4))

    def test_fields_of_one_set(self, width, height):
        assert (width, height) in [(1, 2), (3, 4)]


class TestParameterInAClass:
    depth = kiln.testing.parameter(1, 2)

    def test_each_value(self, depth):
        assert depth in (1, 2)


def test_cpu_feature_requirements_follow_the_host():
    from kiln.runtime.host import host_cpu_features

    for mark, feature in ((kiln.testing.requires_x86_vnni, "avx512vnni"), (kiln.testing.requires_x86_avx512, "avx512f")):
        assert mark.mark.name == "skipif" and mark.mark.args[0] == (feature not in host_cpu_features())


def test_cudnn_never_exists():
    from kiln.contrib import cudnn

    assert cudnn.exists() is False


def test_assert_prim_expr_equal():
    from kiln import tir
    from kiln.testing import assert_prim_expr_equal

    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    assert_prim_expr_equal(x * 2 + y - x, x + y)
    assert_prim_expr_equal(tir.floordiv(x * 4 + 8, 4), x + 2)
    with pytest.raises(AssertionError, match="not equal"):
        assert_prim_expr_equal(x + 1, x)
