"""Type inference: fills ``checked_type`` of every expression (and missing return/let types).

Types flow forward (:mod:`.type_inferencer`): a parameter's type is its annotation, a let variable's type is its
value's, an operator call's type is its type relation applied to its argument types (``FTypeRelation`` in the op
registry); what annotations leave open (unannotated parameters, type arguments of polymorphic functions, references)
is found by unification (:mod:`.type_solver`). Nodes that already carry a type are kept as they are, so re-running
inference after a pass only types the nodes that pass created.

A module's functions are typed one at a time, callees before callers; a function calling itself (or one being typed)
sees its declared signature, with holes where it has no annotation, which its body then determines.

Known limit: a call to a global function whose signature changed is not re-checked while the caller is unchanged.

The pass ``InferType`` (the first built-in pass) goes through the analysis manager of its PassContext: the typed
module is the module analysis ``"InferType"``, cached by the identities of the module's functions, so running
``InferType`` again after passes that changed nothing, or that declare ``preserves=["InferType"]``, costs a lookup.
"""

from dataclasses import dataclass

from ...error import TypeInferenceError
from ...ir.analysis import register_analysis
from ...ir.expr import RelayExpr
from ...ir.module import IRModule
from ...ir.transform import ModulePass, PassInfo, register_pass, same_contents
from ...ir.type import Any, PrimType, TensorType, TupleType, is_any
from ...ir.type_poly import FuncType, IncompleteType
from ...tir.function import PrimFunc
from ..function import Function
from .type_inferencer import KeepTyped, TypeInferencer
from .type_solver import TypeSolver, has_holes


def type_fits(expected, actual) -> bool:
    """Whether a value of type ``actual`` may stand where ``expected`` is declared: the same type, but where
    ``expected`` has a dynamic dimension (``relay.Any``) any size fits."""
    if isinstance(expected, TensorType) and isinstance(actual, TensorType):
        return expected.dtype == actual.dtype and len(expected.shape) == len(actual.shape) and all(
            is_any(e) or e == a for e, a in zip(expected.shape, actual.shape, strict=True))
    if isinstance(expected, TupleType) and isinstance(actual, TupleType):
        return len(expected.fields) == len(actual.fields) and all(
            type_fits(e, a) for e, a in zip(expected.fields, actual.fields, strict=True))
    return expected == actual


def type_join(a, b):
    """The most precise type both ``a`` and ``b`` fit (a dimension they disagree on, or one is dynamic on, is
    dynamic), or None when they differ otherwise (dtype, rank, kind)."""
    if a == b:
        return a
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        if a.dtype != b.dtype or len(a.shape) != len(b.shape):
            return None
        if any(x != y and not (is_any(x) or is_any(y)) for x, y in zip(a.shape, b.shape, strict=True)):
            return None
        return TensorType(tuple(x if x == y else Any() for x, y in zip(a.shape, b.shape, strict=True)), a.dtype)
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.fields) == len(b.fields):
        fields = [type_join(x, y) for x, y in zip(a.fields, b.fields, strict=True)]
        return None if any(f is None for f in fields) else TupleType(tuple(fields))
    return None


def _declared_type(func):
    if isinstance(func, Function) and func.ret_type is not None and all(p.type_annotation for p in func.params):
        return FuncType(tuple(p.type_annotation for p in func.params), func.ret_type, func.type_params)
    return None


def _signature(func):
    """The declared type of ``func`` with holes where it has no annotation (for calls made while it is typed)."""
    return FuncType(tuple(p.type_annotation or IncompleteType() for p in func.params),
                    func.ret_type or IncompleteType(), func.type_params)


def infer_type(mod_or_expr, mod=None):
    """Return a copy of an IRModule or expression in which every expression has ``checked_type``.

    Raises TypeInferenceError naming the operator, the expected and actual types and the source span.

    Parameters
    ----------
    mod_or_expr : IRModule or RelayExpr
        What to type.
    mod : IRModule, optional
        For an expression: the module its global functions live in (a function pass passes its module, so a
        rewritten call of a global function can be typed). Their types are read from the module, which is typed.

    Examples
    --------
    >>> x = relay.var("x", shape=(2, 3))
    >>> relay.infer_type(relay.Function([x], relay.nn.relu(x))).body.checked_type   # doctest: +SKIP
    TensorType(shape=(2, 3), dtype='float32')
    """
    if isinstance(mod_or_expr, IRModule):
        return _infer_module(mod_or_expr)
    return TypeInferencer(global_typer(mod), mod=mod).visit(mod_or_expr)


def global_typer(mod):
    """The ``global_type`` of a :class:`TypeInferencer` reading the types of ``mod``'s global functions (None
    without a module: a global function is then an error)."""
    return None if mod is None else (lambda gv: _typed_global(mod, gv))


def _typed_global(mod, gv):
    func = mod[gv.name_hint]
    ftype = getattr(func, "checked_type_", None) or _declared_type(func)
    return ftype if ftype is not None else _func_type(func)


def _infer_module(mod):
    typed: dict = {}
    signatures: dict = {}  # functions being typed -> their signature (with holes), once something calls them
    solver = TypeSolver()  # shared: a function typed while its caller is typed may bind the caller's holes

    def global_type(gv):
        gv = mod.get_global_var(gv.name_hint)
        if gv in typed:
            return _func_type(typed[gv])
        if gv in signatures:
            if signatures[gv] is None:
                signatures[gv] = _signature(mod[gv])
            return signatures[gv]
        infer(gv)
        return _func_type(typed[gv])

    def infer(gv):
        func = mod[gv]
        if not isinstance(func, Function):
            typed[gv] = func
            return
        signatures[gv] = None
        inferencer = TypeInferencer(global_type, solver=solver, mod=mod)

        def check_signature(out):
            if signatures[gv] is not None:  # the body's calls of itself assumed this signature
                inferencer.unify(signatures[gv], out.checked_type_, "same",
                                 lambda e, a, exc: f"recursive calls assume the type {e}, the function has type {a}")

        inferencer.on_typed = check_signature
        try:
            typed[gv] = inferencer.visit(func)
        except TypeInferenceError as exc:
            raise TypeInferenceError(f"in function {gv}: {exc}") from None
        finally:
            del signatures[gv]

    for gv in list(mod.functions):
        if gv not in typed:
            infer(gv)
    out = IRModule({gv: typed[gv] for gv in mod.functions}, mod.type_definitions, attrs=mod.attrs)
    out._std_imports = mod._std_imports
    return out


def _func_type(func):
    ftype = getattr(func, "checked_type_", None)
    if ftype is None and isinstance(func, PrimFunc):  # TVM's type of a PrimFunc: its parameters' primitive types
        return FuncType(tuple(PrimType(p.dtype) for p in func.params), func.ret_type or TupleType(()))
    if ftype is None:
        raise TypeInferenceError(f"global function of kind {type(func).__name__} has no Relay type")
    return ftype


def _keep_typed(result, old_mod, new_mod):
    """A pass that preserves "InferType" promises its result is typed: the typed module is that result itself."""
    return new_mod.shallow_copy()  # a private copy, so a later in-place change of new_mod cannot reach the cache


register_analysis("InferType", infer_type, scope="module", transfer=_keep_typed)


@register_pass("InferType")
@dataclass(frozen=True)
class InferType(ModulePass):
    """Fill ``checked_type`` of every expression of every Relay function (TVM's ``relay.transform.InferType``).

    Examples
    --------
    >>> mod = relay.transform.InferType()(mod)   # doctest: +SKIP
    >>> mod["main"].body.checked_type
    TensorType(shape=(2, 3), dtype='float32')
    """

    info = PassInfo(0, "InferType")

    def transform_module(self, mod, ctx):
        am = ctx.analysis_manager
        typed = am.get("InferType", mod)
        am.put("InferType", typed, typed)  # a typed module is its own typed form
        if same_contents(typed, mod):
            return mod
        return typed.shallow_copy()  # the cached module is never handed out, so nobody can change it in place


def InferTypeLocal(expr):  # noqa: N802  (TVM's name)
    """The type of ``expr`` (TVM's ``relay.transform.InferTypeLocal``): ``expr`` is typed on its own, with its free
    variables' annotations, and its ``checked_type`` returned.

    As in TVM, the types are also recorded on ``expr`` and its subexpressions (their ``checked_type`` is filled in
    place, where it was unset): ``InferTypeLocal(e); e.checked_type`` works.
    """
    inferencer = TypeInferencer()
    typed = inferencer.visit(expr)
    for node, done in inferencer.memo_map.items():
        ttype = getattr(done, "checked_type_", None)
        if isinstance(node, RelayExpr) and node.checked_type_ is None and ttype is not None:
            object.__setattr__(node, "checked_type_", ttype)  # fills a cache; structure is unchanged
    return typed.checked_type


__all__ = ["InferType", "InferTypeLocal", "KeepTyped", "TypeInferencer", "global_typer", "has_holes", "infer_type",
           "type_fits", "type_join"]
