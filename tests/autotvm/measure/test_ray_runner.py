"""RayRunner (kiln/autotvm/measure/ray_runner.py) on a local Ray instance: the same records as LocalRunner, a
crashing candidate is an error record, not a lost worker, and a worker that dies loses only its own trials."""

import os
import sys

import pytest

from kiln import autotvm
from kiln.autotvm.measure import MeasureErrorNo, MeasureInput, create_measure_batch
from kiln.autotvm.measure.ray_runner import _measure_remote

from ..conftest import conv_model
from . import test_local  # registers the test.faulty template

ray = pytest.importorskip("ray")
# the workers cannot import this test package: send its template's functions by value
ray.cloudpickle.register_pickle_by_value(test_local)
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


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


def _measure_or_die(task, template, config, *args):
    """The runner's remote function, except that the worker process itself exits on the ``segfault`` candidate
    (what a node lost mid-measurement looks like to the driver)."""
    if config["mode"].val == "segfault":
        os._exit(1)
    return _measure_remote(task, template, config, *args)


def test_a_dying_worker_loses_only_its_own_trials(runner):
    runner._connect()
    dying = autotvm.RayRunner(address=None, number=1, repeat=1, timeout=20)
    dying._remote = ray.remote(num_cpus=1, max_retries=0)(_measure_or_die)
    task = autotvm.task.create("test.faulty", (("TENSOR", (64,), "float32"),), "llvm")
    space = task.config_space
    configs = {space.get(i)["mode"].val: space.get(i) for i in range(len(space))}
    order = ["ok", "segfault", "wrong", "ok"]
    results = dying.run([MeasureInput(task.target, task, configs[mode]) for mode in order])
    assert [r.error_no for r in results] == [0, MeasureErrorNo.RUNTIME_DEVICE, MeasureErrorNo.WRONG_ANSWER, 0]
    assert "ray:" in str(results[1].error_msg) and results[0].costs and results[3].costs
