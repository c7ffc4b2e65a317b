"""The pytest plugin of TVM's test suites (``tvm.testing.plugin``): a test that takes a ``target`` argument without
parametrizing it runs once per CPU target kiln has (``llvm``, ``c``; one that cannot run here is skipped), with
``dev`` its device, and ``@kiln.testing.known_failing_targets(...)`` marks it as expected to fail on those targets.
Enable it as TVM's ``conftest.py`` does: ``pytest_plugins = ["kiln.testing.plugin"]``.
"""

import pytest

from ..runtime.device import cpu
from . import device_enabled

TARGETS = ("llvm", "c")
"""The targets a ``target`` argument runs through."""


def pytest_configure(config):
    """Declare the plugin's marker."""
    config.addinivalue_line("markers", "known_failing_targets(*targets): the test is expected to fail on them")


def pytest_generate_tests(metafunc):
    """Parametrize an unparametrized ``target`` argument over :data:`TARGETS`."""
    if "target" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0] if isinstance(mark.args[0], list | tuple) else mark.args[0].split(",")
        if "target" in [n.strip() for n in names]:
            return
    failing = {t for mark in metafunc.definition.iter_markers("known_failing_targets") for t in mark.args}
    params = []
    for target in TARGETS:
        marks = [pytest.mark.skipif(not device_enabled(target), reason=f"{target} cannot run here")]
        if target in failing:
            marks.append(pytest.mark.xfail(reason=f"known to fail on {target}"))
        params.append(pytest.param(target, id=target, marks=marks))
    metafunc.parametrize("target", params)


@pytest.fixture
def dev(target):
    """The device of ``target`` (the CPU)."""
    del target
    return cpu(0)
