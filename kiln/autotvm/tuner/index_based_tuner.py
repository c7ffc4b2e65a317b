"""Tuners that walk the space by index (TVM's ``index_based_tuner.py``): :class:`GridSearchTuner` in order,
:class:`RandomTuner` in a random order without repeats."""

import random

from .tuner import Tuner

__all__ = ["GridSearchTuner", "RandomTuner"]


class GridSearchTuner(Tuner):
    """Try the configs in index order (the first knob varying fastest)."""

    def __init__(self, task, range_idx=None):
        super().__init__(task)
        self.range = range_idx or (0, len(self.space) - 1)
        self.counter = self.range[0]

    def has_next(self):
        return self.counter <= self.range[1] and super().has_next()

    def next_batch(self, batch_size):
        out = []
        while len(out) < batch_size and self.counter <= self.range[1]:
            if self.counter not in self.visited:
                self.visited.add(self.counter)
                out.append(self.space.get(self.counter))
            self.counter += 1
        return out


class RandomTuner(Tuner):
    """Try the configs in a random order, each once (``seed`` fixes the order)."""

    def __init__(self, task, range_idx=None, seed=None):
        super().__init__(task)
        self.range = range_idx or (0, len(self.space) - 1)
        self.rng = random.Random(seed)

    def has_next(self):
        return len(self.visited) < self.range[1] - self.range[0] + 1

    def next_batch(self, batch_size):
        out = []
        low, high = self.range
        while len(out) < batch_size and self.has_next():
            index = self.rng.randint(low, high)
            if index not in self.visited:
                self.visited.add(index)
                out.append(self.space.get(index))
        return out
