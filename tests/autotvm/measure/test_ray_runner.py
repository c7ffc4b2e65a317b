"""RayRunner (kiln/autotvm/measure/ray_runner.py) on a local Ray instance: the same records as LocalRunner, and a
crashing candidate is an error record, not a lost worker."""

import pytest

from kiln import autotvm
from kiln.autotvm.measure import MeasureErrorNo, MeasureInput, create_measure_batch

from ..conftest import conv_model
from . import test_local  # registers the test.faulty template

ray = pytest.importorskip("ray")
# the workers cannot import this test package: send its template's functions by value
ray.cloudpickle.register_pickle_by_value(test_local)


@pytest.fixture(scope="module")
def runner():
    runner = autotvm.RayRunner(address=None, number=1, repeat=1, timeout=20)
    yield runner
    runner.shutdown()


def test_ray_measures_like_the_local_runner(runner):
    mod, params = conv_model()
    (task,) = autotvm.task.extract_from_program(mod, params, target="llvm")
    tuner = autotvm.tuner.GridSearchTuner(task)
    tuner.tune(3, autotvm.measure_option(builder=autotvm.LocalBuilder(n_parallel=1), runner=runner))
    assert tuner.trials == 3 and tuner.best_flops > 0


def test_ray_crash_is_an_error_record(runner):
    task = autotvm.task.create("test.faulty", (("TENSOR", (64,), "float32"),), "llvm")
    space = task.config_space
    wanted = {"ok": 0, "wrong": MeasureErrorNo.WRONG_ANSWER, "segfault": MeasureErrorNo.RUNTIME_DEVICE}
    configs = [c for c in (space.get(i) for i in range(len(space))) if c["mode"].val in wanted]
    measure = create_measure_batch(task, autotvm.measure_option(runner=runner))
    results = measure([MeasureInput(task.target, task, c) for c in configs])
    assert [r.error_no for r in results] == [wanted[c["mode"].val] for c in configs]
