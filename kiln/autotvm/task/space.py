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
from collections import OrderedDict

from ...error import KilnError
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
    _extent,
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
    """The space of a template: its knobs in declaration order (``space_map``), ``len`` the number of points.

    ``multi_filter(filter)`` (TVM's) keeps only the points of the knobs' product for which ``filter(entity)`` holds:
    a constraint across knobs, such as a register tile's rows times columns within the register file. The space's
    indices then number the kept points only (``0 .. len - 1`` in product order), so every tuner walks valid points
    alone; :meth:`point2knob` and :meth:`knob2point` translate between an index and the knobs' positions (None for
    a combination the filter rejects)."""

    def __init__(self):
        super().__init__()
        self._filter = None
        self._valid = None  # the product indices the filter keeps, ascending (computed on first use)

    def _define(self, name, make_space):
        if name not in self.space_map:
            space = make_space()
            self.space_map[name] = space
            self._entity_map[name] = space[0]
            self._valid = None
        return self._entity_map[name]

    def multi_filter(self, filter):  # noqa: A002  (TVM's name)
        """Keep only the points for which ``filter(entity)`` is true (``entity[name]`` reads a knob); declared
        after the knobs it reads."""
        self._filter, self._valid = filter, None

    @property
    def dims(self) -> list:
        """The number of values of each knob, in declaration order."""
        return [len(s) for s in self.space_map.values()]

    def _product_len(self) -> int:
        return math.prod(self.dims)

    def _product_point(self, raw) -> "ConfigEntity":
        entities = OrderedDict()
        for name, space in self.space_map.items():
            entities[name] = space[raw % len(space)]
            raw //= len(space)
        return ConfigEntity(-1, self.space_map, entities)

    def _kept(self):
        """The product indices the filter keeps (None without a filter)."""
        if self._filter is None:
            return None
        if self._valid is None:
            self._valid = [i for i in range(self._product_len()) if self._filter(self._product_point(i))]
            if not self._valid:
                raise KilnError("autotvm: the space's multi_filter rejects every point")
        return self._valid

    def __len__(self):
        kept = self._kept()
        return self._product_len() if kept is None else len(kept)

    @property
    def range_length(self) -> int:
        """The number of indices (TVM's name; equal to ``len`` since indices number the kept points)."""
        return len(self)

    def is_index_valid(self, index) -> bool:
        """Whether ``index`` names a point of the space."""
        return 0 <= index < len(self)

    def get(self, index) -> "ConfigEntity":
        """Point ``index`` of the space (mixed radix, first knob fastest, over the points the filter keeps)."""
        if not 0 <= index < len(self):
            raise KnobError(f"autotvm: config index {index} is outside the space of {len(self)} configs")
        kept = self._kept()
        point = self._product_point(index if kept is None else kept[index])
        return ConfigEntity(index, self.space_map, point._entity_map)

    def _from_product(self, raw):
        """The index of product point ``raw``, or None when the filter rejects it."""
        kept = self._kept()
        if kept is None:
            return raw
        at = bisect.bisect_left(kept, raw)
        return at if at < len(kept) and kept[at] == raw else None

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
        if index is None:
            values = {k: entity_map[k] for k in self.space_map}
            raise KnobError(f"autotvm: the template's multi_filter rejects the config {values}")
        return index

    def point2knob(self, index) -> list:
        """The position of each knob's value in its space at point ``index``."""
        kept = self._kept()
        raw = index if kept is None else kept[index]
        out = []
        for dim in self.dims:
            out.append(raw % dim)
            raw //= dim
        return out

    def knob2point(self, knob):
        """The index of the point whose knobs are at positions ``knob``, or None when the filter rejects it."""
        raw, radix = 0, 1
        for value, dim in zip(knob, self.dims, strict=True):
            raw += value * radix
            radix *= dim
        return self._from_product(raw)

    def knob_names(self) -> list:
        """The knobs, in declaration order."""
        return list(self.space_map)

    def __iter__(self):
        return (self.get(i) for i in range(len(self)))

    def __repr__(self):
        knobs = ", ".join(f"{k}: {len(v)}" for k, v in self.space_map.items())
        filtered = f" of {self._product_len()}" if self._filter is not None else ""
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
        """Assign to ``name`` the split whose inner factors are the largest not above ``constraints`` (TVM's
        helper; ``constraints[0]`` ignored)."""
        space = self.space_map[name]
        for entity in reversed(space.entities):
            if all(size <= c for size, c in zip(entity.size[1:], constraints[1:], strict=True)):
                self._entity_map[name] = entity
                return
        self._entity_map[name] = space[0]
