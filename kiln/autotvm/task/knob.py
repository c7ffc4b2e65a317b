"""The knobs of a configuration space (TVM's ``autotvm/task/space.py``, first half): the value of one knob (an
*entity*: a split, an option, an order, annotations) and the list of values a knob may take (its *space*).
:mod:`.space` combines them into the spaces and points of a template."""

import itertools
import math

from ...error import KilnError

__all__ = ["KnobError", "VirtualAxis", "SplitSpace", "SplitEntity", "OtherOptionSpace", "OtherOptionEntity",
           "ReorderSpace", "ReorderEntity", "AnnotateSpace", "AnnotateEntity"]

class KnobError(KilnError, KeyError):
    """A knob that the template did not declare, or a value outside its space."""

    def __str__(self):  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class VirtualAxis:
    """An axis a template declares knobs over (TVM's ``cfg.axis(var)``): ``length`` and ``name``."""

    def __init__(self, length, name=""):
        self.length, self.name = length, name

    def __repr__(self):
        return f"VirtualAxis({self.name or '?'}: {self.length})"


def _extent(axis) -> int:
    """The extent of ``axis`` (an int, a :class:`VirtualAxis`, or a te IterVar with a constant domain)."""
    if isinstance(axis, VirtualAxis):
        return axis.length
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
        self.size = [int(x) for x in size]  # a list, as TVM's (scripts compare it with lists)

    def resolved(self, extent) -> list:
        """``size`` with a leading ``-1`` replaced by the outer extent (rounded up) for a loop of ``extent``."""
        if self.size[0] != -1:
            return list(self.size)
        inner = math.prod(self.size[1:])
        return [-(-extent // inner), *self.size[1:]]

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
        return hash(tuple(self.size))

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
        self.extent = self.product = extent
        self.num_outputs = num_outputs
        if policy not in ("factors", "power2", "verbose"):
            raise KilnError(f"autotvm: define_split policy {policy!r} is unknown (factors, power2, verbose)")
        powers = [1 << i for i in range(extent.bit_length()) if 1 << i <= extent]
        choices = {"factors": _factors(extent), "power2": powers,
                   "verbose": sorted(set(_factors(extent)) | set(powers))}[policy]
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
