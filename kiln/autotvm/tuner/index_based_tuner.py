"""Tuners that walk the space by index (TVM's ``index_based_tuner.py``): :class:`GridSearchTuner` in order,
:class:`RandomTuner` in a random order without repeats."""

import random

from .tuner import Tuner

__all__ = ["GridSearchTuner", "RandomTuner"]


class _IndexBasedTuner(Tuner):
    """A tuner over the indices ``range_idx = (first, last)`` (inclusive; the whole space by default), as TVM's:
    ``begin_idx``/``end_idx`` bound them (end exclusive), ``range_length`` counts them, ``visited_max`` counts the
    valid ones (those the space's multi_filter keeps)."""

    def __init__(self, task, range_idx=None):
        super().__init__(task)
        first, last = range_idx or (0, self.space.range_length - 1)
        self.begin_idx, self.end_idx = first, last + 1
        self.range_length = self.end_idx - self.begin_idx
        self.visited_max = self.space.subrange_length(self.begin_idx, self.end_idx)

    def has_next(self):
        return len(self.visited) < self.visited_max

    def _in_range(self, index):
        return self.begin_idx <= index < self.end_idx


class GridSearchTuner(_IndexBasedTuner):
    """Try the configs in index order (the first knob varying fastest)."""

    def __init__(self, task, range_idx=None):
        super().__init__(task, range_idx)
        first = self.begin_idx
        valid = first < self.end_idx and self.space.is_index_valid(first)
        self.index = first if valid else self.space.get_next_index(first, end=self.end_idx)

    def next_batch(self, batch_size):
        out = []
        while len(out) < batch_size and self.index is not None:
            if self.index not in self.visited:
                self.visited.add(self.index)
                out.append(self.space.get(self.index))
            self.index = self.space.get_next_index(self.index, end=self.end_idx)
        return out


class RandomTuner(_IndexBasedTuner):
    """Try the configs in a random order, each once (``seed`` fixes the order)."""

    def __init__(self, task, range_idx=None, seed=None):
        super().__init__(task, range_idx)
        self.rng = random.Random(seed)

    def next_batch(self, batch_size):
        out = []
        while len(out) < batch_size and self.has_next():
            index = self.space.get_rand_index(self.begin_idx, self.end_idx, to_exclude=self.visited, rng=self.rng)
            if index is None:
                break
            self.visited.add(index)
            out.append(self.space.get(index))
        return out
