"""Type inference: fills ``checked_type`` of every expression (and missing return/let types) bottom-up.

Types flow forward: a parameter's type is its annotation, a let variable's type is its value's, an operator call's
type is its type relation applied to its argument types (``FTypeRelation`` in the op registry). Nodes that already
carry a type are kept as they are, so re-running inference after a pass only types the nodes that pass created.

Known limit: a call to a global function whose signature changed is not re-checked while the caller is unchanged.

The pass ``InferType`` (the first built-in pass) goes through the analysis manager of its PassContext: the typed
module is the module analysis ``"InferType"``, cached by the identities of the module's functions, so running
``InferType`` again after passes that changed nothing, or that declare ``preserves=["InferType"]``, costs a lookup.
"""

from dataclasses import dataclass

from ...error import KilnError, TypeInferenceError
from ...ir.analysis import register_analysis
from ...ir.expr import GlobalVar
from ...ir.module import IRModule
from ...ir.op import Op
from ...ir.transform import ModulePass, PassInfo, register_pass, same_contents
from ...ir.type import Any, FuncType, IncompleteType, PrimType, TensorType, TupleType, is_any
from ...tir.function import PrimFunc
from ..expr_functor import ExprMutator
from ..function import Function


def _where(expr) -> str:
    return f" (at {expr.span})" if getattr(expr, "span", None) is not None else ""


class KeepTyped(ExprMutator):
    """A mutator that returns typed subexpressions as they are: a typed node's whole subtree is typed, so only
    what a pass created since the last inference is visited."""

    def prune(self, expr) -> bool:
        return getattr(expr, "checked_type_", None) is not None

    def _dispatch(self, expr):
        if getattr(expr, "checked_type_", None) is not None:
            return expr
        return super()._dispatch(expr)


class TypeInferencer(KeepTyped):
    """The mutator behind :func:`infer_type`; ``global_type`` resolves the type of a called global function."""

    def __init__(self, global_type=None):
        super().__init__()
        self.global_type = global_type

    def type_of(self, expr):
        """The type of an already visited expression."""
        if isinstance(expr, GlobalVar):
            return self._global(expr)
        if isinstance(expr, Op):
            raise TypeInferenceError(f"operator {expr.name} cannot be used as a value, only called")
        return expr.checked_type_

    def _global(self, gv):
        if self.global_type is None:
            raise TypeInferenceError(f"{gv} is used outside a module: infer the type of the whole IRModule")
        return self.global_type(gv)

    def visit_var(self, var):
        annotation = var.type_annotation
        if annotation is None or isinstance(annotation, IncompleteType):
            # a parameter left for its first use to type: see _complete_args
            return var.with_fields(checked_type_=IncompleteType())
        return var.with_fields(checked_type_=annotation)

    def visit_tuple(self, tup):
        fields = tuple(self.visit(f) for f in tup.fields)
        return tup.with_fields(fields=fields, checked_type_=TupleType(tuple(self.type_of(f) for f in fields)))

    def visit_tuple_getitem(self, item):
        value = self.visit(item.tuple_value)
        ttype = self.type_of(value)
        if not isinstance(ttype, TupleType):
            raise TypeInferenceError(f"TupleGetItem .{item.index} of a non-tuple of type {ttype}{_where(item)}")
        if not 0 <= item.index < len(ttype.fields):
            raise TypeInferenceError(f"TupleGetItem index {item.index} out of range for {ttype}{_where(item)}")
        return item.with_fields(tuple_value=value, checked_type_=ttype.fields[item.index])

    def visit_call(self, call):
        args = tuple(self.visit(a) for a in call.args)
        arg_types = [self.type_of(a) for a in args]
        if any(isinstance(t, IncompleteType) for t in arg_types):
            args, arg_types = self._complete_args(call, args, arg_types)
        if isinstance(call.op, Op):
            ret = self._op_type(call, arg_types)
            return call.with_fields(args=args, checked_type_=ret)
        callee = self.visit(call.op)
        ftype = self.type_of(callee)
        if not isinstance(ftype, FuncType):
            raise TypeInferenceError(f"cannot call a value of type {ftype}{_where(call)}")
        if len(ftype.arg_types) != len(args):
            raise TypeInferenceError(
                f"call of {_callee_name(call.op)} passes {len(args)} arguments, expected {len(ftype.arg_types)}"
                f"{_where(call)}"
            )
        for i, (expected, actual) in enumerate(zip(ftype.arg_types, arg_types, strict=True)):
            if not type_fits(expected, actual):
                raise TypeInferenceError(
                    f"call of {_callee_name(call.op)}: argument {i} expected {expected}, actual {actual}{_where(call)}"
                )
        return call.with_fields(op=callee, args=args, checked_type_=ftype.ret_type)

    def _complete_args(self, call, args, arg_types):
        """Type the untyped parameters among ``args`` by what the called operator requires of them (its
        ``FInferArgTypes``: a convolution's weight from the data and the attributes), as TVM's solver does; every
        later use of such a parameter sees the type found here."""
        unknown = [i for i, t in enumerate(arg_types) if isinstance(t, IncompleteType)]
        complete = call.op.get_attr("FInferArgTypes") if isinstance(call.op, Op) else None
        names = ", ".join(f"%{args[i].name_hint}" for i in unknown if hasattr(args[i], "name_hint"))
        if complete is None:
            raise TypeInferenceError(f"variable {names or 'argument'} has no type annotation and "
                                     f"{_callee_name(call.op)} cannot infer one{_where(call)}")
        try:
            found = complete([None if isinstance(t, IncompleteType) else t for t in arg_types], call.attrs)
        except (TypeInferenceError, KilnError) as exc:
            raise TypeInferenceError(f"{call.op.name}: cannot infer the type of {names}: {exc}{_where(call)}") from None
        args, arg_types = list(args), list(arg_types)
        for i in unknown:
            typed = args[i].with_fields(checked_type_=found[i])
            if getattr(typed, "type_annotation", IncompleteType()) is None:
                # TVM's InferType writes the inferred type into a missing annotation
                typed = args[i].with_fields(type_annotation=found[i], checked_type_=found[i])
            for original, seen in list(self.memo_map.items()):  # the parameter, wherever it was visited
                if seen is args[i]:
                    self.memo_map[original] = typed
            args[i], arg_types[i] = typed, found[i]
        return tuple(args), arg_types

    def _op_type(self, call, arg_types):
        op = call.op
        relation = op.get_attr("FTypeRelation")
        if relation is None:
            raise TypeInferenceError(f"operator {op.name} has no type relation{_where(call)}")
        expected = op.get_attr("num_inputs")
        if expected is not None and len(arg_types) != expected:
            raise TypeInferenceError(f"{op.name} expects {expected} arguments, got {len(arg_types)}{_where(call)}")
        attrs_type = op.get_attr("attrs_type")
        if attrs_type is not None and not isinstance(call.attrs, attrs_type):
            raise TypeInferenceError(
                f"{op.name} needs attrs of type {attrs_type.__name__}, got {type(call.attrs).__name__}{_where(call)}"
            )
        try:
            return relation(arg_types, call.attrs)
        except (TypeInferenceError, KilnError) as exc:
            shown = ", ".join(str(t) for t in arg_types)
            raise TypeInferenceError(f"{op.name}: {exc}; argument types: ({shown}){_where(call)}") from None

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        bindings = []
        for binding in chain:
            var = binding.var
            if var.type_annotation is not None:  # lets a recursive closure refer to itself
                self.memo_map[var] = var.with_fields(checked_type_=var.type_annotation)
            value = self.visit(binding.value)
            vtype = self.type_of(value)
            if var.type_annotation is not None and not type_fits(var.type_annotation, vtype):
                raise TypeInferenceError(
                    f"let %{var.name_hint}: annotation expected {var.type_annotation}, actual value type {vtype}"
                    f"{_where(binding)}"
                )
            new_var = self.memo_map.get(var) or var.with_fields(type_annotation=vtype, checked_type_=vtype)
            self.memo_map[var] = new_var
            bindings.append((new_var, value))
        result = self.visit(body)
        for binding, (new_var, value) in zip(reversed(chain), reversed(bindings), strict=True):
            result = binding.with_fields(var=new_var, value=value, body=result, checked_type_=self.type_of(result))
            self.memo_map[binding] = result
        return result

    def visit_if(self, node):
        cond = self.visit(node.cond)
        ctype = self.type_of(cond)
        if not (isinstance(ctype, TensorType) and ctype.shape == () and ctype.dtype == "bool"):
            raise TypeInferenceError(f"if condition expected bool, actual {ctype}{_where(node)}")
        then, other = self.visit(node.true_branch), self.visit(node.false_branch)
        ttype, etype = self.type_of(then), self.type_of(other)
        joined = type_join(ttype, etype)
        if joined is None:
            raise TypeInferenceError(f"if branches differ: true branch {ttype}, false branch {etype}{_where(node)}")
        return node.with_fields(cond=cond, true_branch=then, false_branch=other, checked_type_=joined)

    def visit_function(self, fn):
        for p in fn.params:
            self.visit(p)
        body = self.visit(fn.body)
        params = tuple(self.visit(p) for p in fn.params)  # typed by their uses where they had no annotation
        for p in params:
            if isinstance(p.checked_type_, IncompleteType):
                raise TypeInferenceError(f"parameter %{p.name_hint} has no type annotation and no operator it is "
                                         f"passed to determines one{_where(p)}")
        btype = self.type_of(body)
        if fn.ret_type is not None and not type_fits(fn.ret_type, btype):
            raise TypeInferenceError(f"function return type expected {fn.ret_type}, actual {btype}{_where(fn)}")
        # a declared dynamic result stays dynamic (a recursive function's calls were typed with it)
        ret = fn.ret_type if fn.ret_type is not None and type_join(fn.ret_type, btype) == fn.ret_type else btype
        ftype = FuncType(tuple(p.checked_type_ for p in params), ret)
        return fn.with_fields(params=params, body=body, ret_type=ret, checked_type_=ftype)


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


def _callee_name(op) -> str:
    if isinstance(op, Op):
        return op.name
    return str(op) if isinstance(op, GlobalVar) else f"a {type(op).__name__}"


def _declared_type(func):
    if isinstance(func, Function) and func.ret_type is not None and all(p.type_annotation for p in func.params):
        return FuncType(tuple(p.type_annotation for p in func.params), func.ret_type)
    return None


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
    return TypeInferencer(global_typer(mod)).visit(mod_or_expr)


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
    in_progress: set = set()

    def global_type(gv):
        gv = mod.get_global_var(gv.name_hint)
        if gv in typed:
            return _func_type(typed[gv])
        func = mod[gv]
        if gv in in_progress:
            declared = _declared_type(func)
            if declared is None:
                raise TypeInferenceError(f"recursive function {gv} needs annotated parameter and return types")
            return declared
        infer(gv)
        return _func_type(typed[gv])

    def infer(gv):
        func = mod[gv]
        if not isinstance(func, Function):
            typed[gv] = func
            return
        in_progress.add(gv)
        try:
            typed[gv] = TypeInferencer(global_type).visit(func)
        except TypeInferenceError as exc:
            raise TypeInferenceError(f"in function {gv}: {exc}") from None
        finally:
            in_progress.discard(gv)

    for gv in list(mod.functions):
        if gv not in typed:
            infer(gv)
    return IRModule({gv: typed[gv] for gv in mod.functions}, attrs=mod.attrs)


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
    variables' annotations, and its ``checked_type`` returned."""
    return infer_type(expr).checked_type
