"""The task scheduler (kiln/autotvm/tuner/task_scheduler.py): trials go where the weighted latency gains most."""

import math
import time
from dataclasses import dataclass

import pytest

from kiln import autotvm
from kiln.autotvm.measure import MeasureResult
from kiln.autotvm.tuner import RandomTuner, TaskScheduler
from kiln.error import KilnError

from ..conftest import conv_model, pooled_model


@dataclass
class _Task:
    name: str
    flop: int = 10**6


class CurveTuner:
    """A tuner whose best cost after ``k`` trials follows ``floor + (start - floor) * decay ** k`` (seconds): the
    measurements of a real tuner, without the machine's noise."""

    def __init__(self, name, start, floor, decay=0.9, size=1000):
        self.task = _Task(name)
        self.start, self.floor, self.decay, self.size = start, floor, decay, size
        self.trials = 0
        self.best_measure_pair = None

    def has_next(self):
        return self.trials < self.size

    def tune(self, n_trial, measure_option, early_stopping=None, callbacks=()):
        n = min(n_trial, self.size - self.trials)
        self.trials += n
        cost = self.floor + (self.start - self.floor) * self.decay ** self.trials
        self.best_measure_pair = (None, MeasureResult((cost,), 0, 0.0, time.time()))
        return self


def _schedule(tuners, weights=None, n_trial=400):
    scheduler = TaskScheduler([t.task for t in tuners], task_weights=weights, tuners=tuners, eps_random=0.0, seed=0)
    scheduler.tune(n_trial, measure_option=None, trials_per_round=4)
    assert sum(scheduler.task_trials) == n_trial
    return scheduler


def test_trials_follow_the_weight():
    tuners = [CurveTuner("a", 1e-3, 2e-4), CurveTuner("b", 1e-3, 2e-4)]
    scheduler = _schedule(tuners, weights=[10, 1])
    assert scheduler.task_trials[0] > 2 * scheduler.task_trials[1]


def test_trials_follow_the_expected_gain():
    # equal weights: a kernel of 10 ms that tuning can make 5x faster against one of 1 ms that it cannot improve
    tuners = [CurveTuner("slow", 1e-2, 2e-3, decay=0.99), CurveTuner("flat", 1e-3, 1e-3)]
    scheduler = _schedule(tuners)
    assert scheduler.task_trials[0] > 2 * scheduler.task_trials[1]
    assert scheduler.best_costs[0] < 3e-3
    objectives = [obj for _, _, obj in scheduler.history]
    assert all(b <= a for a, b in zip(objectives[len(tuners):], objectives[len(tuners) + 1:], strict=False))


def test_gradient_of_equal_costs_is_steeper_for_recent_progress_and_the_slower_of_a_template():
    tuners = [CurveTuner("a", 1e-3, 1e-4), CurveTuner("b", 1e-3, 1e-4), CurveTuner("a", 1e-3, 1e-4)]
    scheduler = TaskScheduler([t.task for t in tuners], tuners=tuners)
    scheduler.best_costs = [1e-3, 1e-3, 1e-4]
    scheduler.rounds = [5, 5, 5]
    scheduler.cost_history = [[2e-3, 1.8e-3, 1.5e-3, 1.2e-3, 1e-3], [1e-3] * 5, [1e-4] * 5]
    assert scheduler.gradient(0) < scheduler.gradient(1) < 0  # the same cost: "a" improved lately, "b" did not
    # the third task shows template "a" runs 10x faster elsewhere: the forward guess for task 0 is that rate
    flat_a = scheduler.gradient(0)
    scheduler.cost_history[0] = [1e-3] * 5
    assert scheduler.gradient(0) < scheduler.gradient(1)
    assert flat_a < scheduler.gradient(0)
    scheduler.best_costs[1] = math.inf
    assert scheduler.gradient(1) == -math.inf  # nothing works yet: anything found is a gain


def test_finished_tasks_leave_and_bad_arguments_are_errors():
    tuners = [CurveTuner("a", 1e-3, 1e-4, size=8), CurveTuner("b", 1e-3, 5e-4)]
    scheduler = _schedule(tuners, n_trial=40)
    assert scheduler.task_trials == [8, 32] and scheduler.finished[0]
    with pytest.raises(KilnError, match="no tasks"):
        TaskScheduler([])
    with pytest.raises(KilnError, match="1 task_weights for 2 tasks"):
        TaskScheduler([t.task for t in tuners], task_weights=[1], tuners=tuners)
    assert math.isinf(TaskScheduler([tuners[0].task], tuners=[tuners[0]]).best_costs[0])


def test_scheduler_tunes_a_model_with_real_measurements(tmp_path):
    tasks = autotvm.task.extract_from_program(*conv_model(), target="llvm")
    tasks += [t for t in autotvm.task.extract_from_program(*pooled_model(), target="llvm") if t.name == "reduce.x86"]
    log = tmp_path / "log.json"
    option = autotvm.measure_option(builder=autotvm.LocalBuilder(n_parallel=2, timeout=60),
                                    runner=autotvm.LocalRunner(number=2, repeat=1, timeout=20))
    scheduler = TaskScheduler(tasks, make_tuner=lambda t: RandomTuner(t, seed=0), seed=0)
    scheduler.tune(3 * len(tasks), option, trials_per_round=2, callbacks=[autotvm.callback.log_to_file(str(log))])
    assert sum(scheduler.task_trials) <= 3 * len(tasks) and all(n >= 1 for n in scheduler.task_trials)
    assert all(math.isfinite(c) and c > 0 for c in scheduler.best_costs)
    records = list(autotvm.record.load_from_file(str(log)))
    assert len(records) == sum(scheduler.task_trials)
