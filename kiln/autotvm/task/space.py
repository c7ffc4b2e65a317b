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

import itertools
import math
from collections import OrderedDict

from ...error import KilnError

__all__ = ["ConfigSpace", "ConfigEntity", "FallbackConfigEntity", "SplitSpace", "SplitEntity", "OtherOptionSpace",
           "OtherOptionEntity", "ReorderSpace", "ReorderEntity", "AnnotateSpace", "AnnotateEntity", "KnobError"]


class KnobError(KilnError, KeyError):
    """A knob that the template did not declare, or a value outside its space."""

    def __str__(self):  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def _extent(axis) -> int:
    """The extent of ``axis`` (an int, or a te IterVar with a constant domain)."""
    if isinstance(axis, int):
        return axis
    dom = getattr(axis, "dom", None)
    if dom is not None:
        return int(dom.extent.value if hasattr(dom.extent, "value") else dom.extent)
    raise KilnError(f"autotvm: cannot take the extent of {axis!r} (an int or an IterVar with a constant extent)")


def _factors(n) -> list:
    """The divisors of ``n`` in increasing order."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


# ---- entities: one value of a knob -------------------------------------------------------------------------------


class SplitEntity:
    """A factorization of a loop: ``size[0]`` outer ... ``size[-1]`` innermost (``-1`` in ``size[0]``: whatever is
    left). ``apply(s, stage, axis)`` splits and returns the loops, outermost first."""

    kind = "sp"

    def __init__(self, size):
        self.size = tuple(int(x) for x in size)

    def resolved(self, extent) -> tuple:
        """``size`` with a leading ``-1`` replaced by the outer extent (rounded up) for a loop of ``extent``."""
        if self.size[0] != -1:
            return self.size
        inner = math.prod(self.size[1:])
        return (-(-extent // inner), *self.size[1:])

    def apply(self, s, stage, axis) -> list:
        """Split ``axis`` of ``stage`` (a Stage, or an op/tensor looked up in ``s``) by the inner sizes."""
        stage = stage if hasattr(stage, "split") else s[stage]
        loops = []
        for factor in reversed(self.size[1:]):
            axis, inner = stage.split(axis, factor=factor)
            loops.append(inner)
        return [axis, *reversed(loops)]

    def to_json(self):
        return list(self.size)

    def __eq__(self, other):
        return isinstance(other, SplitEntity) and self.size == other.size

    def __hash__(self):
        return hash(self.size)

    def __repr__(self):
        return f"sp{list(self.size)}"


class OtherOptionEntity:
    """One option of a :meth:`ConfigSpace.define_knob` knob (``val``)."""

    kind = "ot"

    def __init__(self, val):
        self.val = val

    def to_json(self):
        return self.val

    def __eq__(self, other):
        return isinstance(other, OtherOptionEntity) and self.val == other.val

    def __hash__(self):
        return hash(repr(self.val))

    def __repr__(self):
        return f"ot{self.val!r}"


class ReorderEntity:
    """An order of loops (``perm[i]``: which of the declared axes goes ``i``-th); ``apply`` reorders them."""

    kind = "re"

    def __init__(self, perm):
        self.perm = tuple(int(x) for x in perm)

    def apply(self, s, stage, axes) -> list:
        """Reorder ``axes`` of ``stage`` by ``perm`` and return them in their new order."""
        stage = stage if hasattr(stage, "reorder") else s[stage]
        ordered = [axes[i] for i in self.perm]
        stage.reorder(*ordered)
        return ordered

    def to_json(self):
        return list(self.perm)

    def __eq__(self, other):
        return isinstance(other, ReorderEntity) and self.perm == other.perm

    def __hash__(self):
        return hash(self.perm)

    def __repr__(self):
        return f"re{list(self.perm)}"


class AnnotateEntity:
    """One annotation per axis (``"none"``, ``"unroll"``, ``"vec"``); ``apply`` annotates the stage's axes."""

    kind = "an"

    def __init__(self, anns):
        self.anns = tuple(anns)

    def apply(self, s, stage, axes):
        """Unroll or vectorize each of ``axes`` as annotated."""
        stage = stage if hasattr(stage, "unroll") else s[stage]
        for axis, ann in zip(axes, self.anns, strict=True):
            if ann == "unroll":
                stage.unroll(axis)
            elif ann == "vec":
                stage.vectorize(axis)

    def to_json(self):
        return list(self.anns)

    def __eq__(self, other):
        return isinstance(other, AnnotateEntity) and self.anns == other.anns

    def __hash__(self):
        return hash(self.anns)

    def __repr__(self):
        return f"an{list(self.anns)}"


# ---- spaces: every value of a knob ------------------------------------------------------------------------------


class _Space:
    """A list of entities (``len``, indexing, ``index_of``)."""

    entity_class: type = OtherOptionEntity

    def __init__(self, entities):
        self.entities = list(entities)
        if not self.entities:
            raise KilnError(f"autotvm: the knob space {type(self).__name__} is empty (a filter rejected everything)")

    def __len__(self):
        return len(self.entities)

    def __getitem__(self, index):
        return self.entities[index]

    def index_of(self, entity) -> int:
        """The position of ``entity`` in the space; KnobError when it is not there."""
        for i, e in enumerate(self.entities):
            if e == entity:
                return i
        raise KnobError(f"{entity!r} is not in the space {self.entities[:8]}{' ...' if len(self) > 8 else ''}")

    def entity_from_json(self, value):
        """The entity a record stores as ``value``."""
        return self.entity_class(value)


class SplitSpace(_Space):
    """Every way to split a loop of ``extent`` into ``num_outputs`` factors (``policy="factors"``: exact divisors;
    ``"power2"``: powers of two, the outer loop rounded up), filtered by ``filter(entity)`` and with the innermost
    factor at most ``max_factor``."""

    entity_class = SplitEntity

    def __init__(self, extent, num_outputs, policy="factors", filter=None, max_factor=None):  # noqa: A002 (TVM)
        self.extent = extent
        if policy == "factors":
            choices = _factors(extent)
        elif policy == "power2":
            choices = [1 << i for i in range(extent.bit_length()) if 1 << i <= extent]
        else:
            raise KilnError(f"autotvm: define_split policy {policy!r} is unknown (factors, power2)")
        entities = []
        for inner in itertools.product(choices, repeat=num_outputs - 1):
            product = math.prod(inner)
            if policy == "factors" and extent % product:
                continue
            if product > extent or (max_factor is not None and inner[-1] > max_factor):
                continue
            entity = SplitEntity((-(-extent // product), *inner))
            if filter is None or filter(entity):
                entities.append(entity)
        super().__init__(entities)

    def index_of(self, entity):
        return super().index_of(SplitEntity(entity.resolved(self.extent)))


class OtherOptionSpace(_Space):
    """The options of a :meth:`ConfigSpace.define_knob` knob."""

    def __init__(self, candidates):
        super().__init__(OtherOptionEntity(c) for c in candidates)


class ReorderSpace(_Space):
    """Orders of ``n`` loops: ``policy="all"`` every permutation, ``"identity"`` the given order, ``"candidate"``
    the listed permutations."""

    entity_class = ReorderEntity

    def __init__(self, n, policy="all", candidate=None):
        if policy == "all":
            perms = itertools.permutations(range(n))
        elif policy == "identity":
            perms = [tuple(range(n))]
        elif policy == "candidate":
            perms = [tuple(p) for p in candidate or ()]
        else:
            raise KilnError(f"autotvm: define_reorder policy {policy!r} is unknown (all, identity, candidate)")
        super().__init__(ReorderEntity(p) for p in perms)


class AnnotateSpace(_Space):
    """Annotations of ``n`` loops: ``policy="try_unroll"`` each loop unrolled or not, ``"try_vec"`` the last one
    vectorized or not, ``"try_unroll_vec"`` both, ``"unroll"``/``"vec"``/``"none"`` a single choice."""

    entity_class = AnnotateEntity

    def __init__(self, n, policy="try_unroll"):
        per_axis = {"try_unroll": ("none", "unroll"), "try_unroll_vec": ("none", "unroll"), "unroll": ("unroll",),
                    "none": ("none",), "try_vec": ("none",), "vec": ("none",)}
        last = {"try_unroll": ("none", "unroll"), "try_unroll_vec": ("none", "unroll", "vec"),
                "unroll": ("unroll",), "none": ("none",), "try_vec": ("none", "vec"), "vec": ("vec",)}
        if policy not in per_axis:
            raise KilnError(f"autotvm: define_annotate policy {policy!r} is unknown ({', '.join(per_axis)})")
        choices = [per_axis[policy]] * (n - 1) + [last[policy]] if n else []
        super().__init__(AnnotateEntity(a) for a in itertools.product(*choices))


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
    """The space of a template: its knobs in declaration order (``space_map``), ``len`` the number of points."""

    def _define(self, name, make_space):
        if name not in self.space_map:
            space = make_space()
            self.space_map[name] = space
            self._entity_map[name] = space[0]
        return self._entity_map[name]

    def __len__(self):
        return math.prod(len(s) for s in self.space_map.values())

    def get(self, index) -> "ConfigEntity":
        """Point ``index`` of the space (mixed radix, first knob fastest)."""
        if not 0 <= index < len(self):
            raise KnobError(f"autotvm: config index {index} is outside the space of {len(self)} configs")
        entities, rest = OrderedDict(), index
        for name, space in self.space_map.items():
            entities[name] = space[rest % len(space)]
            rest //= len(space)
        return ConfigEntity(index, self.space_map, entities)

    def index_of(self, entity_map) -> int:
        """The index of the point whose knobs take the values of ``entity_map`` (a dict or a config);
        KnobError for a missing knob or a value outside its space."""
        entity_map = getattr(entity_map, "_entity_map", entity_map)
        index, radix = 0, 1
        for name, space in self.space_map.items():
            if name not in entity_map:
                raise KnobError(f"autotvm: the config has no value for the knob {name!r}")
            index += space.index_of(entity_map[name]) * radix
            radix *= len(space)
        return index

    def knob_names(self) -> list:
        """The knobs, in declaration order."""
        return list(self.space_map)

    def __iter__(self):
        return (self.get(i) for i in range(len(self)))

    def __repr__(self):
        knobs = ", ".join(f"{k}: {len(v)}" for k, v in self.space_map.items())
        return f"ConfigSpace({len(self)} configs; {knobs})"


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
