"""The unifier behind type inference: holes (``IncompleteType``), their bindings, and deferred operator relations.

How it works. A type not known yet is an :class:`~kiln.ir.IncompleteType` (a *hole*). ``unify(a, b)`` makes two types
equal: a hole is bound to the other side (after an occurs check), type constructors are compared part by part. The
bindings live in one dict (``subst``); :meth:`TypeSolver.find` follows a chain of bound holes and
:meth:`TypeSolver.resolve` substitutes them everywhere in a type. A program without unannotated variables creates no
hole, and every method returns its input at once: inference of annotated programs stays a single forward walk.

Tensor dimensions unify as in TVM: equal dimensions stay, a dynamic dimension (``relay.Any``) with anything gives a
dynamic one. Three modes say how strict that is:

* ``"fits"``: ``a`` is declared (a parameter, an annotation), ``b`` is what is given; a dynamic dimension of ``a``
  accepts any size, a static one only itself;
* ``"same"``: symmetric, a dynamic dimension on either side gives a dynamic result;
* ``"join"``: the type both sides fit, as for the branches of an ``if``: dimensions that differ become dynamic.

A type variable (``A`` of ``fn [A](...)``) is rigid: it unifies only with itself or a hole. Calling a polymorphic
function first *instantiates* its type, replacing each type parameter with a fresh hole (:func:`instantiate`).

An operator's type relation is a forward function of its argument types. A call whose argument types still hold holes
is *deferred* (:meth:`TypeSolver.defer`); :meth:`TypeSolver.solve` runs the deferred relations whose inputs became
known until none makes progress.
"""

from ...error import TypeInferenceError
from ...ir.adt import TypeData
from ...ir.type import Any, IncompleteType, TensorType, TupleType, is_any
from ...ir.type import FuncType as MonoFuncType
from ...ir.type_poly import FuncType, RelayRefType, TypeCall, TypeVar


class UnifyError(TypeInferenceError):
    """Two types cannot be made equal; ``lhs``/``rhs`` are the innermost parts that differ."""

    def __init__(self, lhs, rhs, detail=""):
        self.lhs, self.rhs = lhs, rhs
        super().__init__(detail or f"{lhs} does not match {rhs}")


def has_holes(ttype) -> bool:
    """Whether ``ttype`` contains an IncompleteType anywhere."""
    if isinstance(ttype, TensorType):
        return False
    if isinstance(ttype, IncompleteType):
        return True
    return any(has_holes(t) for t in _parts(ttype))


def _parts(ttype) -> tuple:
    if isinstance(ttype, TupleType):
        return ttype.fields
    if isinstance(ttype, MonoFuncType):
        return (*ttype.arg_types, ttype.ret_type)
    if isinstance(ttype, TypeCall):
        return ttype.args
    if isinstance(ttype, RelayRefType):
        return (ttype.value,)
    return ()


def map_type(ttype, fn):
    """Rebuild ``ttype`` with ``fn`` applied to each leaf and variable (``fn`` returns the replacement or None to
    keep it); structure is rebuilt only where something changed."""
    out = fn(ttype)
    if out is not None:
        return out
    if isinstance(ttype, TupleType):
        fields = tuple(map_type(f, fn) for f in ttype.fields)
        return ttype if all(a is b for a, b in zip(fields, ttype.fields, strict=True)) else TupleType(fields)
    if isinstance(ttype, MonoFuncType):
        args = tuple(map_type(a, fn) for a in ttype.arg_types)
        ret = map_type(ttype.ret_type, fn)
        if ret is ttype.ret_type and all(a is b for a, b in zip(args, ttype.arg_types, strict=True)):
            return ttype
        return FuncType(args, ret, getattr(ttype, "type_params", ()), getattr(ttype, "type_constraints", ()))
    if isinstance(ttype, TypeCall):
        args = tuple(map_type(a, fn) for a in ttype.args)
        return ttype if all(a is b for a, b in zip(args, ttype.args, strict=True)) else TypeCall(ttype.func, args)
    if isinstance(ttype, RelayRefType):
        value = map_type(ttype.value, fn)
        return ttype if value is ttype.value else RelayRefType(value)
    return ttype


def bind_type_vars(ttype, mapping: dict):
    """``ttype`` with each type variable of ``mapping`` replaced by its value (type parameters of an inner
    polymorphic function type shadow the mapping)."""
    if not mapping:
        return ttype

    def replace(t):
        if isinstance(t, TypeVar):
            return mapping.get(t, t)
        if isinstance(t, FuncType) and set(t.type_params) & mapping.keys():
            inner = {k: v for k, v in mapping.items() if k not in t.type_params}
            mono = bind_type_vars(FuncType(t.arg_types, t.ret_type), inner)
            return FuncType(mono.arg_types, mono.ret_type, t.type_params, t.type_constraints)
        return None

    return map_type(ttype, replace)


def instantiate(ftype):
    """``(monomorphic function type, type arguments)``: ``ftype`` with its type parameters replaced by fresh holes."""
    params = getattr(ftype, "type_params", ())
    if not params:
        return ftype, ()
    holes = tuple(IncompleteType() for _ in params)
    inst = bind_type_vars(FuncType(ftype.arg_types, ftype.ret_type), dict(zip(params, holes, strict=True)))
    return inst, holes


def constructor_type(ctor, mod=None):
    """The polymorphic function type of a constructor: ``fn [A...](inputs) -> Data[A...]``."""
    data = getattr(ctor, "_type_data", None)
    if data is None and mod is not None and ctor.belong_to in mod:
        data = mod[ctor.belong_to]
    if not isinstance(data, TypeData):
        raise TypeInferenceError(f"constructor {ctor.name_hint} belongs to no type definition (build it into a "
                                 f"TypeData and add that to the module)")
    made = TypeCall(data.header, data.type_vars) if data.type_vars else data.header  # `nat`, not `nat[]`
    return FuncType(ctor.inputs, made, data.type_vars)


class TypeSolver:
    """Hole bindings and deferred relations for one inference (see the module docstring)."""

    def __init__(self):
        self.subst: dict = {}
        self.deferred: list = []

    # ---------------------------------------------------------------------------------------------- resolution
    def find(self, ttype):
        """``ttype`` with the binding chain of a hole followed (one level of structure only)."""
        subst = self.subst
        while isinstance(ttype, IncompleteType):
            bound = subst.get(ttype)
            if bound is None:
                return ttype
            ttype = bound
        return ttype

    def resolve(self, ttype):
        """``ttype`` with every bound hole replaced by its binding, at every depth."""
        if not self.subst or ttype is None or isinstance(ttype, TensorType):
            return ttype
        return map_type(ttype, self._resolve_hole)

    def _resolve_hole(self, ttype):
        if not isinstance(ttype, IncompleteType):
            return None
        found = self.find(ttype)
        return found if found is ttype else self.resolve(found)

    def complete(self, ttype) -> bool:
        """Whether ``ttype`` has no unbound hole."""
        return not has_holes(self.resolve(ttype))

    # ------------------------------------------------------------------------------------------------ unification
    def unify(self, lhs, rhs, mode="same"):
        """Make ``lhs`` and ``rhs`` equal, binding holes; returns the unified type or raises :class:`UnifyError`."""
        lhs, rhs = _plain(self.find(lhs)), _plain(self.find(rhs))
        if lhs is rhs:
            return lhs
        if isinstance(lhs, IncompleteType):
            return self._bind(lhs, rhs)
        if isinstance(rhs, IncompleteType):
            return self._bind(rhs, lhs)
        if isinstance(lhs, TensorType) and isinstance(rhs, TensorType):
            return _unify_tensor(lhs, rhs, mode)
        if isinstance(lhs, TupleType) and isinstance(rhs, TupleType):
            if len(lhs.fields) != len(rhs.fields):
                raise UnifyError(lhs, rhs, f"a tuple of {len(lhs.fields)} fields does not match one of "
                                           f"{len(rhs.fields)} fields: {lhs} vs {rhs}")
            fields = tuple(self.unify(a, b, mode) for a, b in zip(lhs.fields, rhs.fields, strict=True))
            return lhs if all(a is b for a, b in zip(fields, lhs.fields, strict=True)) else TupleType(fields)
        if isinstance(lhs, MonoFuncType) and isinstance(rhs, MonoFuncType):
            return self._unify_func(lhs, rhs, mode)
        if isinstance(lhs, TypeCall) and isinstance(rhs, TypeCall):
            if len(lhs.args) != len(rhs.args):
                raise UnifyError(lhs, rhs)
            func = self.unify(lhs.func, rhs.func, mode)
            return TypeCall(func, tuple(self.unify(a, b, mode) for a, b in zip(lhs.args, rhs.args, strict=True)))
        if isinstance(lhs, RelayRefType) and isinstance(rhs, RelayRefType):
            return RelayRefType(self.unify(lhs.value, rhs.value, "same"))  # a cell's contents are invariant
        # a type variable is rigid (only the very same one, handled above, unifies); data type names and primitive
        # types unify when equal
        if not isinstance(lhs, TypeVar) and lhs == rhs:
            return lhs
        raise UnifyError(lhs, rhs)

    def _bind(self, hole, ttype):
        if self._occurs(hole, ttype):
            raise UnifyError(hole, ttype, f"a type would contain itself: {ttype}")
        self.subst[hole] = ttype
        return ttype

    def _occurs(self, hole, ttype) -> bool:
        ttype = self.find(ttype)
        if ttype is hole:
            return True
        return any(self._occurs(hole, t) for t in _parts(ttype))

    def _unify_func(self, lhs, rhs, mode):
        if len(lhs.arg_types) != len(rhs.arg_types):
            raise UnifyError(lhs, rhs, f"a function of {len(lhs.arg_types)} parameters does not match one of "
                                       f"{len(rhs.arg_types)}: {lhs} vs {rhs}")
        lparams, rparams = getattr(lhs, "type_params", ()), getattr(rhs, "type_params", ())
        if len(lparams) < len(rparams):
            lhs, rhs, lparams, rparams = rhs, lhs, rparams, lparams
        # the extra type parameters of the more general side are instantiated; the rest are identified
        mapping = dict(zip(lparams, rparams, strict=False))
        mapping.update((p, IncompleteType()) for p in lparams[len(rparams):])
        mono = bind_type_vars(FuncType(lhs.arg_types, lhs.ret_type), mapping)
        args = tuple(self.unify(a, b, mode) for a, b in zip(mono.arg_types, rhs.arg_types, strict=True))
        ret = self.unify(mono.ret_type, rhs.ret_type, mode)
        return FuncType(args, ret, rparams)

    # ----------------------------------------------------------------------------------------- deferred relations
    def defer(self, inputs, output, run, stuck=None):
        """Run ``run(resolved_inputs)`` once no input holds a hole, and unify its result with ``output``;
        ``stuck()`` is the error message when the inputs never become known."""
        self.deferred.append((inputs, output, run, stuck))

    def solve(self):
        """Run the deferred relations whose inputs are known, until none makes progress; a relation left waiting
        is a :class:`~kiln.error.TypeInferenceError` (its ``stuck`` message)."""
        progress = True
        while progress and self.deferred:
            progress = False
            waiting = []
            for entry in self.deferred:
                inputs, output, run, _ = entry
                resolved = [self.resolve(t) for t in inputs]
                if any(has_holes(t) for t in resolved):
                    waiting.append(entry)
                    continue
                self.unify(output, run(resolved))
                progress = True
            self.deferred = waiting
        for _, _, _, stuck in self.deferred:
            if stuck is not None:
                self.deferred = []
                raise TypeInferenceError(stuck())


def _plain(ttype):
    """A data type applied to no arguments is the data type itself."""
    return ttype.func if isinstance(ttype, TypeCall) and not ttype.args else ttype


def _unify_tensor(lhs, rhs, mode):
    if lhs == rhs:
        return lhs
    if lhs.dtype != rhs.dtype:
        raise UnifyError(lhs, rhs, f"dtype {lhs.dtype} does not match {rhs.dtype}: {lhs} vs {rhs}")
    if len(lhs.shape) != len(rhs.shape):
        raise UnifyError(lhs, rhs, f"a tensor of rank {len(lhs.shape)} does not match one of rank {len(rhs.shape)}"
                                   f": {lhs} vs {rhs}")
    dims = []
    for i, (a, b) in enumerate(zip(lhs.shape, rhs.shape, strict=True)):
        if a == b:
            dims.append(a)
        elif is_any(a) or (is_any(b) and mode != "fits") or mode == "join":
            dims.append(a if mode == "fits" else Any())
        else:
            raise UnifyError(lhs, rhs, f"dimension {i} conflicts: {a} does not match {b} ({lhs} vs {rhs})")
    return TensorType(tuple(dims), lhs.dtype)
