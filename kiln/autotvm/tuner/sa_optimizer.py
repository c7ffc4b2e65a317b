"""Simulated annealing over a config space (TVM's ``sa_model_optimizer.py``): find the configs a cost model scores
highest without scoring the whole space.

``parallel_size`` walkers start at random points (and at the best points found so far); each step moves every
walker to a neighbour (one knob changed to another value) and accepts the move if the model scores it higher, or
with probability ``exp((new - old) / temperature)`` otherwise; the temperature falls linearly from ``temp[0]`` to
``temp[1]``. The best ``num`` distinct points seen are kept in a heap. A space of at most ``exhaustive_below``
points is simply scored whole.
"""

import heapq
import math
import random

__all__ = ["SimulatedAnnealingOptimizer"]


class SimulatedAnnealingOptimizer:
    """Maximize ``score(indices) -> list of float`` over a config space (see the module docstring)."""

    def __init__(self, space, n_iter=100, temp=(1.0, 0.0), parallel_size=64, early_stop=30, exhaustive_below=512,
                 seed=None):
        self.space = space
        self.dims = space.dims
        self.n_iter, self.temp, self.parallel_size = n_iter, temp, parallel_size
        self.early_stop, self.exhaustive_below = early_stop, exhaustive_below
        self.rng = random.Random(seed)
        self.points = []

    def _neighbour(self, index) -> int:
        if not self.dims:
            return index
        knob = self.rng.randrange(len(self.dims))
        positions = self.space.point2knob(index)
        positions[knob] = self.rng.randrange(self.dims[knob])
        moved = self.space.knob2point(positions)
        return moved if self.space.is_index_valid(moved) else index  # a neighbour the multi_filter rejects: stay

    def find_maximums(self, score, num, exclusive) -> list:
        """The ``num`` indices not in ``exclusive`` with the highest scores found."""
        if len(self.space) <= self.exhaustive_below:
            candidates = [i for i in self.space.valid_indices() if i not in exclusive]
            scores = score(candidates) if candidates else []
            ranked = sorted(zip(scores, candidates, strict=True), key=lambda sc: -sc[0])
            return [i for _, i in ranked[:num]]
        walkers = [self.space.get_rand_index(rng=self.rng) for _ in range(self.parallel_size)]
        walkers[:len(self.points)] = self.points[:self.parallel_size]
        values = score(walkers)
        heap, in_heap = [], set()

        def offer(index, value):
            if index in exclusive or index in in_heap:
                return
            if len(heap) < num:
                heapq.heappush(heap, (value, index))
                in_heap.add(index)
            elif value > heap[0][0]:
                _, dropped = heapq.heapreplace(heap, (value, index))
                in_heap.discard(dropped)
                in_heap.add(index)

        for index, value in zip(walkers, values, strict=True):
            offer(index, value)
        last_change, t = 0, self.temp[0]
        step = (self.temp[0] - self.temp[1]) / max(1, self.n_iter)
        for k in range(self.n_iter):
            moved = [self._neighbour(i) for i in walkers]
            moved_values = score(moved)
            before = sorted(in_heap)
            for j, (index, value) in enumerate(zip(moved, moved_values, strict=True)):
                offer(index, value)
                delta = value - values[j]
                if delta > 0 or self.rng.random() < math.exp(min(0.0, delta) / max(t, 1e-6)):
                    walkers[j], values[j] = index, value
            if sorted(in_heap) != before:
                last_change = k
            if k - last_change > self.early_stop:
                break
            t -= step
        self.points = [i for _, i in sorted(heap, reverse=True)]
        return self.points[:num]
