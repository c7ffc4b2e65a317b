"""A genetic search over the space (TVM's ``ga_tuner.py``).

A config is a gene: its knobs' positions in their spaces. A population of ``pop_size`` genes is measured; the next
generation keeps the ``elite_num`` best and fills the rest with children of parents drawn in proportion to their
FLOP/s, each knob taken from one parent or the other, then each knob mutated with probability ``mutation_prob``.
A gene measured before is redrawn (or replaced by an unvisited random one), so no config is measured twice.
"""

import random

from .tuner import Tuner, throughput

__all__ = ["GATuner"]


class GATuner(Tuner):
    """Genetic search (see the module docstring)."""

    def __init__(self, task, pop_size=100, elite_num=3, mutation_prob=0.1, seed=None):
        super().__init__(task)
        self.pop_size = max(2, min(pop_size, len(self.space)))
        self.elite_num = min(elite_num, self.pop_size)
        self.mutation_prob = mutation_prob
        self.rng = random.Random(seed)
        self.dims = self.space.dims
        self.scores = {}  # index -> FLOP/s (0 for a failed candidate)
        self.population = self._random_unvisited(self.pop_size)
        self.trial_pt = 0

    def _gene(self, index) -> list:
        return self.space.point2knob(index)

    def _index(self, gene):
        """The index of ``gene``, None when the space's multi_filter rejects it (a child that is not a point)."""
        index = self.space.knob2point(gene)
        return index if self.space.is_index_valid(index) else None

    def _random_unvisited(self, n) -> list:
        left = len(self.space) - len(self.visited)
        out = set()
        while len(out) < min(n, left):
            out.add(self.space.get_rand_index(to_exclude=self.visited | out, rng=self.rng))
        return list(out)

    def next_batch(self, batch_size):
        out = []
        while len(out) < batch_size and self.has_next():
            if self.trial_pt >= len(self.population):
                self._next_generation()
                self.trial_pt = 0
                if not self.population:
                    break
            index = self.population[self.trial_pt]
            self.trial_pt += 1
            if index not in self.visited:
                self.visited.add(index)
                out.append(self.space.get(index))
        return out

    def update(self, inputs, results):
        for inp, res in zip(inputs, results, strict=True):
            self.scores[inp.config.index] = throughput(self.task.flop, res)

    def _next_generation(self):
        ranked = sorted(self.scores.items(), key=lambda kv: -kv[1])
        elites = [i for i, _ in ranked[:self.elite_num]]
        parents = [i for i, _ in ranked[:self.pop_size]]
        weights = [max(score, 1e-9) for _, score in ranked[:self.pop_size]]
        children = set()
        attempts = 0
        while len(children) < self.pop_size - len(elites) and attempts < 20 * self.pop_size and parents:
            attempts += 1
            a, b = self.rng.choices(parents, weights=weights, k=2)
            ga, gb = self._gene(a), self._gene(b)
            child = [x if self.rng.random() < 0.5 else y for x, y in zip(ga, gb, strict=True)]
            child = [self.rng.randrange(dim) if self.rng.random() < self.mutation_prob else v
                     for v, dim in zip(child, self.dims, strict=True)]
            index = self._index(child)
            if index is not None and index not in self.visited:
                children.add(index)
        if len(children) < self.pop_size - len(elites):  # the neighbourhood is spent: fresh blood
            children |= set(self._random_unvisited(self.pop_size - len(elites) - len(children)))
        self.population = [i for i in children if i not in self.visited]
