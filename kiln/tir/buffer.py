"""``Buffer``: a typed, shaped view of memory, and ``decl_buffer`` (TVM's ``tvm.tir.decl_buffer``).

A buffer names its memory by a handle variable ``data`` (a ``Var`` of type ``PointerType(PrimType(dtype), scope)``),
and maps an index tuple to an element offset ``elem_offset + sum(index[k] * stride[k])``. Empty ``strides`` mean a
compact row-major layout, whose strides follow from ``shape``. Buffers are graph nodes (compared by identity);
structural equality binds their ``data`` variable and any variable of their shape, strides and offset, as TVM does.
"""

from dataclasses import dataclass, field

from ..error import TIRError
from ..ir.node import DEF, IGNORE, Node
from ..ir.type import PrimType
from . import dtype as _dt
from .expr import BufferLoad, IntImm, PointerType, PrimExpr, Var, convert

DEFAULT_ALIGNMENT = 64  # bytes; what kiln's NDArray guarantees (runtime ALIGNMENT) and TVM's kAllocAlignment


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Buffer(Node):
    """A buffer: fields ``data``, ``dtype``, ``shape``, ``strides``, ``elem_offset``, ``name``, ``data_alignment``,
    ``offset_factor``, ``buffer_type``, ``axis_separators``.

    Build one with :func:`decl_buffer`. ``buf[i, j]`` reads it (a ``BufferLoad``).
    """

    data: Var = field(metadata=DEF)
    dtype: str
    shape: tuple = field(metadata=DEF)
    strides: tuple = field(default=(), metadata=DEF)
    elem_offset: PrimExpr = field(default=None, metadata=DEF)
    name: str = field(default="buffer", metadata=IGNORE)
    data_alignment: int = DEFAULT_ALIGNMENT
    offset_factor: int = 1
    buffer_type: int = 1
    axis_separators: tuple = ()
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "dtype", _dt.normalize(self.dtype))
        if not isinstance(self.data, Var) or self.data.dtype != "handle":
            raise TIRError(f"tir.Buffer {self.name}: data must be a handle Var")
        shape = tuple(convert(s) for s in self.shape)
        set_(self, "shape", shape)
        set_(self, "strides", tuple(convert(s) for s in self.strides))
        if self.strides and len(self.strides) != len(shape):
            raise TIRError(f"tir.Buffer {self.name}: {len(self.strides)} strides for {len(shape)} dimensions")
        index_dtype = shape[0].dtype if shape else "int32"
        set_(self, "elem_offset", convert(0, index_dtype) if self.elem_offset is None else convert(self.elem_offset))
        set_(self, "axis_separators", tuple(int(a) for a in self.axis_separators))
        set_(self, "data_alignment", int(self.data_alignment))
        set_(self, "offset_factor", int(self.offset_factor))
        for dim in shape:
            if not _dt.is_integer(dim.dtype):
                raise TIRError(f"tir.Buffer {self.name}: shape entries must be integers, got {dim.dtype}")

    def scope(self) -> str:
        """The storage scope of the memory ("global", "local", "shared")."""
        ann = self.data.type_annotation
        return ann.storage_scope if isinstance(ann, PointerType) and ann.storage_scope else "global"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        return BufferLoad(self, indices)

    def vload(self, begin, dtype=None):
        """A (vector) load starting at ``begin``; ``dtype`` with lanes > 1 loads that many consecutive elements."""
        begin = tuple(convert(b) for b in (begin if isinstance(begin, tuple | list) else (begin,)))
        return BufferLoad(self, _vector_indices(self, begin, dtype or self.dtype, "load"))

    def vstore(self, begin, value):
        """A (vector) store of ``value`` starting at ``begin``."""
        from .stmt import BufferStore

        value = convert(value)
        begin = tuple(convert(b) for b in (begin if isinstance(begin, tuple | list) else (begin,)))
        return BufferStore(self, value, _vector_indices(self, begin, value.dtype, "store"))

    READ, WRITE = 1, 2  # access_ptr masks

    def access_ptr(self, access_mask, ptr_type="handle", content_lanes=1, offset=0, extent=None):
        """A pointer to the buffer's data from element ``offset`` (TVM's ``Buffer.access_ptr``): a
        ``tvm_access_ptr`` call over ``extent`` elements (default: to the end), read and/or written as
        ``access_mask`` (``"r"``, ``"w"``, ``"rw"`` or the bits READ | WRITE) says."""
        from .builtin import tvm_access_ptr, type_annotation
        from .op import floordiv, multiply, subtract

        if isinstance(access_mask, str):
            mask = 0
            for c in access_mask:
                if c not in "rw":
                    raise TIRError(f"Buffer.access_ptr of {self.name}: unknown access mask {access_mask!r}")
                mask |= self.READ if c == "r" else self.WRITE
            access_mask = mask
        offset = convert(offset)
        if extent is None:
            if not self.shape:
                extent = convert(1)
            elif len(self.strides) == len(self.shape):
                extent = subtract(multiply(self.strides[0], self.shape[0]), offset)
            else:
                size = self.shape[0]
                for d in self.shape[1:]:
                    size = multiply(size, d)
                extent = subtract(size, offset)
        elem_offset = add_offset(self.elem_offset, offset)
        dtype = self.dtype
        if content_lanes > 1:
            dtype = f"{self.dtype}x{content_lanes}"
            extent, elem_offset = floordiv(extent, content_lanes), floordiv(self.elem_offset, content_lanes)
        call = tvm_access_ptr(type_annotation(dtype), self.data, elem_offset, convert(extent),
                              IntImm("int32", int(access_mask)))
        return call if ptr_type == "handle" else call.with_fields(dtype=ptr_type)

    def default_strides(self) -> tuple:
        """The strides: the declared ones, or row-major strides computed from the shape."""
        if self.strides:
            return self.strides
        from .op import multiply

        strides = []
        acc = convert(1, self.shape[-1].dtype) if self.shape else convert(1)
        for dim in reversed(self.shape):
            strides.append(acc)
            acc = multiply(acc, dim)
        return tuple(reversed(strides))

    def offset_of(self, indices) -> tuple:
        """The element offsets of ``self[indices]``, one per output axis (one unless ``axis_separators`` are set),
        simplified so that a split index gives the offset of the unsplit one (TVM's ``Buffer.offset_of``)."""
        from ..runtime.packed_func import get_global_func

        return get_global_func("tir.BufferOffsetOf")(self, indices)

    def linear_offset(self, indices) -> PrimExpr:
        """``elem_offset + sum(index * stride)`` as built, unsimplified (vector when an index is): what code
        generators address a buffer the flattening passes left multi-dimensional with."""
        from .op import add, multiply

        indices = tuple(convert(i) for i in indices)
        offset = self.elem_offset
        for index, stride in zip(indices, self.default_strides(), strict=True):
            offset = add(offset, multiply(index, stride))
        return offset

    def get_flattened_buffer(self) -> "Buffer":
        """The buffer as the flattening passes see it: one axis per group of ``axis_separators`` (one axis for a
        plain buffer), each as long as its group's elements (stride times extent of its first axis when the buffer
        has strides); a buffer already in that form is returned as is. Same memory, same offset."""
        from .op import multiply

        seps = self.axis_separators
        if list(seps) != sorted(set(seps)) or seps and not 0 < seps[0] <= seps[-1] < len(self.shape):
            raise TIRError(f"Buffer.get_flattened_buffer: axis separators {list(seps)} of buffer {self.name} must "
                           f"increase strictly within 1..{len(self.shape) - 1}")
        if self.strides:
            shape = [multiply(self.strides[0], self.shape[0])]
            shape += [multiply(self.strides[sep], self.shape[sep]) for sep in seps]
        else:
            shape = [convert(1, self.shape[0].dtype if self.shape else "int32") for _ in range(len(seps) + 1)]
            axis = 0
            for i, dim in enumerate(self.shape):
                if axis < len(seps) and i == seps[axis]:
                    axis += 1
                shape[axis] = multiply(shape[axis], dim)
        if len(shape) == len(self.shape) and not self.strides:
            return self
        return Buffer(self.data, self.dtype, tuple(shape), (), self.elem_offset, self.name, self.data_alignment,
                      self.offset_factor, self.buffer_type, tuple(range(1, len(seps) + 1)), span=self.span)

    def axis_groups(self) -> list:
        """The logical dimensions grouped by ``axis_separators`` (each group is one physical axis)."""
        cuts = [0, *self.axis_separators, len(self.shape)]
        return [self.shape[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]

    def __str__(self):
        shape = ", ".join(str(s) for s in self.shape)
        return f"T.Buffer(({shape}{',' if len(self.shape) == 1 else ''}), \"{self.dtype}\")  # {self.name}"

    __repr__ = __str__


def _vector_indices(buffer, begin, dtype, what):
    """``begin`` with its last index widened to a unit-stride Ramp when ``dtype`` has more lanes than the buffer's
    element type (a vector access of consecutive elements)."""
    from .expr import Ramp

    dtype = _dt.normalize(dtype)
    lanes, own = _dt.lanes(dtype), _dt.lanes(buffer.dtype)
    if _dt.element(dtype) != _dt.element(buffer.dtype) or lanes % own:
        raise TIRError(f"Buffer.v{what}: cannot {what} {dtype} {'from' if what == 'load' else 'to'} buffer "
                       f"{buffer.name} of {buffer.dtype}")
    if lanes // own > 1:
        begin = (*begin[:-1], Ramp(begin[-1], convert(1, begin[-1].dtype), lanes // own))
    return begin


def decl_buffer(shape, dtype="float32", name="buffer", data=None, strides=None, elem_offset=None, scope="",
                data_alignment=-1, offset_factor=0, buffer_type="", axis_separators=None, span=None) -> Buffer:
    """Declare a new buffer (TVM's signature).

    Parameters
    ----------
    shape : tuple of int or PrimExpr
        The shape.
    dtype : str
        The element type.
    name : str
        The name (the data variable is named ``name`` too, as TVM names it).
    data : Var, optional
        The handle variable; a new ``Var(name, PointerType(PrimType(dtype), scope))`` by default.
    strides : tuple, optional
        Element strides; empty means compact row-major.
    elem_offset : PrimExpr, optional
        Offset of the first element; a new variable when ``offset_factor`` is non-zero, else 0.
    scope : str
        Storage scope ("global" by default, "local" for per-thread scratch).
    data_alignment : int
        Alignment of ``data`` in bytes; -1 means the default (64).
    offset_factor : int
        Required factor of ``elem_offset``.
    buffer_type : str
        "" or "auto_broadcast".

    Examples
    --------
    >>> A = decl_buffer((128, 64), "float32", name="A")
    >>> A.data.dtype, len(A.shape)
    ('handle', 2)
    """
    if isinstance(shape, PrimExpr | int):
        shape = (shape,)
    shape = tuple(convert(s) for s in shape)
    dtype = _dt.normalize(dtype)
    if data is None:
        data = Var(name, PointerType(PrimType(dtype), scope or "global"))
    if elem_offset is None and offset_factor != 0:
        elem_offset = Var(f"{name}_elem_offset", shape[0].dtype if shape else "int32")
    if data_alignment <= 0:
        data_alignment = DEFAULT_ALIGNMENT
    if buffer_type == "auto_broadcast" and shape and not strides:
        # bound per call to the array's strides, 0 along a dimension of extent 1 (TVM's Buffer constructor)
        strides = tuple(Var("stride", dim.dtype) for dim in shape)
    return Buffer(data, dtype, shape, tuple(strides or ()), elem_offset, name, data_alignment,
                  max(offset_factor, 1), 2 if buffer_type == "auto_broadcast" else 1, tuple(axis_separators or ()),
                  span=span)


def _is_zero(expr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0


def add_offset(elem_offset, offset):
    """``elem_offset + offset``, without a ``+ 0``."""
    from .op import add

    if isinstance(offset, IntImm) and offset.value == 0:
        return elem_offset
    return add(elem_offset, offset)
