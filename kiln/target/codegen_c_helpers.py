"""Vector types and ``static inline`` helper functions the C backend emits on first use.

GCC's vector extensions give C element-wise ``+ - * / % & | ^ << >>`` and comparisons on vector types, and vector
casts that reinterpret bits; everything else a TIR vector expression needs is a tiny helper here, named after what
it does and the types it works on (``kiln_select_float32x16``, ``kiln_min_int32``). Each helper is a few lines the
C compiler inlines and vectorizes (a per-lane loop over a vector type becomes vector instructions at -O3), so the
printer stays a printer.

Boolean vectors are masks ``int32xN_t`` holding -1 (true) or 0 (false): what GCC's vector comparisons yield for
32-bit elements; comparisons of other widths are converted with ``__builtin_convertvector``.
"""

from ..error import CodegenError
from ..tir import dtype as _dt

_SCALAR = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float16": "_Float16", "float32": "float", "float64": "double", "handle": "void*", "void": "void",
}


def scalar_ctype(dtype) -> str:
    """The C type of a scalar dtype (``float32`` -> ``float``)."""
    t = _dt.DataType.parse(dtype)
    name = str(t.element_of())
    if name not in _SCALAR:
        raise CodegenError(f"C codegen: no C type for dtype {dtype}")
    return _SCALAR[name]


def vector_ctype(dtype) -> str:
    """The name of the vector typedef of ``dtype`` (``float32x16`` -> ``float32x16_t``; bool vectors are masks)."""
    t = _dt.DataType.parse(dtype)
    if t.is_bool():
        return f"int32x{t.lanes}_t"
    return f"{t.element_of()}x{t.lanes}_t"


def _elem_bytes(t) -> int:
    return 4 if t.is_bool() else max(1, t.bits // 8)


class HelperSet:
    """The typedefs and helpers used so far by one translation unit, in order of first use."""

    def __init__(self):
        self.typedefs: dict = {}
        self.functions: dict = {}

    def render(self) -> str:
        return "\n".join([*self.typedefs.values(), *self.functions.values()])

    # ---- types
    def vector_type(self, dtype) -> str:
        t = _dt.DataType.parse(dtype)
        name = vector_ctype(t)
        if name not in self.typedefs:
            elem = "int32_t" if t.is_bool() else scalar_ctype(t)
            size = _elem_bytes(t) * t.lanes
            if size & (size - 1):
                raise CodegenError(f"C codegen: vector {dtype} is not a power-of-two number of bytes")
            self.typedefs[name] = f"typedef {elem} {name} __attribute__((vector_size({size})));"
            self.typedefs[name[:-2] + "_u"] = (
                f"typedef {elem} {name[:-2]}_u __attribute__((vector_size({size}), aligned({_elem_bytes(t)}), "
                f"may_alias));"
            )
        return name

    def unaligned_type(self, dtype) -> str:
        """The unaligned, may-alias twin used for contiguous vector loads and stores."""
        return self.vector_type(dtype)[:-2] + "_u"

    def memory_type(self, dtype, alignment) -> str:
        """The type a contiguous vector access of ``alignment`` bytes goes through: the aligned may-alias twin
        (``float32x16_a``, aligned moves) when the access is aligned to the vector's size, else ``_u``."""
        t = _dt.DataType.parse(dtype)
        name = self.vector_type(dtype)
        size = _elem_bytes(t) * t.lanes
        if alignment < size:
            return name[:-2] + "_u"
        aligned = name[:-2] + "_a"
        if aligned not in self.typedefs:
            elem = "int32_t" if t.is_bool() else scalar_ctype(t)
            self.typedefs[aligned] = (
                f"typedef {elem} {aligned} __attribute__((vector_size({size}), aligned({size}), may_alias));")
        return aligned

    def int_vector_type(self, t) -> str:
        """The signed integer vector with ``t``'s element width and lanes (the mask type of comparisons on ``t``)."""
        return self.vector_type(f"int{_elem_bytes(t) * 8}x{t.lanes}")

    def _define(self, name, code):
        if name not in self.functions:
            self.functions[name] = code
        return name

    # ---- vector construction
    def broadcast(self, dtype, value) -> str:
        t = _dt.DataType.parse(dtype)
        vt = self.vector_type(t)
        # an initializer list (not a loop): GCC recognizes it as one broadcast instruction. A bool vector shares
        # its C type with int32 vectors, so its helper is named after the dtype (kiln_bcast_boolx4), not the C type:
        # one module may broadcast both an int32 and a bool, with different meanings
        if t.is_bool():
            lanes = ", ".join(["m"] * t.lanes)
            name = self._define(f"kiln_bcast_{t}", (
                f"static inline {vt} kiln_bcast_{t}(bool x) {{ int32_t m = x ? -1 : 0; {vt} r = {{{lanes}}}; "
                f"return r; }}"))
            return f"{name}({value})"
        elem = scalar_ctype(t)
        lanes = ", ".join(["x"] * t.lanes)
        name = self._define(f"kiln_bcast_{vt}", (
            f"static inline {vt} kiln_bcast_{vt}({elem} x) {{ {vt} r = {{{lanes}}}; return r; }}"))
        return f"{name}({value})"

    def ramp(self, t, base, stride) -> str:
        vt = self.vector_type(t)
        elem = scalar_ctype(t)
        lanes = ", ".join(f"({elem})(base + {k} * stride)" for k in range(t.lanes))
        name = self._define(f"kiln_ramp_{vt}", (
            f"static inline {vt} kiln_ramp_{vt}({elem} base, {elem} stride) {{ {vt} r = {{{lanes}}}; return r; }}"))
        return f"{name}({base}, {stride})"

    # ---- element-wise operations
    def vector_compare(self, t, expr) -> str:
        """A vector comparison of operands of type ``t`` as an ``int32xN`` mask."""
        mask = self.vector_type(_dt.DataType("bool", 1, t.lanes))
        if _elem_bytes(t) == 4:
            return f"(({mask})({expr}))"
        return f"__builtin_convertvector({expr}, {mask})"

    def _mask_as(self, t, mask) -> str:
        """``mask`` (int32xN) converted to the integer vector of ``t``'s element width."""
        if _elem_bytes(t) == 4:
            return mask
        return f"__builtin_convertvector({mask}, {self.int_vector_type(t)})"

    def select(self, t, mask, a, b) -> str:
        vt, it = self.vector_type(t), self.int_vector_type(t)
        self.vector_type(_dt.DataType("bool", 1, t.lanes))
        name = self._define(f"kiln_select_{vt}", (
            f"static inline {vt} kiln_select_{vt}({it} m, {vt} a, {vt} b) {{ "
            f"return ({vt})((({it})a & m) | (({it})b & ~m)); }}"))
        return f"{name}({self._mask_as(t, mask)}, {a}, {b})"

    def vector_cast(self, src, dst, value) -> str:
        vd = self.vector_type(dst)
        if dst.is_bool():
            zero = f"({self.vector_type(src)}){{0}}"
            return self.vector_compare(src, f"({value} != {zero})")
        if src.is_bool():  # -1/0 mask -> 1/0 numbers
            return f"__builtin_convertvector(-({value}), {vd})"
        self.vector_type(src)
        return f"__builtin_convertvector({value}, {vd})"

    _SCALAR_BINARY = {
        "min": "(a < b ? a : b)",
        "max": "(a > b ? a : b)",
        "floordiv": "((a % b != 0) && ((a < 0) != (b < 0)) ? a / b - 1 : a / b)",
        "floormod": "((a % b != 0) && ((a % b < 0) != (b < 0)) ? a % b + b : a % b)",
    }
    _FLOAT_BINARY = {
        "min": "(a < b ? a : b)", "max": "(a > b ? a : b)", "floordiv": "floor{f}(a / b)",
        "floormod": "(a - floor{f}(a / b) * b)", "mod": "fmod{f}(a, b)",
    }

    def call_binary(self, op, t, a, b) -> str:
        """``op`` in (min, max, floordiv, floormod, mod) on scalars or vectors of ``t``."""
        elem = scalar_ctype(t)
        if t.is_float():
            if t.bits not in (32, 64):
                raise CodegenError(f"C codegen: {op} is not available for {t}")
            body = self._FLOAT_BINARY[op].format(f="f" if t.bits == 32 else "")
        else:
            body = self._SCALAR_BINARY[op]
        sname = f"kiln_{op}_{t.element_of()}"
        self._define(sname, f"static inline {elem} {sname}({elem} a, {elem} b) {{ return {body}; }}")
        if t.lanes == 1:
            return f"{sname}({a}, {b})"
        vt = self.vector_type(t)
        if op in ("min", "max") and not t.is_bool():
            # a blend by the comparison's mask, as the scalar form's select; GCC 12 at -O3 with
            # -fno-tree-loop-if-convert miscompiles the per-lane loop (clip of a converted int8 product lost its
            # lower bound), and the blend is what it would vectorize the loop into anyway
            mt = self.int_vector_type(t)
            cmp = "<" if op == "min" else ">"
            vname = self._define(f"kiln_{op}_{vt}", (
                f"static inline {vt} kiln_{op}_{vt}({vt} a, {vt} b) {{ {mt} m = ({mt})(a {cmp} b); "
                f"return ({vt})((({mt})a & m) | (({mt})b & ~m)); }}"))
            return f"{vname}({a}, {b})"
        vname = self._define(f"kiln_{op}_{vt}", (
            f"static inline {vt} kiln_{op}_{vt}({vt} a, {vt} b) {{ {vt} r; "
            f"for (int i = 0; i < {t.lanes}; ++i) r[i] = {sname}(a[i], b[i]); return r; }}"))
        return f"{vname}({a}, {b})"

    def lanewise_math(self, fname, t, arg_types, args) -> str:
        """A libm function applied to each lane (``expf`` on every lane of a ``float32x16``)."""
        if t.bits not in (32, 64):
            raise CodegenError(f"C codegen: {fname} is not available for {t}")
        libm = fname + ("f" if t.bits == 32 else "")
        vt = self.vector_type(t)
        params, lanes_args = [], []
        for k, at in enumerate(arg_types):
            if at.lanes > 1:
                params.append(f"{self.vector_type(at)} a{k}")
                lanes_args.append(f"a{k}[i]")
            else:
                params.append(f"{scalar_ctype(at)} a{k}")
                lanes_args.append(f"a{k}")
        name = f"kiln_{fname}_{vt}"
        self._define(name, (
            f"static inline {vt} {name}({', '.join(params)}) {{ {vt} r; "
            f"for (int i = 0; i < {t.lanes}; ++i) r[i] = {libm}({', '.join(lanes_args)}); return r; }}"))
        return f"{name}({', '.join(args)})"

    def popcount(self, t, value) -> str:
        """Set bits of each lane, counted at the lane's own width (as LLVM's ``ctpop``)."""
        bits = t.bits
        elem = scalar_ctype(t)
        builtin = "__builtin_popcountll" if bits == 64 else "__builtin_popcount"
        sname = f"kiln_popcount_{t.element_of()}"
        wide = "uint64_t" if bits == 64 else "uint32_t"
        self._define(sname, (f"static inline {elem} {sname}({elem} x) {{ "
                             f"return ({elem}){builtin}(({wide})(uint{bits}_t)x); }}"))
        if t.lanes == 1:
            return f"{sname}({value})"
        vt = self.vector_type(t)
        vname = self._define(f"kiln_popcount_{vt}", (
            f"static inline {vt} kiln_popcount_{vt}({vt} a) {{ {vt} r; "
            f"for (int i = 0; i < {t.lanes}; ++i) r[i] = {sname}(a[i]); return r; }}"))
        return f"{vname}({value})"

    # ---- memory
    def gather(self, t, ptr, index) -> str:
        vt = self.vector_type(t)
        return (f"({{ {vt} kiln_g_; __typeof__({index}) kiln_i_ = {index}; "
                f"for (int l = 0; l < {t.lanes}; ++l) kiln_g_[l] = ({ptr})[kiln_i_[l]]; kiln_g_; }})")

    def scatter(self, t, ptr, index, value) -> str:
        vt = self.vector_type(t)
        return (f"{{ {vt} kiln_v_ = {value}; __typeof__({index}) kiln_i_ = {index}; "
                f"for (int l = 0; l < {t.lanes}; ++l) ({ptr})[kiln_i_[l]] = kiln_v_[l]; }}")
