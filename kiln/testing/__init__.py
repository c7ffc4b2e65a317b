"""kiln.testing: the helpers TVM's unit tests import as ``tvm.testing`` (a subset: comparing arrays, the targets
a test runs on, and the pytest decorators TVM's tests put on themselves).

Every target kiln runs is a CPU target, so "enabled targets" are ``llvm`` (when llvmlite is installed) and ``c``
(when a C compiler is), each on ``kiln.cpu(0)``; the GPU decorators mark nothing, since no GPU test can run here.

Examples
--------
>>> import kiln.testing
>>> kiln.testing.assert_allclose([1.0, 2.0], [1.0, 2.0 + 1e-9])
"""

import inspect
import platform
import sys

import numpy as np
import pytest

from ..error import KilnError
from ..runtime.device import cpu
from ..runtime.host import host_cpu_features, missing_features
from ..target.compiler import have_cc
from ..target.enabled import available_target_kinds as _available
from ..target.enabled import enabled_targets
from ..target.llvm_compile import have_llvmlite
from .compare import CompareBeforeAfter
from .int_constraints import check_bool_expr_is_true, check_int_constraints_trans_consistency

__all__ = ["CompareBeforeAfter", "check_bool_expr_is_true", "check_int_constraints_trans_consistency",
           "assert_allclose", "assert_prim_expr_equal", "enabled_targets", "device_enabled",
           "parametrize_targets",
           "requires_llvm",
           "uses_gpu", "requires_gpu", "requires_cuda", "requires_tensorcore", "requires_rpc", "main", "assert_equal",
           "parameter",
           "parameters", "fixture", "known_failing_targets", "requires_x86", "requires_x86_vnni",
           "requires_x86_avx512", "requires_arm_dot"]


def assert_allclose(actual, desired, rtol=1e-7, atol=1e-7, verbose=True):
    """``numpy.testing.assert_allclose`` with TVM's defaults (relative and absolute 1e-7); NDArrays are compared
    by value, and shapes must match exactly (no broadcasting)."""
    actual, desired = (np.asanyarray(a.numpy() if hasattr(a, "numpy") else a) for a in (actual, desired))
    np.testing.assert_equal(actual.shape, desired.shape)
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=verbose)


def device_enabled(target) -> bool:
    """Whether ``target`` (a string such as ``"llvm -mcpu=haswell"``) can run here."""
    return str(target).split()[0] in _available()


def host_runs(target) -> bool:
    """Whether this host has every CPU feature code built for ``target`` may use; elsewhere such code is built and
    inspected (cross-compiling is fine), not run."""
    from ..target import Target
    from ..target.cpu import required_features

    target = target if isinstance(target, Target) else Target(target)
    return not missing_features(required_features(target.cpu_info))


def parametrize_targets(*targets):
    """Run the decorated test once per target (the enabled ones, or those given) with ``target`` and ``dev``
    arguments, as TVM's decorator does; a target that cannot run here is skipped, not dropped."""
    def decorate(func, chosen=targets):
        names = list(chosen) or ["llvm", "c"]
        # a test that takes no ``dev`` (one that only compiles) is parametrized by its target alone
        with_dev = "dev" in inspect.signature(func).parameters
        params = [pytest.param(*((t, cpu(0)) if with_dev else (t,)), id=t,
                               marks=pytest.mark.skipif(not device_enabled(t), reason=f"{t} cannot run here"))
                  for t in names]
        return pytest.mark.parametrize("target,dev" if with_dev else "target", params)(func)

    if len(targets) == 1 and callable(targets[0]):
        return decorate(targets[0], ())
    return decorate


requires_llvm = pytest.mark.skipif(not (have_llvmlite() and have_cc()), reason="needs llvmlite and a C compiler")
"""Skip a test where the LLVM backend cannot build (TVM's ``tvm.testing.requires_llvm``)."""


def _requires_cpu_features(*features, what):
    missing = [f for f in features if f not in host_cpu_features()]
    return pytest.mark.skipif(bool(missing), reason=f"{what}: the host CPU lacks {', '.join(missing)}")


requires_x86 = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686"),
                                  reason="needs an x86 host")
"""Skip a test where the host is not an x86 CPU (TVM's ``tvm.testing.requires_x86``)."""

requires_x86_vnni = _requires_cpu_features("avx512vnni", what="needs AVX512-VNNI")
"""Skip a test where the host CPU has no AVX512-VNNI (TVM's ``tvm.testing.requires_x86_vnni``)."""

requires_x86_avx512 = _requires_cpu_features("avx512f", what="needs AVX-512")
"""Skip a test where the host CPU has no AVX-512 (TVM's ``tvm.testing.requires_x86_avx512``)."""

requires_arm_dot = pytest.mark.skip(reason="kiln has no ARM target")
"""Skip a test that needs ARM's dot-product instructions (TVM's ``tvm.testing.requires_arm_dot``): kiln compiles
for x86 only."""


def known_failing_targets(*targets):
    """Mark a test (or a class of tests) as expected to fail on ``targets`` (TVM's decorator), for the ``target``
    parametrization of :mod:`kiln.testing.plugin`."""
    return pytest.mark.known_failing_targets(*targets)


def uses_gpu(func):
    """TVM marks tests that may use a GPU; kiln runs them on the CPU targets only (no mark)."""
    return func


requires_gpu = pytest.mark.skip(reason="kiln runs on CPUs only")
"""Skip a test that needs a GPU (TVM's ``tvm.testing.requires_gpu``)."""

requires_cuda = pytest.mark.skip(reason="kiln has no CUDA backend")
"""Skip a test that needs CUDA (TVM's ``tvm.testing.requires_cuda``)."""

requires_tensorcore = pytest.mark.skip(reason="kiln runs on CPUs only (no tensor cores)")
"""Skip a test that needs NVIDIA tensor cores (TVM's ``tvm.testing.requires_tensorcore``)."""

requires_rpc = pytest.mark.skipif(False, reason="kiln always has RPC (kiln.rpc)")
"""TVM's ``tvm.testing.requires_rpc``: kiln is always built with RPC, so it skips nothing."""


def main():
    """Run the calling test file with pytest (TVM's ``tvm.testing.main()`` at the bottom of a test file)."""
    import inspect
    import sys

    caller = inspect.stack()[1].filename
    sys.exit(pytest.main([caller, *sys.argv[1:]]))


def assert_equal(actual, desired):
    """``numpy.testing.assert_equal`` on values (NDArrays read first)."""
    np.testing.assert_equal(*(a.numpy() if hasattr(a, "numpy") else a for a in (actual, desired)))


def assert_prim_expr_equal(lhs, rhs):
    """Assert that the integer expressions ``lhs`` and ``rhs`` are equal for all values of their variables, as
    far as kiln's arithmetic analyzer can prove (TVM's ``tvm.testing.assert_prim_expr_equal``)."""
    from ..arith import Analyzer

    if not Analyzer().can_prove_equal(lhs, rhs):
        raise AssertionError(f"{lhs} and {rhs} are not equal")


def parameter(*values, ids=None, by_dict=None):
    """A pytest fixture taking each of ``values`` in turn (TVM's ``tvm.testing.parameter``); bind it to a module
    variable (or a class attribute), whose name becomes the fixture's: ``dtype = kiln.testing.parameter("float32",
    "int8")``. ``by_dict={"id": value, ...}`` gives the values with their ids."""
    if by_dict is not None:
        if values or ids:
            raise KilnError("kiln.testing.parameter: by_dict cannot be given with positional values or ids")
        ids, values = (list(t) for t in zip(*by_dict.items(), strict=True))
    method = _in_class_body(sys._getframe(1))
    return pytest.fixture(params=list(values), ids=ids)(_fixture_function("request", lambda r: r.param, method))


def parameters(*value_sets, ids=None):
    """Fixtures parametrized together (TVM's ``tvm.testing.parameters``): ``dtype, shape =
    kiln.testing.parameters(("float32", (1, 2)), ("int8", (3,)))`` gives each test two cases, not four. The tuples
    come from one parametrized fixture, defined in the calling module (pytest finds fixtures by module attribute)
    under a name derived from the call site; each returned fixture takes its field of the current tuple."""
    sizes = {len(values) for values in value_sets}
    if len(sizes) != 1:
        raise KilnError(f"kiln.testing.parameters: every value set needs the same length, got {sorted(sizes)}")
    caller = sys._getframe(1)
    shared = f"_kiln_parameters_{caller.f_lineno}_{len(caller.f_globals)}"

    def values(request):
        return request.param

    caller.f_globals[shared] = pytest.fixture(params=list(value_sets), ids=ids)(values)
    method = _in_class_body(caller)
    return tuple(pytest.fixture(_fixture_function(shared, lambda t, i=i: t[i], method)) for i in range(sizes.pop()))


def _in_class_body(frame) -> bool:
    """Whether ``frame`` runs a class body (its fixtures are then methods, called with the test's instance)."""
    return frame.f_locals is not frame.f_globals


def _fixture_function(argument, compute, method):
    """A fixture function of the one fixture ``argument`` returning ``compute(its value)``; with ``method``, it
    takes the instance first, as pytest calls fixtures defined in a class."""
    def fixture_function(*instance, **kwargs):
        return compute(kwargs[argument])

    self_arg = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] if method else []
    fixture_function.__signature__ = inspect.Signature(
        [*self_arg, inspect.Parameter(argument, inspect.Parameter.KEYWORD_ONLY)])
    return fixture_function


def fixture(func=None, *, cache_return_value=False):
    """``pytest.fixture`` (TVM's ``tvm.testing.fixture``; its return value is recomputed for each test here, as
    ``cache_return_value=False`` asks)."""
    del cache_return_value
    return pytest.fixture(func) if func is not None else pytest.fixture
