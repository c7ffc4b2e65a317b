"""What the C and LLVM code generators share: function symbols and signatures, buffer offsets, names.

Both generators compile every ``PrimFunc`` to a native function returning an ``int32`` status (0 on success) whose
parameters are the PrimFunc's parameters in order (handles as pointers, scalars by value). Two calling conventions
come out of that, recorded in the library's metadata by :func:`function_info` so the runtime knows how to call:

* ``"packed"``: a function after ``MakePackedAPI`` (``calling_conv`` = 1), TVM's
  ``int32_t f(TVMValue* args, int32_t* type_codes, int32_t num_args, TVMValue* ret, int32_t* ret_code, void*
  resource)``; it unpacks and checks its DLTensor arguments itself.
* ``"plain"``: any other PrimFunc; the runtime passes each buffer's data pointer and each scalar directly, and checks
  shapes and dtypes in Python from the parameter descriptions recorded here.
"""

import math
import re

from ..error import CodegenError, KilnError
from ..tir import dtype as _dt
from ..tir import expr as E
from ..tir.function import CallingConv

C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int long "
    "register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while "
    "bool true false main".split()
)


def function_symbol(gv, func) -> str:
    """The exported symbol of ``func``: its ``global_symbol`` attribute, else the GlobalVar's name."""
    symbol = func.attrs.get("global_symbol") if func.attrs is not None else None
    symbol = str(symbol) if symbol else (gv.name_hint if hasattr(gv, "name_hint") else str(gv))
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", symbol):
        raise CodegenError(f"function name {symbol!r} is not a valid C symbol (letters, digits and _ only)")
    return symbol


def is_packed(func) -> bool:
    """Whether ``func`` follows the packed calling convention (it went through MakePackedAPI)."""
    conv = func.attrs.get("calling_conv") if func.attrs is not None else None
    return conv is not None and int(conv) == int(CallingConv.C_PACKED_FUNC)


def _dim(e):
    return int(e.value) if isinstance(e, E.IntImm) else str(e)


def function_info(symbol, func) -> dict:
    """The metadata the runtime needs to call ``func`` (JSON-serializable).

    Returns
    -------
    info : dict
        ``{"name", "calling_conv": "packed"|"plain", "params": [...]}``; a buffer parameter is described as
        ``{"name", "kind": "buffer", "dtype", "shape": [int or symbol name], "alignment"}``, a scalar as
        ``{"name", "kind": "scalar", "dtype"}``. For packed functions ``params`` describes the original arguments
        when MakePackedAPI recorded them (attribute ``kiln.arg_info``), else it is empty.
    """
    if is_packed(func):
        recorded = func.attrs.get("kiln.arg_info") if func.attrs is not None else None
        return {"name": symbol, "calling_conv": "packed", "params": [dict(p) for p in recorded or ()]}
    params = param_specs(func)
    for entry in params:
        for dim in entry.get("shape", ()):
            if isinstance(dim, str) and not any(q["kind"] == "scalar" and q["name"] == dim for q in params):
                raise CodegenError(
                    f"function {symbol}: buffer {entry['name']} has the symbolic dimension {dim}, which only the "
                    f"packed calling convention can bind (run tir.transform.MakePackedAPI first)"
                )
    return {"name": symbol, "calling_conv": "plain", "params": params}


def param_specs(func) -> list:
    """Descriptions of ``func``'s parameters (before MakePackedAPI), as :func:`function_info` lists them."""
    params = []
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is not None:
            params.append({"name": buf.name, "kind": "buffer", "dtype": buf.dtype,
                           "shape": [_dim(s) for s in buf.shape], "alignment": buf.data_alignment})
        elif p.dtype == "handle":
            params.append({"name": p.name_hint, "kind": "handle", "dtype": "handle"})
        else:
            params.append({"name": p.name_hint, "kind": "scalar", "dtype": p.dtype})
    return params


def flat_offset(buffer, indices):
    """The element offset ``buffer[indices]`` addresses (a vector when the last index is): the index itself for a
    flattened buffer, else ``elem_offset + sum(index * stride)``."""
    if len(indices) == 1 and not buffer.strides:
        index = indices[0]
        off = buffer.elem_offset
        if isinstance(off, E.IntImm) and off.value == 0:
            return index
        if _dt.lanes(index.dtype) > 1:
            off = E.Broadcast(E.Cast(_dt.element(index.dtype), off) if off.dtype != _dt.element(index.dtype) else off,
                              _dt.lanes(index.dtype))
        return E.Add(index, off if off.dtype == index.dtype else E.Cast(index.dtype, off))
    return buffer.linear_offset(indices)


def unit_ramp_base(index):
    """``base`` when ``index`` is ``Ramp(base, 1, lanes)`` (a contiguous vector access), else None."""
    if isinstance(index, E.Ramp) and isinstance(index.stride, E.IntImm) and index.stride.value == 1:
        return index.base
    return None


class NameTable:
    """Unique C identifiers for variables: ``name_hint`` sanitized, suffixed ``_1``, ``_2`` ... on collision."""

    def __init__(self, reserved=()):
        self.used = set(reserved)
        self.names: dict = {}  # id(var) -> name
        self.keep: list = []

    def fresh(self, hint) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", str(hint) or "v")
        if base[0].isdigit():
            base = "v_" + base
        if base in C_KEYWORDS:
            base += "_"
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name

    def define(self, var) -> str:
        name = self.fresh(var.name_hint)
        self.names[id(var)] = name
        self.keep.append(var)
        return name

    def get(self, var) -> str:
        name = self.names.get(id(var))
        if name is None:
            raise CodegenError(f"variable {var.name_hint} is used but not defined in the generated function")
        return name


def elem_bytes(dtype) -> int:
    """Bytes of one element of ``dtype`` in memory (a bool is a byte)."""
    t = _dt.DataType.parse(dtype).element_of()
    return 1 if t.is_bool() else max(1, t.bits // 8)


def alignment_of(analyzer, base, lanes, dtype, buffer_alignment) -> int:
    """Byte alignment of a vector access starting at element ``base`` of a ``buffer_alignment``-aligned buffer."""
    size = elem_bytes(dtype)
    try:
        ms = analyzer.modular_set(base)
    except KilnError:  # the analysis is best effort; element alignment is always right
        return size
    coeff, rem = int(ms.coeff), int(ms.base)
    step = math.gcd(coeff, rem) if coeff else rem
    if step == 0:  # the constant 0
        step = lanes
    align = size * (step & -step)  # the largest power of two dividing every possible base
    return max(size, min(align, size * lanes, buffer_alignment))


def stack_elements(alloc) -> int:
    """The scalar elements of an ``Allocate`` ``tir.LowerAllocation`` left on the stack (a constant size)."""
    count = _dt.lanes(alloc.dtype)
    for extent in alloc.extents:
        if not isinstance(extent, E.IntImm):
            raise CodegenError(f"allocation {alloc.buffer_var.name_hint} has the size {extent} known only at run time "
                               f"and no place: run tir.LowerAllocation (kiln.build does) before printing")
        count *= extent.value
    return count
