"""``IndexMap`` (TVM's ``tir.IndexMap``): a map from one multi-dimensional index space to another, given by
expressions of the initial indices (``lambda i: [i // 4, i % 4]``), as layout transformations state them.

Mapping indices substitutes and simplifies; mapping a shape detects the map as an iterator map of the shape's
ranges (``arith.detect_iter_map`` without checks, so a padded dimension is rounded up: ``[14]`` maps to ``[4, 4]``)
and takes each output's extent, falling back to interval evaluation; the inverse inverts the detected map
(``arith.inverse_affine_iter_map``), bijective or, for ``non_surjective_inverse``, with the predicate that is true on
the padding. The arithmetic analyses sit above the TIR nodes, so this module reaches them through the global
functions kiln.arith registers (``arith.DetectIterMap``...), as TVM's C++ does.
"""

import inspect
from dataclasses import dataclass, field

import numpy as np

from ..error import TIRError
from ..ir.node import IGNORE, Node
from ..runtime.packed_func import get_global_func
from . import expr as E
from . import op as _op
from .stmt_functor import substitute


def _arith(name):
    f = get_global_func(name, allow_missing=True)
    if f is None:
        raise TIRError(f"tir.IndexMap needs kiln.arith ({name}); import kiln")
    return f


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IndexMap(Node):
    """``initial_indices -> final_indices``; ``inverse_index_map`` (an IndexMap or a function) is used as the inverse
    when given.

    Examples
    --------
    >>> m = IndexMap.from_func(lambda i: [i // 4, i % 4], index_dtype="int32")
    >>> [int(v) for v in m.map_indices([42])]
    [10, 2]
    >>> [int(v) for v in m.map_shape([14])]
    [4, 4]
    """

    initial_indices: tuple
    final_indices: tuple
    inverse_index_map: object = None
    span: object = field(default=None, kw_only=True, metadata=IGNORE)

    type_key = "tir.IndexMap"
    AXIS_SEPARATOR = "axis_separator"

    def __post_init__(self):
        inverse = self.inverse_index_map
        if callable(inverse) and not isinstance(inverse, IndexMap):
            inverse = IndexMap.from_func(inverse)
        object.__setattr__(self, "initial_indices", tuple(self.initial_indices))
        object.__setattr__(self, "final_indices", tuple(E.convert(e) for e in self.final_indices))
        object.__setattr__(self, "inverse_index_map", inverse)

    def __str__(self):
        args = ", ".join(v.name_hint for v in self.initial_indices)
        return f"index_map(lambda {args}: ({', '.join(str(e) for e in self.final_indices)},))"

    __repr__ = __str__

    @staticmethod
    def from_func(mapping_function, ndim=None, inverse_index_map=None, *, index_dtype="int64"):
        """The IndexMap of a Python function of index variables (one per parameter, ``ndim`` in all when it takes
        ``*args``) returning an expression or a list of them."""
        index_map, separators = IndexMap.from_func_with_separators(mapping_function, ndim, inverse_index_map,
                                                                   index_dtype=index_dtype)
        if separators:
            raise TIRError("IndexMap.from_func: the function returned IndexMap.AXIS_SEPARATOR; use "
                           "IndexMap.from_func_with_separators")
        return index_map

    @staticmethod
    def from_func_with_separators(mapping_function, ndim=None, inverse_index_map=None, *, index_dtype="int64"):
        """As :meth:`from_func`, also returning the positions at which the function returned
        ``IndexMap.AXIS_SEPARATOR``."""
        args, kwargs, var_arg = [], {}, None
        for name, param in inspect.signature(mapping_function).parameters.items():
            if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
                args.append(E.Var(name, index_dtype))
            elif param.kind == param.VAR_POSITIONAL:
                var_arg = name
            elif param.kind == param.KEYWORD_ONLY:
                kwargs[name] = E.Var(name, index_dtype)
            else:
                raise TIRError("IndexMap.from_func: the mapping function may not take **kwargs")
        if var_arg is not None:
            if ndim is None:
                raise TIRError("IndexMap.from_func: ndim must be given when the function takes *args")
            args.extend(E.Var(f"{var_arg}_{i}", index_dtype) for i in range(ndim - len(args) - len(kwargs)))
        mapping = mapping_function(*args, **kwargs)
        final, separators = [], []
        values = mapping if isinstance(mapping, list | tuple) else [mapping]
        for val in values:
            if isinstance(val, str) and val == IndexMap.AXIS_SEPARATOR:
                separators.append(len(final))
            elif isinstance(val, E.PrimExpr | int):
                final.append(E.convert(val))
            else:
                raise TIRError(f"IndexMap.from_func: expected expressions or IndexMap.AXIS_SEPARATOR, got "
                               f"{val!r} of type {type(val).__name__}")
        return IndexMap(args + list(kwargs.values()), final, inverse_index_map), separators

    def is_equivalent_to(self, other_map) -> bool:
        """Whether ``other_map`` maps every index as this one does (as far as the analyzer can prove)."""
        if len(self.initial_indices) != len(other_map.initial_indices) or \
                len(self.final_indices) != len(other_map.final_indices):
            return False
        ana = _arith("arith.CreateAnalyzer")()
        mapped = other_map.map_indices(self.initial_indices)
        return all(ana.can_prove_equal(a, b) for a, b in zip(self.final_indices, mapped, strict=True))

    def map_indices(self, indices) -> list:
        """The final indices at ``indices`` (simplified)."""
        indices = [E.convert(i) for i in indices]
        if len(indices) != len(self.initial_indices):
            raise TIRError(f"IndexMap.map_indices: {len(indices)} indices for a map of "
                           f"{len(self.initial_indices)} dimensions")
        vmap = dict(zip(self.initial_indices, indices, strict=True))
        ana = _arith("arith.CreateAnalyzer")()
        return [ana.simplify(_substitute_legalized(e, vmap)) for e in self.final_indices]

    def map_ranges(self, ranges) -> list:
        """The Range of each final index while the initial indices sweep ``ranges``."""
        if len(ranges) != len(self.initial_indices):
            raise TIRError(f"IndexMap.map_ranges: {len(ranges)} ranges for a map of "
                           f"{len(self.initial_indices)} dimensions")
        doms = dict(zip(self.initial_indices, ranges, strict=True))
        ana = _arith("arith.CreateAnalyzer")()
        found = _arith("arith.DetectIterMap")(list(self.final_indices), doms, _op.const(True), 3, False).indices
        out = []
        if found:
            # the terms are orthogonal: the extent of the sum is that of its largest term
            for index in found:
                extent = None
                for term in index.args:
                    e = _op.multiply(term.extent, term.scale)
                    extent = e if extent is None else _op.maximum(extent, e)
                out.append(E.Range.from_min_extent(index.base, extent if extent is not None else 1))
        else:
            for index in self.final_indices:
                s = ana.int_set(index, doms)
                if not s.is_bounded():
                    raise TIRError(f"IndexMap.map_ranges: the index {index} is unbounded over {list(ranges)}")
                out.append(E.Range.from_min_extent(ana.simplify(s.min_value),
                                                   ana.simplify(_op.add(_op.subtract(s.max_value, s.min_value), 1))))
        bits = max(_op_bits(r.extent.dtype) for r in ranges)
        dtype = f"int{bits}"
        return [r if r.min.dtype == dtype and r.extent.dtype == dtype else
                E.Range.from_min_extent(_op.cast(r.min, dtype), _op.cast(r.extent, dtype)) for r in out]

    def map_shape(self, shape) -> list:
        """The shape of a buffer of ``shape`` after the map (padded dimensions rounded up)."""
        shape = [E.convert(d) for d in shape]
        mapped = self.map_ranges([E.Range.from_min_extent(_op.const(0, d.dtype), d) for d in shape])
        for r in mapped:
            if not _op.is_const_int(r.min, 0):
                raise TIRError(f"IndexMap.map_shape: the mapped range {r} does not start at 0")
        return [r.extent for r in mapped]

    def map_ndarray(self, arr_src):
        """A new NDArray holding ``arr_src``'s elements at their mapped positions."""
        from ..runtime import ndarray as nd

        src = arr_src.numpy() if hasattr(arr_src, "numpy") else np.asarray(arr_src)
        if src.ndim != len(self.initial_indices):
            raise TIRError(f"IndexMap.map_ndarray: the array has rank {src.ndim}, the map {len(self.initial_indices)}")
        dst_shape = [int(d) for d in self.map_shape(list(src.shape))]
        grids = np.indices(src.shape, dtype=np.int64).reshape(src.ndim, -1)
        env = {id(v): grids[k] for k, v in enumerate(self.initial_indices)}
        dst_idx = tuple(np.broadcast_to(_np_eval(e, env), grids.shape[1:]) for e in self.final_indices)
        dst = np.zeros(dst_shape, dtype=src.dtype)
        dst[dst_idx] = src.reshape(-1)
        return nd.array(dst)

    def inverse(self, shape):
        """The inverse map over the region ``shape`` (Ranges or extents); raises when the map is not bijective
        there."""
        inverse, padding = self._inverse(shape, 0)
        ana = _arith("arith.CreateAnalyzer")()
        if not ana.can_prove(_op.logical_not(padding)):
            raise TIRError(f"IndexMap.inverse: {self} is not bijective over {shape}: its padding is {padding}")
        return inverse

    def non_surjective_inverse(self, shape):
        """The inverse over ``shape`` of a map that may pad, and the predicate (over the inverse's inputs) that is
        true on the padding."""
        return self._inverse(shape, 3)

    def _inverse(self, shape, level):
        if self.inverse_index_map is not None:
            return self.inverse_index_map, _op.const(False)
        ranges = [d if isinstance(d, E.Range) else E.Range(0, d) for d in shape]
        outputs = [E.Var(f"axis{i}", e.dtype) for i, e in enumerate(self.final_indices)]
        doms = dict(zip(self.initial_indices, ranges, strict=True))
        found = _arith("arith.DetectIterMap")(list(self.final_indices), doms, _op.const(True), level, False)
        if found.errors:
            raise TIRError(f"IndexMap.inverse: could not read {self} as a sum of iterators: {found.errors[0]}")
        exprs = _arith("arith.InverseAffineIterMap")(found.indices, outputs)
        ana = _arith("arith.CreateAnalyzer")()
        inverse = []
        for var, rng in zip(self.initial_indices, ranges, strict=True):
            if _op.is_const_int(rng.extent, 1) and var not in exprs:
                inverse.append(ana.simplify(rng.min))
            elif var in exprs:
                inverse.append(ana.simplify(exprs[var]))
            else:
                raise TIRError(f"IndexMap.inverse: {self} does not use the index {var.name_hint}")
        padding = _arith("arith.NormalizeIterMapToExpr")(found.padding_predicate)
        padding = substitute(padding, exprs)
        bound = _arith("arith.CreateAnalyzer")()
        for var, rng in zip(outputs, self.map_ranges(ranges), strict=True):
            bound.bind(var, rng)
        return IndexMap(outputs, inverse), bound.simplify(padding, 10)


def _op_bits(dtype):
    return int("".join(ch for ch in dtype if ch.isdigit()) or 32)


def _substitute_legalized(expr, vmap):
    """``expr`` with variables replaced; where a value's dtype differs from its variable's the arithmetic around it
    is rebuilt in the wider dtype (TVM's SubstituteWithDataTypeLegalization)."""
    if all(v.dtype == e.dtype for v, e in vmap.items()):
        return substitute(expr, vmap)
    by_id = {id(v): e for v, e in vmap.items()}

    def rebuild(e):
        if isinstance(e, E.Var):
            return by_id.get(id(e), e)
        if isinstance(e, E.BinaryOpExpr):
            a, b = rebuild(e.a), rebuild(e.b)
            if a.dtype != b.dtype:
                # a constant takes the other side's dtype (``i * 4`` stays in i's); else the narrower is widened
                if isinstance(b, E.IntImm):
                    b = _op.const(b.value, a.dtype)
                elif isinstance(a, E.IntImm):
                    a = _op.const(a.value, b.dtype)
                else:
                    wide = a.dtype if _op_bits(a.dtype) >= _op_bits(b.dtype) else b.dtype
                    a, b = (_op.cast(x, wide) if x.dtype != wide else x for x in (a, b))
            return type(e)(a, b)
        return substitute(e, vmap)

    return rebuild(expr)


_NP_OPS = {E.Add: np.add, E.Sub: np.subtract, E.Mul: np.multiply, E.FloorDiv: np.floor_divide,
           E.FloorMod: np.mod, E.Min: np.minimum, E.Max: np.maximum}


def _np_eval(expr, env):
    """An index expression evaluated on numpy arrays of the index variables (``env``: id(var) -> array)."""
    if isinstance(expr, E.IntImm):
        return np.int64(expr.value)
    if isinstance(expr, E.Var):
        if id(expr) not in env:
            raise TIRError(f"IndexMap.map_ndarray: the index expression uses the free variable {expr.name_hint}")
        return env[id(expr)]
    if isinstance(expr, E.Cast):
        return _np_eval(expr.value, env)
    f = _NP_OPS.get(type(expr))
    if f is None:
        raise TIRError(f"IndexMap.map_ndarray: cannot evaluate {type(expr).__name__} in an index ({expr})")
    return f(_np_eval(expr.a, env), _np_eval(expr.b, env))
