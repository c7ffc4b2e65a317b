"""Spending a tuning budget over the tasks of a model (the gradient scheduler of TVM's
``auto_scheduler/task_scheduler.py``; AutoTVM has none: its scripts tune the tasks one after another).

The model's latency is approximated by ``sum(weight_i * best_cost_i)`` over its tasks (``weight_i``: how often the
kernel runs per inference, ``best_cost_i``: the best measured run time of task ``i`` so far). Every round, one task
gets ``trials_per_round`` more measurements: after a warm-up round per task, the one along whose trials the
objective is expected to fall fastest, i.e. the most negative

    grad_i = weight_i * (alpha * backward_i + (1 - alpha) * forward_i)

where ``backward_i`` is the slope of task ``i``'s best cost over its last ``backward_window_size`` rounds (what
tuning it bought recently) and ``forward_i`` an optimistic guess of the next round's gain: the smaller of
``best_cost_i / rounds_i`` (a round buys what an average past round did) and ``beta * flop_i / best_rate``
(the task running as fast, in FLOP/s, as the fastest task of the same template), minus ``best_cost_i``. A task whose
space is exhausted or whose tuner stopped leaves the race. With probability ``eps_random`` a round goes to a random
task instead (exploration), and ties are broken at random.
"""

import math
import random
import time

from ...error import KilnError
from .tuner import throughput

__all__ = ["TaskScheduler"]


class TaskScheduler:
    """Allocate measurements among ``tasks`` (see the module docstring).

    Parameters
    ----------
    tasks : list of Task
    task_weights : list of float, optional
        Runs of each task's kernel per inference (1 each by default).
    make_tuner : callable, optional
        ``make_tuner(task) -> Tuner`` (``XGBTuner`` by default).
    tuners : list of Tuner, optional
        The tuners to drive instead (one per task), e.g. tuners that already learned from earlier records.
    alpha, beta, backward_window_size, eps_random : float, float, int, float
        The gradient's parameters (module docstring).
    seed : int, optional
        For the exploration draws and tie breaks.

    Attributes
    ----------
    best_costs : list of float
        Best measured seconds per task (``inf`` until a candidate succeeds).
    task_trials : list of int
        Measurements spent per task.
    history : list of (int, int, float)
        ``(task index, trials of the round, objective after it)`` per round.
    """

    def __init__(self, tasks, task_weights=None, make_tuner=None, tuners=None, alpha=0.2, beta=2.0,
                 backward_window_size=3, eps_random=0.05, seed=None):
        self.tasks = list(tasks)
        if not self.tasks:
            raise KilnError("TaskScheduler: no tasks to tune")
        self.task_weights = [1.0] * len(self.tasks) if task_weights is None else [float(w) for w in task_weights]
        if len(self.task_weights) != len(self.tasks):
            raise KilnError(f"TaskScheduler: {len(self.task_weights)} task_weights for {len(self.tasks)} tasks")
        if tuners is None:
            if make_tuner is None:
                from .xgboost_tuner import XGBTuner as make_tuner
            tuners = [make_tuner(t) for t in self.tasks]
        self.tuners = list(tuners)
        if len(self.tuners) != len(self.tasks):
            raise KilnError(f"TaskScheduler: {len(self.tuners)} tuners for {len(self.tasks)} tasks")
        self.alpha, self.beta, self.window, self.eps_random = alpha, beta, backward_window_size, eps_random
        self.rng = random.Random(seed)
        self.best_costs = [math.inf] * len(self.tasks)
        self.task_trials = [0] * len(self.tasks)
        self.rounds = [0] * len(self.tasks)
        self.cost_history = [[] for _ in self.tasks]  # best cost after each round of the task
        self.finished = [False] * len(self.tasks)
        self.history = []

    # ---- the objective and its gradient
    def objective(self, costs=None) -> float:
        """``sum(weight_i * cost_i)`` over the tasks (the model's latency in seconds, approximately)."""
        return sum(w * c for w, c in zip(self.task_weights, costs or self.best_costs, strict=True))

    def _best_rate_of_template(self, i) -> float:
        rates = [self.tasks[j].flop / self.best_costs[j] for j in range(len(self.tasks))
                 if self.tasks[j].name == self.tasks[i].name and math.isfinite(self.best_costs[j])
                 and self.tasks[j].flop]
        return max(rates, default=0.0)

    def gradient(self, i) -> float:
        """The expected change of the objective per round spent on task ``i`` (negative: a gain)."""
        cost = self.best_costs[i]
        if not math.isfinite(cost):
            return -math.inf  # no working candidate yet: anything found is an infinite gain
        history = self.cost_history[i]
        backward = 0.0
        if len(history) > self.window:
            backward = (history[-1] - history[-1 - self.window]) / self.window
        guess = cost - cost / max(1, self.rounds[i])
        best_rate = self._best_rate_of_template(i)
        if best_rate > 0 and self.tasks[i].flop:
            guess = min(guess, self.beta * self.tasks[i].flop / best_rate)
        forward = guess - cost
        return self.task_weights[i] * (self.alpha * backward + (1 - self.alpha) * forward)

    def _pick(self, live) -> int:
        if self.rng.random() < self.eps_random:
            return self.rng.choice(live)
        grads = {i: self.gradient(i) for i in live}
        lowest = min(grads.values())
        return self.rng.choice([i for i, g in grads.items() if g == lowest])

    # ---- the loop
    def _round(self, i, trials, measure_option, early_stopping, callbacks):
        tuner = self.tuners[i]
        before = tuner.trials
        tuner.tune(trials, measure_option, early_stopping=early_stopping, callbacks=callbacks)
        spent = tuner.trials - before
        self.task_trials[i] += spent
        self.rounds[i] += 1
        pair = tuner.best_measure_pair
        if pair is not None and throughput(1.0, pair[1]) > 0:
            self.best_costs[i] = min(self.best_costs[i], pair[1].mean_cost)
        self.cost_history[i].append(self.best_costs[i])
        if spent == 0 or not tuner.has_next() or (early_stopping is not None and spent < trials):
            self.finished[i] = True
        self.history.append((i, spent, self.objective()))
        return spent

    def tune(self, n_trial, measure_option, trials_per_round=8, early_stopping=None, callbacks=(),
             time_budget=None):
        """Spend up to ``n_trial`` measurements over the tasks (module docstring).

        Parameters
        ----------
        n_trial : int
            Measurements in total.
        measure_option : dict
            From ``autotvm.measure_option``.
        trials_per_round : int
            Measurements per round (the first round of every task measures its default config first).
        early_stopping : int, optional
            A task whose tuner goes this many trials without progress leaves the race.
        callbacks : sequence of callable
            Passed to every tuner (``autotvm.callback.log_to_file`` ...).
        time_budget : float, optional
            Seconds after which no round starts.

        Returns
        -------
        self
        """
        end = None if time_budget is None else time.monotonic() + time_budget
        spent = 0

        def go_on():
            return spent < n_trial and (end is None or time.monotonic() < end)

        for i in range(len(self.tasks)):  # warm-up: every task measures its default and a few more
            if not go_on():
                return self
            spent += self._round(i, min(trials_per_round, n_trial - spent), measure_option, early_stopping,
                                 callbacks)
        while go_on():
            live = [i for i in range(len(self.tasks)) if not self.finished[i]]
            if not live:
                break
            i = self._pick(live)
            spent += self._round(i, min(trials_per_round, n_trial - spent), measure_option, early_stopping,
                                 callbacks)
        return self
