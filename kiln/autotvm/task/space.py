"""Configuration spaces of schedule templates (TVM's ``autotvm/task/space.py``).

A schedule template declares its choices ("knobs") on a config object ``cfg`` and then reads the chosen values::

    cfg.define_split("tile_ow", ow, num_outputs=2)         # how to split a loop: one entity per factorization
    cfg.define_knob("reduce_inner", ["kw", "ic"])          # one option among a list
    if cfg.is_fallback:                                     # no tuned value: today's hand-chosen one
        cfg["tile_ow"] = SplitEntity([-1, reg_n])
    reg_n = cfg["tile_ow"].size[-1]

The same template code runs against three kinds of ``cfg``:

* :class:`ConfigSpace` collects the knobs (``define_*`` registers a space; reading a knob gives its first entity);
* :class:`ConfigEntity` is one point of a space (``define_*`` only checks the knob exists; reading gives the
  point's value);
* :class:`FallbackConfigEntity` is the default point used when nothing is tuned: ``define_*`` registers the knob
  with its first entity unless the template assigned a value, which is how templates set today's choices.

A space is the product of its knobs' spaces; a point is numbered in mixed radix, the first knob varying fastest
(as TVM numbers them), so ``space.get(i)`` and ``entity.index`` invert each other.
"""

import bisect
import math
import random
from collections import OrderedDict

from .knob import (
    AnnotateEntity,
    AnnotateSpace,
    KnobError,
    OtherOptionEntity,
    OtherOptionSpace,
    ReorderEntity,
    ReorderSpace,
    SplitEntity,
    SplitSpace,
    VirtualAxis,
    _extent,
    _factors,
)

__all__ = ["ConfigSpace", "ConfigEntity", "FallbackConfigEntity", "SplitSpace", "SplitEntity", "OtherOptionSpace",
           "OtherOptionEntity", "ReorderSpace", "ReorderEntity", "AnnotateSpace", "AnnotateEntity", "KnobError"]

# ---- configs ------------------------------------------------------------------------------------------------------


class _Config:
    """The ``define_*`` surface shared by spaces and entities; subclasses decide what defining a knob does."""

    is_fallback = False

    def __init__(self):
        self.space_map: OrderedDict = OrderedDict()
        self._entity_map: OrderedDict = OrderedDict()

    def define_split(self, name, axis, num_outputs=2, policy="factors", filter=None, max_factor=None):  # noqa: A002
        """Declare a split of ``axis`` (an int extent or an IterVar) into ``num_outputs`` loops; returns the
        chosen :class:`SplitEntity`."""
        return self._define(name, lambda: SplitSpace(_extent(axis), num_outputs, policy, filter, max_factor))

    def define_knob(self, name, candidates):
        """Declare a choice among ``candidates`` (JSON-able values); returns the chosen :class:`OtherOptionEntity`."""
        return self._define(name, lambda: OtherOptionSpace(candidates))

    def define_reorder(self, name, axes, policy="all", candidate=None):
        """Declare an order of ``axes``; returns the chosen :class:`ReorderEntity`."""
        return self._define(name, lambda: ReorderSpace(len(axes), policy, candidate))

    def define_annotate(self, name, axes, policy="try_unroll"):
        """Declare unroll/vectorize annotations of ``axes``; returns the chosen :class:`AnnotateEntity`."""
        return self._define(name, lambda: AnnotateSpace(len(axes), policy))

    def _define(self, name, make_space):
        raise NotImplementedError

    def multi_filter(self, filter):  # noqa: A002  (TVM's name)
        """A constraint across knobs: only a :class:`ConfigSpace` keeps it (a point of the space meets it)."""

    @staticmethod
    def axis(var):
        """An axis to declare knobs over (TVM's ``cfg.axis``): ``var`` an int extent or an IterVar."""
        if isinstance(var, VirtualAxis):
            return var
        return VirtualAxis(_extent(var), getattr(getattr(var, "var", None), "name", ""))

    reduce_axis = axis

    def __getitem__(self, name):
        try:
            return self._entity_map[name]
        except KeyError:
            raise KnobError(f"autotvm: no knob {name!r} (knobs: {', '.join(self._entity_map) or 'none'})") from None

    def __contains__(self, name):
        return name in self._entity_map

    def get_other_option(self) -> dict:
        """``{name: value}`` of the config's ``define_knob`` knobs."""
        return {k: v.val for k, v in self._entity_map.items() if isinstance(v, OtherOptionEntity)}


class ConfigSpace(_Config):
    """The space of a template: its knobs in declaration order (``space_map``).

    Points are numbered in mixed radix over the product of the knobs' spaces (``range_length`` indices).
    ``multi_filter(filter)`` (TVM's) keeps only the points for which ``filter(entity)`` holds: a constraint across
    knobs, such as a register tile's rows times columns within the register file. As in TVM, indices keep their
    product numbering: ``len(space)`` counts the points kept, ``is_index_valid(i)`` says whether ``i`` is one,
    ``get`` refuses the others, and tuners draw indices with ``get_rand_index``/``get_next_index`` or walk
    :meth:`valid_indices`. Defining a knob again replaces its space (TVM's collecting mode)."""

    def __init__(self):
        super().__init__()
        self._filter = None
        self._valid = None  # the indices the filter keeps, ascending (computed on first use)

    def _define(self, name, make_space):
        self.space_map[name] = make_space()
        self._entity_map[name] = self.space_map[name][0]
        self._valid = None
        return self._entity_map[name]

    def multi_filter(self, filter):  # noqa: A002  (TVM's name)
        """Keep only the points for which ``filter(entity)`` is true (``entity[name]`` reads a knob)."""
        self._filter, self._valid = filter, None

    @property
    def dims(self) -> list:
        """The number of values of each knob, in declaration order."""
        return [len(s) for s in self.space_map.values()]

    @property
    def range_length(self) -> int:
        """The number of indices: the size of the knobs' product, filtered or not."""
        return math.prod(self.dims)

    def _point(self, index) -> "ConfigEntity":
        entities, rest = OrderedDict(), index
        for name, space in self.space_map.items():
            entities[name] = space[rest % len(space)]
            rest //= len(space)
        return ConfigEntity(index, self.space_map, entities)

    def valid_indices(self) -> list:
        """The indices the filter keeps, ascending (every index without a filter)."""
        if self._valid is None:
            if self._filter is None:
                return range(self.range_length)
            self._valid = [i for i in range(self.range_length) if self._filter(self._point(i))]
        return self._valid

    def __len__(self):
        return len(self.valid_indices())

    def _check_range(self, start, end):
        if not 0 <= start <= end <= self.range_length:
            raise KnobError(f"autotvm: the index range [{start}, {end}) is not within [0, {self.range_length})")

    def is_index_valid(self, index) -> bool:
        """Whether ``index`` (within ``range_length``) names a point the filter keeps."""
        if not 0 <= index < self.range_length:
            raise KnobError(f"autotvm: config index {index} is outside the space of {self.range_length} indices")
        valid = self.valid_indices()
        return True if self._filter is None else self._contains(valid, index)

    @staticmethod
    def _contains(valid, index):
        at = bisect.bisect_left(valid, index)
        return at < len(valid) and valid[at] == index

    def subrange_length(self, start, end) -> int:
        """How many valid indices lie in ``[start, end)``."""
        self._check_range(start, end)
        valid = self.valid_indices()
        return bisect.bisect_left(valid, end) - bisect.bisect_left(valid, start)

    def get_rand_index(self, start=None, end=None, to_exclude=None, rng=random):
        """A random valid index in ``[start, end)`` not in ``to_exclude`` (None when there is none)."""
        start, end = start or 0, self.range_length if end is None else end
        self._check_range(start, end)
        valid = self.valid_indices()
        lo, hi = bisect.bisect_left(valid, start), bisect.bisect_left(valid, end)
        exclude = to_exclude or ()
        if hi - lo <= 4 * len(exclude) + 16:  # few left: choose among the rest
            rest = [valid[k] for k in range(lo, hi) if valid[k] not in exclude]
            return rng.choice(rest) if rest else None
        while True:
            index = valid[rng.randrange(lo, hi)]
            if index not in exclude:
                return index

    def get_next_index(self, index, n=1, start=None, end=None):
        """The ``n``-th valid index after ``index`` (before it for a negative ``n``) within ``[start, end)``, or
        None past the range."""
        if n == 0:
            raise KnobError("autotvm: get_next_index needs a non-zero step")
        start, end = start or 0, self.range_length if end is None else end
        valid = self.valid_indices()
        at = bisect.bisect_right(valid, index) + n - 1 if n > 0 else bisect.bisect_left(valid, index) + n
        if 0 <= at < len(valid) and start <= valid[at] < end:
            return valid[at]
        return None

    def sample_ints(self, m, rng=random) -> list:
        """``m`` distinct valid indices drawn at random (fewer when the space has fewer)."""
        valid = self.valid_indices()
        return [valid[k] for k in rng.sample(range(len(valid)), min(m, len(valid)))]

    def random_walk(self, index, rng=random) -> int:
        """A valid index one knob away from ``index`` (``index`` itself when no other knob value is valid)."""
        knob = self.point2knob(index)
        moves = [(k, v) for k, dim in enumerate(self.dims) for v in range(dim) if v != knob[k]]
        rng.shuffle(moves)
        for k, v in moves:
            other = self.knob2point(knob[:k] + [v] + knob[k + 1:])
            if self.is_index_valid(other):
                return other
        return index

    def get(self, index) -> "ConfigEntity":
        """Point ``index`` of the space (mixed radix, first knob fastest); KnobError for an index outside the
        space or one the filter rejects."""
        if not self.is_index_valid(index):
            raise KnobError(f"autotvm: config index {index} does not meet the space's multi_filter")
        return self._point(index)

    def index_of(self, entity_map) -> int:
        """The index of the point whose knobs take the values of ``entity_map`` (a dict or a config);
        KnobError for a missing knob, a value outside its space, or a combination the filter rejects."""
        entity_map = getattr(entity_map, "_entity_map", entity_map)
        positions = []
        for name, space in self.space_map.items():
            if name not in entity_map:
                raise KnobError(f"autotvm: the config has no value for the knob {name!r}")
            positions.append(space.index_of(entity_map[name]))
        index = self.knob2point(positions)
        if not self.is_index_valid(index):
            values = {k: entity_map[k] for k in self.space_map}
            raise KnobError(f"autotvm: the template's multi_filter rejects the config {values}")
        return index

    def point2knob(self, index) -> list:
        """The position of each knob's value in its space at index ``index``."""
        out = []
        for dim in self.dims:
            out.append(index % dim)
            index //= dim
        return out

    def knob2point(self, knob) -> int:
        """The index of the point whose knobs are at positions ``knob`` (valid or not)."""
        index, radix = 0, 1
        for value, dim in zip(knob, self.dims, strict=True):
            index += value * radix
            radix *= dim
        return index

    def knob_names(self) -> list:
        """The knobs, in declaration order."""
        return list(self.space_map)

    def __iter__(self):
        return (self._point(i) for i in self.valid_indices())

    def __repr__(self):
        knobs = ", ".join(f"{k}: {len(v)}" for k, v in self.space_map.items())
        filtered = f" of {self.range_length}" if self._filter is not None else ""
        return f"ConfigSpace({len(self)}{filtered} configs; {knobs})"


class ConfigEntity(_Config):
    """One point of a :class:`ConfigSpace`: ``index`` and a value per knob (``cfg["tile_ow"]``)."""

    def __init__(self, index, space_map, entity_map):
        super().__init__()
        self.index = index
        self.space_map = space_map
        self._entity_map = OrderedDict(entity_map)

    def _define(self, name, make_space):
        if name not in self._entity_map:
            raise KnobError(f"autotvm: the template declares the knob {name!r}, which this config does not have "
                            f"(knobs: {', '.join(self._entity_map) or 'none'}); the record is for another template")
        return self._entity_map[name]

    def get_flatten_feature(self) -> list:
        """The knobs' values as numbers (a split's sizes, an option's position, ...): the ``knob`` features."""
        out = []
        for name, entity in self._entity_map.items():
            if isinstance(entity, SplitEntity):
                out.extend(entity.size)
            elif isinstance(entity, ReorderEntity):
                out.extend(entity.perm)
            elif isinstance(entity, AnnotateEntity):
                out.extend({"none": 0, "unroll": 1, "vec": 2}.get(a, 3) for a in entity.anns)
            else:
                space = self.space_map.get(name)
                out.append(space.index_of(entity) if space is not None else 0)
        return out

    def to_json_dict(self) -> dict:
        """The record form: ``{"index": i, "code_hash": None, "entity": [[name, kind, value], ...]}``."""
        return {"index": self.index, "code_hash": None,
                "entity": [[k, v.kind, v.to_json()] for k, v in self._entity_map.items()]}

    @staticmethod
    def from_json_dict(json_dict, space=None) -> "ConfigEntity":
        """The config a record stores; with ``space``, its index is recomputed (KnobError when the record's knobs
        do not fit the space)."""
        kinds = {c.kind: c for c in (SplitEntity, OtherOptionEntity, ReorderEntity, AnnotateEntity)}
        entities = OrderedDict()
        for name, kind, value in json_dict["entity"]:
            if kind not in kinds:
                raise KnobError(f"autotvm: unknown knob kind {kind!r} for {name!r}")
            entities[name] = kinds[kind](value)
        index = json_dict.get("index", -1)
        if space is not None:
            if set(entities) != set(space.space_map):
                raise KnobError(f"autotvm: the record's knobs {sorted(entities)} are not the template's "
                                f"{sorted(space.space_map)}")
            index = space.index_of(entities)
            return ConfigEntity(index, space.space_map, entities)
        return ConfigEntity(index, OrderedDict(), entities)

    def __eq__(self, other):
        return isinstance(other, ConfigEntity) and dict(self._entity_map) == dict(other._entity_map)

    def __hash__(self):
        return hash(tuple(self._entity_map.items()))

    def __str__(self):
        return ",".join(f"{k}={v!r}" for k, v in self._entity_map.items()) + f",i={self.index}"

    __repr__ = __str__


class FallbackConfigEntity(ConfigEntity):
    """The config of an untuned workload: each knob is what the template assigns when ``is_fallback`` (today's
    hand-chosen schedule), else its space's first entity. ``cfg[name] = entity`` assigns."""

    is_fallback = True

    def __init__(self):
        super().__init__(-1, OrderedDict(), OrderedDict())

    def _define(self, name, make_space):
        if name not in self.space_map:
            space = make_space()
            self.space_map[name] = space
            self._entity_map.setdefault(name, space[0])
        return self._entity_map[name]

    def __setitem__(self, name, entity):
        self._entity_map[name] = entity

    def fallback_split(self, name, constraints):
        """Assign to the split ``name`` the factors chosen from the innermost out, each the largest divisor of what
        is left not above its constraint (``-1``: none), as TVM's helper does; KnobError (a RuntimeError) when a
        constraint admits no divisor."""
        space = self.space_map[name]
        left, sizes = space.product, [0] * space.num_outputs
        for i in reversed(range(space.num_outputs)):
            bound = math.inf if constraints[i] == -1 else constraints[i]
            fits = [f for f in _factors(left) if f <= bound]
            if not fits:
                raise KnobError(f"autotvm: no split of {space.product} for {name!r} meets the constraints "
                                f"{list(constraints)}")
            sizes[i] = fits[-1]
            left //= fits[-1]
        self._entity_map[name] = SplitEntity(sizes)
