"""Tests of kiln/target/generic_func.py (TVM's tvm.target.generic_func)."""

import pytest

from kiln.error import KilnError
from kiln.target import Target, generic_func


def test_dispatch_on_the_current_targets_keys():
    @generic_func
    def scale(x, factor=2):
        """Doubles by default."""
        return x * factor

    @scale.register(["cpu", "gpu"])
    def scale_cpu(x, factor=2):
        return x * factor + 1

    assert scale(3) == 6 and scale.__doc__ == "Doubles by default." and scale.fdefault(3) == 6
    with Target("llvm"):
        assert scale(3) == 7 and scale(3, factor=3) == 10
    with Target("c"):
        assert scale(3) == 7
    with pytest.raises(KilnError, match="already registered"):
        scale.register("cpu", lambda x: x)
    scale.register("cpu", lambda x, factor=2: -x, override=True)
    with Target("llvm"):
        assert scale(3) == -3
