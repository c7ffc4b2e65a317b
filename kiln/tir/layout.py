"""Data layouts such as ``NCHW``, ``NHWC`` or ``NCHW16c`` and shape conversion between them (TVM's ``tir.layout``).

An upper-case letter is a primal axis; a lower-case letter preceded by a factor is a sub-axis of its primal axis:
``NCHW16c`` splits channels ``C`` into ``C // 16`` outer and ``16`` inner. An axis may be split more than once:
``OHWI16i64o2i`` holds input channel ``I = I_outer * 32 + i16 * 2 + i2`` (the earlier sub-axis the more significant).
Converting a shape between two layouts goes through the primal (logical) sizes.
"""

import re
from dataclasses import dataclass

from ..error import KilnError

_TOKEN = re.compile(r"(\d*)([A-Za-z])")


@dataclass(frozen=True, slots=True)
class Layout:
    """A parsed layout: ``axes`` is a tuple of ``(letter, factor)`` with ``factor`` None for primal axes.

    Examples
    --------
    >>> layout("NCHW16c").shape_to_primal((1, 4, 8, 8, 16))
    {'N': 1, 'C': 64, 'H': 8, 'W': 8}
    """

    name: str
    axes: tuple

    def __str__(self):
        return self.name

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.axes)

    @property
    def primal(self) -> str:
        """The primal axes in order, such as ``"NCHW"`` for ``NCHW16c``."""
        return "".join(a for a, f in self.axes if f is None)

    def index_of(self, axis: str) -> int:
        """The position of ``axis`` (a letter), or -1 when absent."""
        for i, (a, _) in enumerate(self.axes):
            if a == axis:
                return i
        return -1

    def factor_of(self, primal_axis: str) -> int:
        """The split factor of ``primal_axis``: the product of its sub-axes (``OHWI16i64o2i``: 32 for I), 1 when it
        has none."""
        factor = 1
        for a, f in self.axes:
            if f is not None and a == primal_axis.lower():
                factor *= f
        return factor

    def sub_axes(self, primal_axis: str) -> list:
        """The positions of ``primal_axis``'s sub-axes, outermost first (``OHWI16i64o2i``: [4, 6] for I)."""
        sub = primal_axis.lower()
        return [i for i, (a, f) in enumerate(self.axes) if f is not None and a == sub]

    @property
    def ndim_primal(self) -> int:
        """The number of primal axes."""
        return sum(f is None for _, f in self.axes)

    def __len__(self) -> int:
        return len(self.axes)

    def __getitem__(self, index) -> str:
        """The letter of axis ``index`` (TVM's ``LayoutAxis`` name: ``"C"`` or ``"c"``)."""
        return self.axes[index][0]

    def __contains__(self, axis) -> bool:
        return self.index_of(str(axis)) >= 0

    def sub_layout(self, pos: int, length: int) -> "Layout | None":
        """The layout of axes ``pos`` to ``pos + length`` (fewer at the end; none: the scalar layout), or None
        (undefined) when ``pos`` is past the end (TVM's ``SubLayout``)."""
        if pos > self.ndim:
            return None
        return from_axes(self.axes[pos:pos + length])

    def expand_primal(self, dst: "Layout") -> "Layout":
        """This layout with the primal axes of ``dst`` it lacks put in front, in ``dst``'s order (TVM's
        ``ExpandPrimal``: ``C`` against ``NCHW16c`` is ``NHWC``)."""
        missing = [(a, None) for a, f in dst.axes if f is None and self.index_of(a) < 0]
        return from_axes((*missing, *self.axes))

    def shape_to_primal(self, shape) -> dict:
        """Map each primal axis letter to its logical size, given a shape in this layout."""
        if len(shape) != self.ndim:
            raise KilnError(
                f"layout {self.name} has {self.ndim} dimensions but the shape {tuple(shape)} has {len(shape)}"
            )
        sizes = {}
        for (a, f), d in zip(self.axes, shape, strict=True):
            if f is None:  # a dimension seen once is kept as it is (a symbolic one keeps its name)
                sizes[a] = sizes[a] * _size(d) if a in sizes else _size(d)
            else:
                if isinstance(_size(d), int) and int(d) != f:
                    raise KilnError(f"layout {self.name}: sub-axis {f}{a} needs size {f}, shape has {d}")
                sizes[a.upper()] = sizes.get(a.upper(), 1) * f
        return sizes

    def shape_from_primal(self, sizes: dict) -> tuple:
        """The shape in this layout of a tensor whose logical sizes are ``sizes`` (from :meth:`shape_to_primal`)."""
        shape = []
        for a, f in self.axes:
            if f is not None:
                shape.append(f)
                continue
            if a not in sizes:
                raise KilnError(f"layout {self.name}: axis {a} has no size in {sizes}")
            factor = self.factor_of(a)
            if isinstance(sizes[a], int) and sizes[a] % factor:
                raise KilnError(f"layout {self.name}: axis {a} of size {sizes[a]} is not divisible by {factor}")
            shape.append(sizes[a] // factor if factor != 1 else sizes[a])
        return tuple(shape)

    def convert_shape(self, shape, dst: "Layout") -> tuple:
        """The shape of a tensor of ``shape`` in this layout after transforming it to ``dst``."""
        sizes = self.shape_to_primal(shape)
        if set(sizes) != set(dst.primal):
            raise KilnError(f"cannot convert layout {self.name} to {dst.name}: different primal axes")
        return dst.shape_from_primal(sizes)


@dataclass(frozen=True, slots=True)
class BijectiveLayout:
    """A conversion between two layouts with the same primal axes (TVM's ``tir.BijectiveLayout``, made by
    :func:`bijective_layout`): shapes go from ``src_layout`` to ``dst_layout`` and back, a dimension known only at
    run time (``relay.Any``, a size variable) carried to its place.

    Examples
    --------
    >>> bijective_layout("NCHW", "NCHW16c").forward_shape((1, 32, 7, 7))
    (1, 2, 7, 7, 16)
    """

    src_layout: Layout
    dst_layout: Layout

    def forward_shape(self, shape) -> tuple:
        """``shape`` in ``src_layout`` converted to ``dst_layout``."""
        return self.src_layout.convert_shape(tuple(shape), self.dst_layout)

    def backward_shape(self, shape) -> tuple:
        """``shape`` in ``dst_layout`` converted back to ``src_layout``."""
        return self.dst_layout.convert_shape(tuple(shape), self.src_layout)

    def forward_index(self, index) -> list:
        """The index in ``dst_layout`` of the element at ``index`` in ``src_layout`` (TIR expressions)."""
        from .layout_index import convert_index

        return convert_index(self.src_layout, self.dst_layout, index)

    def backward_index(self, index) -> list:
        """The index in ``src_layout`` of the element at ``index`` in ``dst_layout``."""
        from .layout_index import convert_index

        return convert_index(self.dst_layout, self.src_layout, index)


def bijective_layout(src_layout, dst_layout) -> BijectiveLayout | None:
    """The conversion from ``src_layout`` to ``dst_layout`` (names or :class:`Layout` s), as TVM's
    ``tvm.tir.bijective_layout``; None when either is undefined (``""``) or their primal axes differ (they are not
    convertible), as TVM's undefined BijectiveLayout."""
    if any(x is None or x in ("", "__undef__") for x in (src_layout, dst_layout)):
        return None  # an undefined layout converts to nothing, as TVM's
    src = layout(src_layout) if isinstance(src_layout, str) else src_layout
    dst = layout(dst_layout) if isinstance(dst_layout, str) else dst_layout
    if set(src.primal) != set(dst.primal):
        return None
    return BijectiveLayout(src, dst)


def _size(dim):
    """A dimension as an int; a dynamic one (:class:`~kiln.ir.type.Any`, a symbolic TIR size) kept as it is."""
    try:
        return int(dim)
    except (TypeError, KilnError):
        return dim


def from_axes(axes) -> Layout:
    """The layout of ``axes`` (``(letter, factor)`` pairs) without validation: a part of a valid layout (a
    sub-axis may be without its primal axis, as in TVM); no axes make the scalar layout, named ``""``."""
    axes = tuple(axes)
    return Layout("".join(f"{f}{a}" if f is not None else a for a, f in axes), axes)


SCALAR = Layout("", ())
"""The layout of a scalar (defined, with no axes), as opposed to None: an undefined layout."""

_CACHE: dict[str, Layout] = {}


def undefined_or_layout(name, dtype="int32") -> Layout | None:
    """TVM's ``tvm.tir.layout``: the layout named ``name``, or None (TVM's undefined layout) for ``""``; ``dtype``
    (of TVM's index expressions) is accepted and unused."""
    return None if name == "" else layout(name)


def layout(name: str) -> Layout:
    """Parse a layout string (cached), raising KilnError naming the string when it is malformed."""
    parsed = _CACHE.get(name)
    if parsed is not None:
        return parsed
    axes = []
    pos = 0
    for match in _TOKEN.finditer(name):
        if match.start() != pos:
            break
        digits, letter = match.groups()
        if letter.isupper() and digits:
            raise KilnError(f"layout {name!r}: a primal axis ({letter}) cannot have a factor")
        if letter.islower() and not digits:
            raise KilnError(f"layout {name!r}: sub-axis {letter} needs a factor, as in 16{letter}")
        axes.append((letter, int(digits) if digits else None))
        pos = match.end()
    letters = [a for a, _ in axes]
    primal = [a for a, f in axes if f is None]
    # a primal axis appears once; it may be split more than once (OHWI16i64o2i, as TVM's layouts allow)
    if pos != len(name) or not name or len(set(primal)) != len(primal):
        raise KilnError(f"malformed layout {name!r}")
    for a, f in axes:
        if f is not None and a.upper() not in letters:
            raise KilnError(f"layout {name!r}: sub-axis {f}{a} has no primal axis {a.upper()}")
    parsed = _CACHE[name] = Layout(name, tuple(axes))
    return parsed
