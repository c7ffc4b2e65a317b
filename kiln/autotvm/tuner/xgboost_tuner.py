"""A tuner guided by a learned cost model (TVM's ``xgboost_tuner.py``, ``xgboost_cost_model.py`` and
``model_based_tuner.py``).

The model is an XGBoost ranking model (``rank:pairwise``, or ``reg`` regression) from a candidate's features
(:mod:`.feature`: the lowered loop nest, vectorization, memory per level, arithmetic intensity, and the knob values)
to its measured FLOP/s, relative to the best so far. Until ``min_train`` successful measurements exist, candidates
are random. Then, after every batch, the model is refitted on all measurements and simulated annealing
(:mod:`.sa_optimizer`) proposes the next ``plan_size`` candidates it ranks highest; the tuner measures them in
that order, with an ``epsilon`` share of random ones to keep exploring.

Transfer between tasks of one template: ``tuner.load_history(records)`` adds measurements of other workloads of
the same template (from a log) to the training data, so the first plan is already informed.
"""

import math
import random

import numpy as np

from ...error import KilnError
from .feature import get_feature
from .sa_optimizer import SimulatedAnnealingOptimizer
from .tuner import Tuner, throughput

__all__ = ["XGBTuner"]


def _import_xgboost():
    try:
        import xgboost
    except ImportError:
        raise KilnError("autotvm.tuner.XGBTuner needs the xgboost package: pip install 'kiln[tune]'") from None
    return xgboost


class XGBTuner(Tuner):
    """Model-guided search (see the module docstring).

    Parameters
    ----------
    task : Task
    plan_size : int
        Candidates proposed per refit of the model.
    feature_type : str
        ``"itervar"`` (lowered-loop features and knob values) or ``"knob"`` (knob values alone).
    loss_type : str
        ``"rank"`` (pairwise ranking) or ``"reg"`` (regression on FLOP/s).
    num_threads : int, optional
        XGBoost threads.
    optimizer : str
        ``"sa"`` (simulated annealing; the only one).
    epsilon : float
        Share of random candidates in each plan.
    min_train : int
        Successful measurements needed before the model is used.
    """

    def __init__(self, task, plan_size=64, feature_type="itervar", loss_type="rank", num_threads=None,
                 optimizer="sa", diversity_filter_ratio=None, log_interval=50, epsilon=0.05, min_train=4, seed=None):
        super().__init__(task)
        self.xgb = _import_xgboost()
        if feature_type not in ("itervar", "knob", "curve"):
            raise KilnError(f"XGBTuner: feature_type {feature_type!r} is unknown (itervar, knob)")
        if loss_type not in ("rank", "reg"):
            raise KilnError(f"XGBTuner: loss_type {loss_type!r} is unknown (rank, reg)")
        if optimizer != "sa":
            raise KilnError(f"XGBTuner: optimizer {optimizer!r} is unknown (sa)")
        self.plan_size, self.epsilon, self.min_train = plan_size, epsilon, min_train
        self.feature_type = "itervar" if feature_type == "curve" else feature_type
        self.params = {"max_depth": 3, "gamma": 0.0001, "min_child_weight": 1, "subsample": 1.0, "eta": 0.3,
                       "lambda": 1.0, "alpha": 0, "objective": "rank:pairwise" if loss_type == "rank" else
                       "reg:squarederror", "verbosity": 0}
        if num_threads:
            self.params["nthread"] = num_threads
        self.rng = random.Random(seed)
        self.sa = SimulatedAnnealingOptimizer(self.space, seed=seed)
        self.features = {}  # index -> feature vector
        self.xs, self.ys = [], []  # training data: features, FLOP/s
        self.extra = {}  # workload -> (features, FLOP/s) of other tasks of the template (load_history)
        self.model = None
        self.plan, self.plan_pt = [], 0

    def _feature(self, index):
        if index not in self.features:
            try:
                self.features[index] = get_feature(self.task, self.space.get(index), self.feature_type)
            except Exception:  # noqa: BLE001  (a config that does not instantiate scores lowest)
                self.features[index] = None
        return self.features[index]

    def _matrix(self, rows):
        width = max((len(r) for r in rows if r is not None), default=1)
        return np.array([r if r is not None and len(r) == width else [0.0] * width for r in rows], dtype="float32")

    def _predict(self, indices):
        feats = [self._feature(i) for i in indices]
        scores = self.model.predict(self.xgb.DMatrix(self._matrix(feats)))
        return [float(s) if f is not None else -math.inf for s, f in zip(scores, feats, strict=True)]

    def next_batch(self, batch_size):
        out = []
        while len(out) < batch_size and self.has_next():
            if self.model is not None and self.plan_pt < len(self.plan) and self.rng.random() >= self.epsilon:
                index = self.plan[self.plan_pt]
                self.plan_pt += 1
            else:
                index = self.space.get_rand_index(to_exclude=self.visited, rng=self.rng)
            if index not in self.visited:
                self.visited.add(index)
                out.append(self.space.get(index))
        return out

    def update(self, inputs, results):
        for inp, res in zip(inputs, results, strict=True):
            feature = self._feature(inp.config.index)
            if feature is None:
                continue
            self.xs.append(feature)
            self.ys.append(throughput(self.task.flop, res))
        if sum(1 for y in self.ys if y > 0) >= self.min_train:
            self._fit()
            self.plan = self.sa.find_maximums(self._predict, self.plan_size, self.visited)
            self.plan_pt = 0

    def _fit(self):
        """Refit on this task's measurements and the transferred ones, each task its own ranking group with its
        FLOP/s relative to its best (workloads of different sizes are not compared with each other)."""
        groups = [(self.xs, self.ys), *self.extra.values()]
        xs, labels, sizes = [], [], []
        for gx, gy in groups:
            if not gy:
                continue
            top = max(gy) or 1.0
            xs += gx
            labels += [y / top for y in gy]
            sizes.append(len(gy))
        dtrain = self.xgb.DMatrix(self._matrix(xs), label=np.array(labels, dtype="float32"))
        if self.params["objective"].startswith("rank"):
            dtrain.set_group(sizes)
        self.model = self.xgb.train(self.params, dtrain, num_boost_round=60)

    def load_history(self, data_set, min_seed_records=10):
        """Add measurements of other workloads of this task's template (``(MeasureInput, MeasureResult)``
        pairs, e.g. ``record.load_from_file(log)``) to the training data."""
        for inp, res in data_set:
            if inp.task.name != self.task.name or inp.task.workload == self.task.workload:
                continue
            try:
                feature = get_feature(inp.task, inp.config, self.feature_type)
            except Exception:  # noqa: BLE001  (records of a config the template no longer accepts)
                continue
            gx, gy = self.extra.setdefault(repr(inp.task.workload), ([], []))
            gx.append(feature)
            gy.append(throughput(inp.task.flop, res))
