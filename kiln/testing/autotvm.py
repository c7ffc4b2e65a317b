"""Helpers for tests of the tuning machinery (TVM's ``tvm.testing.autotvm``): a sample matrix-product template
with two split knobs, a task and records of it, and a runner that measures nothing (random costs), so tuners can
be exercised without compiling or timing anything."""

import random
import time

from .. import autotvm, te
from ..autotvm.measure.measure import MeasureResult, Runner
from ..target.target import Target

__all__ = ["DummyRunner", "matmul", "bad_matmul", "get_sample_task", "get_sample_records"]


class DummyRunner(Runner):
    """A runner whose every measurement succeeds with a random cost (seconds in ``[0, 1)``)."""

    def __init__(self):
        super().__init__(timeout=1, number=1)

    def run(self, measure_inputs, build_results):
        return [MeasureResult((random.random(),), 0, 0.2, time.time()) for _ in measure_inputs]

    def get_build_kwargs(self):
        """Nothing to ask of the builder (TVM's runner hook)."""
        return {}


def _matmul_schedule(n, l, m, dtype, reduce_extent):  # noqa: E741  (the product's dimensions)
    a = te.placeholder((n, l), name="A", dtype=dtype)
    b = te.placeholder((l, m), name="B", dtype=dtype)
    k = te.reduce_axis((0, reduce_extent), name="k")
    c = te.compute((n, m), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    s = te.create_schedule(c.op)
    y, x = s[c].op.axis
    cfg = autotvm.get_config()
    cfg.define_split("tile_y", y, num_outputs=2)
    cfg.define_split("tile_x", x, num_outputs=2)
    yo, yi = cfg["tile_y"].apply(s, c, y)
    # split x only for tiles wider than one column, so the number of loops depends on the config
    if cfg["tile_x"].size[-1] > 1:
        xo, xi = cfg["tile_x"].apply(s, c, x)
        s[c].reorder(yo, xo, k, yi, xi)
    else:
        s[c].reorder(yo, k, yi, x)
    return s, [a, b, c]


@autotvm.template("testing/matmul")
def matmul(n, l, m, dtype):  # noqa: E741  (the product's dimensions)
    """``(n, l) @ (l, m)`` with the knobs ``tile_y`` and ``tile_x`` (splits of the output's axes)."""
    return _matmul_schedule(n, l, m, dtype, l)


@autotvm.template("testing/bad_matmul")
def bad_matmul(n, l, m, dtype):  # noqa: E741
    """:func:`matmul`, except on a target with the key ``bad_device``, where it sums one term too few (a wrong
    result the runner's check must catch)."""
    target = Target.current(allow_none=True)
    if target is not None and "bad_device" in getattr(target, "keys", ()):
        return _matmul_schedule(n, l, m, dtype, l - 1)
    return matmul(n, l, m, dtype)


def get_sample_task(n=128):
    """``(task, target)``: the ``testing/matmul`` task of ``n x n`` matrices for ``llvm``."""
    target = Target("llvm")
    return autotvm.task.create("testing/matmul", args=(n, n, n, "float32"), target=target), target


def get_sample_records(n):
    """``n`` (MeasureInput, MeasureResult) pairs of the sample task, the ``i``-th costing ``i + 1`` seconds."""
    task, target = get_sample_task()
    configs = list(task.config_space)
    return [(autotvm.MeasureInput(target, task, configs[i % len(configs)]),
             MeasureResult((i + 1,), 0, i, time.time())) for i in range(n)]
