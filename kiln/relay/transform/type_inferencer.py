"""The mutator behind type inference: types every expression in one forward walk, with unification for the rest.

How it works. ``TypeInferencer.visit(expr)`` walks ``expr`` bottom-up (the memoized, iterative ExprMutator walk) and
rebuilds each node with its ``checked_type``. Types flow forward: a parameter's type is its annotation, a let
variable's its value's, an operator call's its type relation applied to its argument types, a call of a function
its (instantiated) return type. Where a type is not known yet (a parameter without annotation, a let-bound closure
that calls itself, the type arguments of a polymorphic function, a reference read before it is written) a hole is
made and unified (:mod:`.type_solver`) with what the uses say; an operator call whose argument types still hold
holes is deferred until they are known.

When the walk made holes, two more steps run before ``visit`` returns: the solver runs the deferred relations, and a
second walk (:class:`_Resolver`) rebuilds the nodes built in the first one with their holes filled, reporting any
hole left as a :class:`~kiln.error.TypeInferenceError` that names the variable or expression. Programs whose
variables are all annotated (every program kiln's frontends and passes build) make no hole and skip both.

Nodes that already carry a type are kept as they are (:class:`KeepTyped`), so re-running inference after a pass
only types the nodes that pass created.
"""

from ...error import KilnError, TypeInferenceError
from ...ir.adt import Constructor
from ...ir.expr import GlobalVar
from ...ir.op import Op
from ...ir.type import FuncType as MonoFuncType
from ...ir.type import IncompleteType, TensorType, TupleType
from ...ir.type_poly import FuncType, RelayRefType
from ..adt import PatternConstructor, PatternTuple, PatternVar
from ..analysis.match_exhaustion import pattern_text, unmatched_cases
from ..expr import Call, Var
from ..expr_functor import ExprMutator
from ..function import Function
from .type_solver import TypeSolver, UnifyError, constructor_type, has_holes, instantiate

_BOOL = TensorType((), "bool")


def where(expr) -> str:
    """`` (at file:line:col)`` for an expression with a span, else the empty string."""
    return f" (at {expr.span})" if getattr(expr, "span", None) is not None else ""


def callee_name(op) -> str:
    """How a callee is named in messages."""
    if isinstance(op, Op):
        return op.name
    if isinstance(op, GlobalVar):
        return str(op)
    if isinstance(op, Constructor):
        return f"constructor {op.name_hint}"
    return f"a {type(op).__name__}"


def _names(args, indices) -> str:
    """``%a, %b``: the variables among ``args[indices]`` (or "argument" when none is a variable)."""
    return ", ".join(f"%{args[i].name_hint}" for i in indices if isinstance(args[i], Var)) or "argument"


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
    """See the module docstring. ``global_type(gv)`` gives the type of a called global function; ``mod`` the
    module whose type definitions constructors refer to; ``solver`` may be shared by the functions of a module."""

    def __init__(self, global_type=None, solver=None, mod=None):
        super().__init__()
        self.global_type = global_type
        self.mod = mod
        self.solver = solver if solver is not None else TypeSolver()
        self.on_typed = None  # called with the root's typed form before holes are resolved (module inference)
        self._depth = 0
        self._uncertain = False  # a hole appeared: resolve before returning
        self._created: set = set()
        self._let_vars: set = set()  # unannotated variables typed through a hole: annotated when resolved

    # ------------------------------------------------------------------------------------------------ driving
    def visit(self, expr):
        """Type ``expr``; at the outermost call, holes are solved and filled before returning."""
        if self._depth:
            return super().visit(expr)
        self._depth = 1
        bindings = len(self.solver.subst)
        try:
            out = super().visit(expr)
            if self.on_typed is not None:
                self.on_typed(out)
            if self._uncertain or len(self.solver.subst) != bindings or self.solver.deferred:
                out = self._finish(out)
        finally:
            self._depth = 0
        return out

    def _dispatch(self, expr):
        out = super()._dispatch(expr)
        if out is not expr:
            self._created.add(out)
        return out

    def _finish(self, out):
        self.solver.solve()
        resolver = _Resolver(self)
        out = resolver.visit(out)
        resolved = resolver.memo_map
        memo = self.memo_map
        for key, value in memo.items():
            memo[key] = resolved.get(value, value)
        self._created = set(resolved.values())
        self._uncertain = False
        return out

    def hole(self):
        """A fresh hole."""
        self._uncertain = True
        return IncompleteType()

    def unify(self, expected, actual, mode, message):
        """Unify, or raise TypeInferenceError with ``message(expected, actual)`` on the resolved types."""
        try:
            return self.solver.unify(expected, actual, mode)
        except UnifyError as exc:
            resolve = self.solver.resolve
            raise TypeInferenceError(message(resolve(expected), resolve(actual), exc)) from None

    def type_of(self, expr):
        """The type of an already visited expression."""
        if isinstance(expr, GlobalVar):
            return self._global(expr)
        if isinstance(expr, Op):
            raise TypeInferenceError(f"operator {expr.name} cannot be used as a value, only called")
        if isinstance(expr, Constructor):
            return constructor_type(expr, self.mod)
        return expr.checked_type_

    def _global(self, gv):
        if self.global_type is None:
            raise TypeInferenceError(f"{gv} is used outside a module: infer the type of the whole IRModule")
        ftype = self.global_type(gv)
        if has_holes(ftype):
            self._uncertain = True
        return ftype

    # ---------------------------------------------------------------------------------------------- expressions
    def visit_var(self, var):
        ann = var.type_annotation
        if ann is None:  # its type follows from its uses; it becomes its annotation, as TVM's InferType does
            typed = var.with_fields(checked_type_=self.hole())
            self._let_vars.add(typed)
            return typed
        if not isinstance(ann, TensorType) and has_holes(ann):
            self._uncertain = True
        return var.with_fields(checked_type_=ann)

    def visit_constructor(self, ctor):
        return ctor

    def visit_tuple(self, tup):
        fields = tuple(self.visit(f) for f in tup.fields)
        return tup.with_fields(fields=fields, checked_type_=TupleType(tuple(self.type_of(f) for f in fields)))

    def visit_tuple_getitem(self, item):
        value = self.visit(item.tuple_value)
        ttype = self.solver.find(self.type_of(value))
        if isinstance(ttype, IncompleteType):
            out = self.hole()
            self.solver.defer([ttype], out, lambda types: self._field_type(item, types[0]))
            return item.with_fields(tuple_value=value, checked_type_=out)
        return item.with_fields(tuple_value=value, checked_type_=self._field_type(item, ttype))

    @staticmethod
    def _field_type(item, ttype):
        if not isinstance(ttype, TupleType):
            raise TypeInferenceError(f"TupleGetItem .{item.index} of a non-tuple of type {ttype}{where(item)}")
        if not 0 <= item.index < len(ttype.fields):
            raise TypeInferenceError(f"TupleGetItem index {item.index} out of range for {ttype}{where(item)}")
        return ttype.fields[item.index]

    def visit_call(self, call):
        args = tuple(self.visit(a) for a in call.args)
        arg_types = tuple(self.type_of(a) for a in args)
        if isinstance(call.op, Op):
            resolved = self._complete_args(call, args, [self.solver.resolve(t) for t in arg_types])
            if any(not isinstance(t, TensorType) and has_holes(t) for t in resolved):
                ret = self.hole()
                self.solver.defer(arg_types, ret, lambda types: self._op_type(call, types),
                                  lambda: self._stuck(call, args))
            else:
                ret = self._op_type(call, resolved)
            return call.with_fields(args=args, type_args=arg_types, checked_type_=ret)
        callee = self.visit(call.op)
        name = callee_name(call.op)
        ftype = self.solver.find(self.type_of(callee))
        type_args: tuple = ()
        if isinstance(ftype, IncompleteType):  # a variable of unknown type called: it is a function of these args
            ftype = self.unify(ftype, FuncType(arg_types, self.hole()), "same",
                               lambda e, a, exc: f"cannot call {name} of type {e}{where(call)}")
        if not isinstance(ftype, MonoFuncType):
            raise TypeInferenceError(f"cannot call a value of type {ftype}{where(call)}")
        ftype, type_args = self._instantiate(ftype, call)
        if len(ftype.arg_types) != len(args):
            raise TypeInferenceError(f"call of {name} passes {len(args)} arguments, expected "
                                     f"{len(ftype.arg_types)}{where(call)}")
        for i, (expected, actual) in enumerate(zip(ftype.arg_types, arg_types, strict=True)):
            self.unify(expected, actual, "fits",
                       lambda e, a, exc, i=i: f"call of {name}: argument {i} expected {e}, actual {a}{where(call)}")
        return call.with_fields(op=callee, args=args, type_args=type_args, checked_type_=ftype.ret_type)

    def _instantiate(self, ftype, call):
        params = getattr(ftype, "type_params", ())
        if not params:
            return ftype, ()
        inst, holes = instantiate(ftype)
        self._uncertain = True
        given = call.type_args
        if len(given) > len(params):
            raise TypeInferenceError(f"call of {callee_name(call.op)} gives {len(given)} type arguments, the function "
                                     f"has {len(params)} type parameters{where(call)}")
        for hole, arg in zip(holes, given, strict=False):
            self.solver.unify(hole, arg)
        return inst, holes

    def _complete_args(self, call, args, arg_types):
        """Type the arguments whose type is unknown by what the operator requires of them (its ``FInferArgTypes``:
        a convolution's weight from the data and the attributes), as TVM's solver does; the holes are bound, so
        every other use of such a variable sees the type found here."""
        unknown = [i for i, t in enumerate(arg_types) if isinstance(t, IncompleteType)]
        complete = call.op.get_attr("FInferArgTypes") if unknown else None
        if complete is None or any(has_holes(t) for i, t in enumerate(arg_types) if i not in unknown):
            return arg_types
        try:
            found = complete([None if i in unknown else t for i, t in enumerate(arg_types)], call.attrs)
        except (TypeInferenceError, KilnError) as exc:
            raise TypeInferenceError(f"{call.op.name}: cannot infer the type of {_names(args, unknown)}: {exc}"
                                     f"{where(call)}") from None
        for i in unknown:
            self.solver.unify(arg_types[i], found[i])
        return [self.solver.resolve(t) for t in arg_types]

    def _stuck(self, call, args):
        """The error for an operator call whose argument types stayed unknown."""
        unknown = [i for i, a in enumerate(args) if not self.solver.complete(self.type_of(a))]
        return (f"variable {_names(args, unknown)} has no type annotation and {call.op.name} cannot infer one"
                f"{where(call)}")

    def _op_type(self, call, arg_types):
        op = call.op
        relation = op.get_attr("FTypeRelation")
        if relation is None:
            raise TypeInferenceError(f"operator {op.name} has no type relation{where(call)}")
        expected = op.get_attr("num_inputs")
        if expected is not None and len(arg_types) != expected:
            raise TypeInferenceError(f"{op.name} expects {expected} arguments, got {len(arg_types)}{where(call)}")
        attrs_type = op.get_attr("attrs_type")
        if attrs_type is not None and not isinstance(call.attrs, attrs_type):
            raise TypeInferenceError(
                f"{op.name} needs attrs of type {attrs_type.__name__}, got {type(call.attrs).__name__}{where(call)}"
            )
        try:
            return relation(list(arg_types), call.attrs)
        except (TypeInferenceError, KilnError) as exc:
            shown = ", ".join(str(t) for t in arg_types)
            raise TypeInferenceError(f"{op.name}: {exc}; argument types: ({shown}){where(call)}") from None

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        bindings = []
        memo = self.memo_map
        for binding in chain:
            var = binding.var
            new_var = memo.get(var)
            if new_var is None and (var.type_annotation is not None or isinstance(binding.value, Function)):
                new_var = self.visit(var)  # in scope in its value: a closure may call itself
                if var.type_annotation is None:
                    self._let_vars.add(new_var)
            value = self.visit(binding.value)
            vtype = self.type_of(value)
            if new_var is None:
                new_var = var.with_fields(type_annotation=vtype, checked_type_=vtype)
                if not isinstance(vtype, TensorType) and has_holes(vtype):
                    self._let_vars.add(new_var)
                memo[var] = new_var
                self._created.add(new_var)
            else:
                self.unify(new_var.checked_type_, vtype, "fits",
                           lambda e, a, exc, v=var, b=binding: f"let %{v.name_hint}: annotation expected {e}, "
                                                               f"actual value type {a}{where(b)}")
            bindings.append((new_var, value))
        result = self.visit(body)
        for binding, (new_var, value) in zip(reversed(chain), reversed(bindings), strict=True):
            result = binding.with_fields(var=new_var, value=value, body=result, checked_type_=self.type_of(result))
            memo[binding] = result
            self._created.add(result)
        return result

    def visit_if(self, node):
        cond = self.visit(node.cond)
        ctype = self.solver.find(self.type_of(cond))
        if isinstance(ctype, IncompleteType):
            self.solver.unify(ctype, _BOOL)
        elif ctype != _BOOL:
            raise TypeInferenceError(f"if condition expected bool, actual {ctype}{where(node)}")
        then, other = self.visit(node.true_branch), self.visit(node.false_branch)
        joined = self.join(self.type_of(then), self.type_of(other),
                           lambda t, e: f"if branches differ: true branch {t}, false branch {e}{where(node)}")
        return node.with_fields(cond=cond, true_branch=then, false_branch=other, checked_type_=joined)

    def join(self, a, b, message):
        """The type both ``a`` and ``b`` fit: dimensions they disagree on become dynamic."""
        return self.unify(a, b, "join", lambda x, y, exc: message(x, y))

    def visit_function(self, fn):
        params = tuple(self.visit(p) for p in fn.params)
        body = self.visit(fn.body)
        btype = self.type_of(body)
        found = self.solver.find(btype)
        if getattr(found, "type_params", ()):  # a polymorphic result is returned at fresh type arguments
            btype, _ = instantiate(found)
            self._uncertain = True
        ret = btype
        if fn.ret_type is not None:
            self.unify(fn.ret_type, btype, "fits",
                       lambda e, a, exc: f"function return type expected {e}, actual {a}{where(fn)}")
            ret = fn.ret_type
        ftype = FuncType(tuple(self.type_of(p) for p in params), ret, fn.type_params)
        return fn.with_fields(params=params, body=body, ret_type=ret, checked_type_=ftype)

    # --------------------------------------------------------------------------------------------- references
    def visit_ref_create(self, ref):
        value = self.visit(ref.value)
        return ref.with_fields(value=value, checked_type_=RelayRefType(self.type_of(value)))

    def _cell_type(self, ref, node, what):
        rtype = self.solver.find(self.type_of(ref))
        if isinstance(rtype, RelayRefType):
            return rtype.value
        cell = self.hole()
        self.unify(rtype, RelayRefType(cell), "same",
                   lambda e, a, exc: f"{what} of a value of type {e}, which is not a reference{where(node)}")
        return cell

    def visit_ref_read(self, node):
        ref = self.visit(node.ref)
        return node.with_fields(ref=ref, checked_type_=self._cell_type(ref, node, "ref_read"))

    def visit_ref_write(self, node):
        ref, value = self.visit(node.ref), self.visit(node.value)
        cell = self._cell_type(ref, node, "ref_write")
        self.unify(cell, self.type_of(value), "same",
                   lambda e, a, exc: f"ref_write of a value of type {a} into a reference of {e}{where(node)}")
        return node.with_fields(ref=ref, value=value, checked_type_=TupleType(()))

    # ------------------------------------------------------------------------------------------ pattern matching
    def visit_match(self, match):
        data = self.visit(match.data)
        dtype = self.type_of(data)
        clauses, out = [], None
        for clause in match.clauses:
            lhs = self._type_pattern(clause.lhs, dtype, match)
            rhs = self.visit(clause.rhs)
            rtype = self.type_of(rhs)
            out = rtype if out is None else self.join(
                out, rtype, lambda a, b: f"match clauses differ: {a} and {b}{where(match)}")
            clauses.append(clause.with_fields(lhs=lhs, rhs=rhs))
        if match.complete:
            missing = unmatched_cases(match, self.mod)
            if missing:
                raise TypeInferenceError(f"match is not complete: no clause handles "
                                         f"{', '.join(pattern_text(p) for p in missing)}{where(match)} "
                                         f"(add the cases, or write `match?` for a partial match)")
        return match.with_fields(data=data, clauses=tuple(clauses), checked_type_=out or self.hole())

    def _type_pattern(self, pattern, expected, match):
        if isinstance(pattern, PatternVar):
            var = self.visit(pattern.var)
            self.unify(var.checked_type_, expected, "same",
                       lambda e, a, exc: f"pattern variable %{var.name_hint} of type {e} cannot match a value of "
                                         f"type {a}{where(match)}")
            return pattern.with_fields(var=var)
        if isinstance(pattern, PatternConstructor):
            ctor = pattern.constructor
            if len(pattern.patterns) != len(ctor.inputs):
                raise TypeInferenceError(f"pattern {ctor.name_hint} gives {len(pattern.patterns)} sub-patterns, the "
                                         f"constructor has {len(ctor.inputs)} fields{where(match)}")
            inst, holes = instantiate(constructor_type(ctor, self.mod))
            self._uncertain = self._uncertain or bool(holes)
            self.unify(inst.ret_type, expected, "same",
                       lambda e, a, exc: f"pattern {ctor.name_hint} makes values of type {e}, the matched value has "
                                         f"type {a}{where(match)}")
            subs = tuple(self._type_pattern(p, t, match) for p, t in zip(pattern.patterns, inst.arg_types,
                                                                          strict=True))
            return pattern.with_fields(patterns=subs)
        if isinstance(pattern, PatternTuple):
            found = self.solver.find(expected)
            if isinstance(found, TupleType) and len(found.fields) == len(pattern.patterns):
                fields = found.fields
            else:
                fields = tuple(self.hole() for _ in pattern.patterns)
                self.unify(TupleType(fields), expected, "same",
                           lambda e, a, exc: f"a tuple pattern of {len(fields)} fields cannot match a value of type "
                                             f"{a}{where(match)}")
            return pattern.with_fields(patterns=tuple(self._type_pattern(p, t, match)
                                                      for p, t in zip(pattern.patterns, fields, strict=True)))
        return pattern


class _Resolver(ExprMutator):
    """Rebuilds the nodes an inferencer built, with their holes filled; a hole left is an error."""

    def __init__(self, inferencer):
        super().__init__()
        self.created = inferencer._created
        self.let_vars = inferencer._let_vars
        self.solver = inferencer.solver

    def prune(self, expr) -> bool:
        return expr not in self.created

    def _dispatch(self, expr):
        if expr not in self.created:
            return expr
        return self._typed(expr, super()._dispatch(expr))

    def _resolved(self, ttype, expr):
        resolved = self.solver.resolve(ttype)
        if resolved is not None and not isinstance(resolved, TensorType) and has_holes(resolved):
            if isinstance(expr, Var):
                raise TypeInferenceError(f"variable %{expr.name_hint} has no type annotation and its type cannot be "
                                         f"inferred from its uses (only {resolved} is known){where(expr)}")
            what = f"call of {expr.op.name}" if isinstance(expr, Call) and isinstance(expr.op, Op) else \
                f"{type(expr).__name__}"
            raise TypeInferenceError(f"cannot infer the type of this {what}: only {resolved} is known{where(expr)}"
                                     f" (annotate the variables it depends on)")
        return resolved

    def _typed(self, old, new):
        changes = {"checked_type_": self._resolved(old.checked_type_, old)}
        if isinstance(old, Var) and (old in self.let_vars or (old.type_annotation is not None and not isinstance(
                old.type_annotation, TensorType) and has_holes(old.type_annotation))):
            changes["type_annotation"] = changes["checked_type_"]
        elif isinstance(old, Call) and old.type_args:
            changes["type_args"] = tuple(self._resolved(t, old) for t in old.type_args)
        elif isinstance(old, Function) and old.ret_type is not None:
            changes["ret_type"] = self._resolved(old.ret_type, old)
        return new.with_fields(**changes)

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        bindings = [(self.visit(b.var), self.visit(b.value)) for b in chain]
        result = self.visit(body)
        for binding, (var, value) in zip(reversed(chain), reversed(bindings), strict=True):
            rebuilt = binding.with_fields(var=var, value=value, body=result)
            result = self._typed(binding, rebuilt) if binding in self.created else rebuilt
            self.memo_map[binding] = result
        return result


__all__ = ["KeepTyped", "TypeInferencer", "callee_name", "where"]
