"""The tuners (kiln/autotvm/tuner/): each tunes a small convolution for a few trials, and the model rebuilt with
the records (``apply_history_best``) computes the right result."""

import json

import numpy as np
import pytest

import kiln
from kiln import autotvm, relay
from kiln.contrib import graph_executor

from ..conftest import conv_model

TUNERS = ["RandomTuner", "GridSearchTuner", "GATuner", "XGBTuner"]


@pytest.fixture(scope="module")
def conv_task():
    mod, params = conv_model()
    (task,) = autotvm.task.extract_from_program(mod, params, target="llvm")
    return mod, params, task


def small_option():
    return autotvm.measure_option(builder=autotvm.LocalBuilder(n_parallel=2, timeout=60),
                                  runner=autotvm.LocalRunner(number=1, repeat=1, timeout=20))


def make_tuner(name, task):
    if name == "XGBTuner":
        pytest.importorskip("xgboost")
        return autotvm.tuner.XGBTuner(task, plan_size=8, min_train=2, seed=0)
    if name == "GATuner":
        return autotvm.tuner.GATuner(task, pop_size=4, seed=0)
    if name == "RandomTuner":
        return autotvm.tuner.RandomTuner(task, seed=0)
    return autotvm.tuner.GridSearchTuner(task)


@pytest.mark.parametrize("name", TUNERS)
def test_tune_then_build_with_the_best_records(name, conv_task, tmp_path):
    mod, params, task = conv_task
    log = tmp_path / "records.json"
    tuner = make_tuner(name, task)
    tuner.tune(4, small_option(), callbacks=[autotvm.callback.log_to_file(str(log))])
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(rows) == 4 and len({row["config"]["index"] for row in rows}) == 4  # four distinct configs
    assert rows[0]["config"]["index"] == task.default_index  # the default is always a candidate
    assert all(row["result"][1] == 0 for row in rows), [row["error"] for row in rows]
    assert tuner.best_flops > 0 and tuner.best_config is not None
    with autotvm.apply_history_best(str(log)) as best:
        chosen = autotvm.DispatchContext.current.query(task.target, task.workload)
        with kiln.transform.PassContext(opt_level=3):
            lib = relay.build(mod, target="llvm", params=params)
    assert chosen == tuner.best_config and best.best_by_targetkey
    m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    x = np.random.default_rng(2).uniform(-1, 1, (1, 16, 14, 14)).astype("float32")
    m.set_input("x", x)
    m.run()
    expected = relay.create_executor("debug", mod=mod).evaluate()(x, params["w"]).numpy()
    np.testing.assert_allclose(m.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_grid_search_exhausts_the_space_and_early_stopping_stops(conv_task):
    _, _, task = conv_task

    from kiln.autotvm.measure import MeasureResult

    def measure(inputs):  # no compiler: the cost falls with the config index (the last one is best)
        return [MeasureResult((1.0 / (1 + inp.config.index),), 0, 0.0, 0.0) for inp in inputs]

    import kiln.autotvm.tuner.tuner as tuner_module

    original = tuner_module.create_measure_batch
    tuner_module.create_measure_batch = lambda task, option: measure
    try:
        grid = autotvm.tuner.GridSearchTuner(task)
        grid.tune(len(task.config_space), {"builder": autotvm.LocalBuilder(n_parallel=3), "runner": None})
        assert grid.trials == len(task.config_space) and grid.best_config.index == task.config_space.valid_indices()[-1]
        stopped = autotvm.tuner.GridSearchTuner(task)
        stopped.tune(100, {"builder": autotvm.LocalBuilder(n_parallel=1), "runner": None}, early_stopping=0)
        assert stopped.trials < len(task.config_space)
        budget = autotvm.tuner.RandomTuner(task, seed=1)  # a callback ends the run (kiln tune's time budget)
        budget.tune(100, {"builder": autotvm.LocalBuilder(n_parallel=2), "runner": None},
                    callbacks=[lambda tuner, inputs, results: tuner.trials >= 4 and tuner.stop()])
        assert budget.trials == 4
    finally:
        tuner_module.create_measure_batch = original


def test_xgb_features_describe_the_loop_nest(conv_task):
    pytest.importorskip("xgboost")
    from kiln.autotvm.tuner.feature import ITERVAR_LENGTH, get_feature

    _, _, task = conv_task
    feats = [get_feature(task, config) for config in task.config_space]
    assert all(len(f) == ITERVAR_LENGTH + len(next(iter(task.config_space)).get_flatten_feature()) for f in feats)
    assert len({tuple(f[:ITERVAR_LENGTH]) for f in feats}) > 1  # the loop nests differ between configs
    with pytest.raises(kiln.error.KilnError, match="loss_type 'hinge' is unknown"):
        autotvm.tuner.XGBTuner(task, loss_type="hinge")


def test_xgb_learns_from_other_workloads_of_the_template(conv_task):
    pytest.importorskip("xgboost")
    import sys

    bench = __import__("pathlib").Path(__file__).resolve().parents[3] / "bench"
    sys.path.insert(0, str(bench))
    try:
        from bench_tune import conv_task as make_conv_task
    finally:
        sys.path.remove(str(bench))
    from kiln.autotvm.measure import MeasureInput, MeasureResult

    _, _, task = conv_task
    other = make_conv_task(16, 16, 13, 3, 1, "llvm")  # same template, another workload
    history = [(MeasureInput(other.target, other, config),
                MeasureResult((1e-5 * (1 + i),), 0, 0.0, 0.0)) for i, config in enumerate(other.config_space)]
    tuner = autotvm.tuner.XGBTuner(task, min_train=2, seed=0)
    tuner.load_history(history + [(MeasureInput(task.target, task, next(iter(task.config_space))),
                                   MeasureResult((1e-5,), 0, 0.0, 0.0))])  # its own workload is not "history"
    assert list(tuner.extra) == [repr(other.workload)] and len(tuner.extra[repr(other.workload)][1]) == len(history)
