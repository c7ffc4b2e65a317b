"""Defunctionalization: a higher-order program becomes a first-order one (TVM's ``defunctionalization.cc``).

Every function *value* passed to a global function is encoded as a value of an algebraic data type, one type per
function type (``DefuncFuncType<i>``): a global function ``@g`` as a constructor without fields, a lambda as a
constructor whose fields are the lambda's free variables. Calling an encoded function becomes a call of the type's
``@apply<i>(encoding, args...)``, a match with one clause per constructor that runs the function it stands for.
A higher-order global function is cloned once per instantiation of its type parameters (``@map<i>``), with its
function parameters typed by their encodings and their calls through ``apply``. A lambda applied directly is
beta-reduced.

As TVM's, it assumes functions are passed as a variable, a global function or a lambda, are not stored in data
types or let-bound, and are not returned. Unlike TVM's, different function types get different encodings (TVM keys
them by the type's kind, so all share one), and arguments that are not functions are transformed too.
"""

from ...error import KilnError
from ...ir.adt import Constructor, TypeData
from ...ir.expr import GlobalVar
from ...ir.type_poly import FuncType, GlobalTypeVar, TypeCall
from ..adt import Clause, Match, PatternConstructor, PatternVar
from ..expr import Call, Var
from ..expr_functor import ExprMutator
from ..function import Function
from ..type_functor import TypeVisitor
from .partial_eval_values import DeDup, TypeSubst, free_vars_by_vid
from .type_solver import bind_type_vars


class _FuncTypeFinder(TypeVisitor):
    def __init__(self):
        self.found = False

    def visit_func_type(self, ft):
        self.found = True


def has_func_type(ttype) -> bool:
    """Whether ``ttype`` is or contains a function type."""
    if ttype is None:
        return False
    finder = _FuncTypeFinder()
    finder.visit(ttype)
    return finder.found


def is_higher_order(ftype) -> bool:
    """Whether a function type takes or returns functions."""
    return any(has_func_type(t) for t in ftype.arg_types) or has_func_type(ftype.ret_type)


def _var_type(var):
    return var.type_annotation if var.type_annotation is not None else var.checked_type_


class _Rebind(ExprMutator):
    """Replace variables by identity (``vid``), so typed copies of a variable are replaced too."""

    def __init__(self, binds):
        super().__init__()
        self.binds = binds

    def visit_var(self, var):
        return self.binds.get(var.vid, var)


class _Defunctionalizer(ExprMutator):
    def __init__(self, mod):
        super().__init__()
        self.mod = mod
        self.type_keys: dict = {}  # str(function type) -> index naming its encoding and apply function
        self.encoded: dict = {}  # encoding GlobalTypeVar name -> the function type it stands for
        self.specialized: dict = {}  # (global name, type key) -> GlobalVar of the clone
        self.global_ctors: dict = {}  # (global name, type key) -> Constructor
        self.counter = 0

    # --- names -------------------------------------------------------------------------------------------------
    def _key(self, ftype) -> int:
        return self.type_keys.setdefault(str(ftype), len(self.type_keys))

    def encoding(self, ftype) -> GlobalTypeVar:
        gtv = GlobalTypeVar(f"DefuncFuncType{self._key(ftype)}")
        self.encoded[gtv.name_hint] = ftype
        return gtv

    def apply_function(self, ftype) -> GlobalVar:
        name = f"apply{self._key(ftype)}"
        for gv in self.mod.functions:
            if gv.name_hint == name:
                return gv
        return GlobalVar(name)

    def unencoded(self, ttype) -> FuncType:
        name = getattr(ttype.func, "name_hint", None) if isinstance(ttype, TypeCall) else None
        if name not in self.encoded:
            raise KilnError(f"Defunctionalization: {ttype} is not the encoding of a function type")
        return self.encoded[name]

    # --- module updates ----------------------------------------------------------------------------------------
    def add_constructor(self, gtv, inputs) -> Constructor:
        self.counter += 1
        existing = [d for g, d in self.mod.type_definitions.items() if g.name_hint == gtv.name_hint]
        ctors = list(existing[0].constructors) if existing else []
        ctor = Constructor(f"Defunc{self.counter}", tuple(inputs), gtv)
        self.mod.add_type_def(gtv, TypeData(gtv, (), (*ctors, ctor)))
        return ctor

    def add_apply_case(self, ftype, ctor, callee, patterns):
        gv = self.apply_function(ftype)
        if gv in self.mod:
            old = self.mod[gv]
            params = old.params
            clauses = old.body.clauses
        else:
            params = (Var("x", TypeCall(ctor.belong_to, ())), *(Var("y", t) for t in ftype.arg_types))
            clauses = ()
        clause = Clause(PatternConstructor(ctor, tuple(patterns)), Call(callee, params[1:]))
        self.mod[gv] = Function(params, Match(params[0], (*clauses, clause)), ftype.ret_type)

    # --- encoding ----------------------------------------------------------------------------------------------
    def encode_arg(self, arg, ftype):
        if not isinstance(ftype, FuncType):
            raise KilnError(f"Defunctionalization: a function nested in a {ftype} argument is not supported")
        if isinstance(arg, Var):
            return arg  # a parameter of the enclosing clone: already encoded
        if isinstance(arg, GlobalVar):
            key = (arg.name_hint, self._key(ftype))
            if key not in self.global_ctors:
                self.global_ctors[key] = ctor = self.add_constructor(self.encoding(ftype), ())
                self.add_apply_case(ftype, ctor, arg, ())
            return Call(self.global_ctors[key], ())
        if isinstance(arg, Function):
            free = free_vars_by_vid(arg)
            fresh = {v.vid: Var(v.name_hint, v.type_annotation) for v in free}
            types = [_var_type(v) for v in free]
            if any(t is None for t in types):
                raise KilnError("Defunctionalization: the program must be typed (run InferType first)")
            ctor = self.add_constructor(self.encoding(ftype), types)
            body = self.visit(_Rebind(fresh).visit(arg.body))
            self.add_apply_case(ftype, ctor, arg.with_fields(body=body), [PatternVar(fresh[v.vid]) for v in free])
            return Call(ctor, tuple(free))
        raise KilnError(f"Defunctionalization: a function argument must be a variable, a global function or a "
                        f"lambda, not a {type(arg).__name__}")

    # --- calls -------------------------------------------------------------------------------------------------
    def visit_call(self, call):
        op = call.op
        if isinstance(op, GlobalVar):
            return self._call_global(call, op)
        if isinstance(op, Function):  # a lambda applied directly: beta-reduce
            binds = {p.vid: a for p, a in zip(op.params, call.args, strict=True)}
            return self.visit(_Rebind(binds).visit(op.body))
        if isinstance(op, Var) and isinstance(op.type_annotation, TypeCall):
            ftype = _instantiate(self.unencoded(op.type_annotation), call.type_args)
            return Call(self.apply_function(ftype), (op, *(self.visit(a) for a in call.args)))
        return super().visit_call(call)

    def _call_global(self, call, gv):
        ftype = self.mod[gv].checked_type_
        if not isinstance(ftype, FuncType):
            raise KilnError(f"Defunctionalization: {gv} is not typed (run InferType first)")
        if len(call.type_args) != len(ftype.type_params):
            raise KilnError(f"Defunctionalization: the call of {gv} must give all its type arguments")
        inst = _instantiate(ftype, call.type_args)
        if has_func_type(inst.ret_type):
            raise KilnError(f"Defunctionalization: {gv} returns a function, which is not supported")
        if not is_higher_order(inst):
            return super().visit_call(call)
        args = tuple(self.encode_arg(a, t) if has_func_type(t) else self.visit(a)
                     for a, t in zip(call.args, inst.arg_types, strict=True))
        key = (gv.name_hint, self._key(inst))
        if key not in self.specialized:
            self.specialized[key] = clone_gv = GlobalVar(f"{gv.name_hint}_defunc{self._key(inst)}")
            clone = DeDup().visit(self.mod[gv])
            mapping = dict(zip(clone.type_params, call.type_args, strict=True))
            specialized = TypeSubst(mapping).visit(clone.with_fields(type_params=()))
            self.mod[clone_gv] = self.firstify(specialized)
        return Call(self.specialized[key], args)

    def firstify(self, func):
        """``func`` with its function parameters typed by their encodings and its calls of them through apply."""
        binds, params = {}, []
        for p in func.params:
            ptype = _var_type(p)
            if isinstance(ptype, FuncType):
                new = Var(p.name_hint, TypeCall(self.encoding(ptype), ()))
                binds[p.vid] = new
                params.append(new)
            elif has_func_type(ptype):
                raise KilnError(f"Defunctionalization: parameter {p.name_hint} holds a function inside a {ptype}")
            else:
                params.append(p)
        body = self.visit(_Rebind(binds).visit(func.body))
        return func.with_fields(params=tuple(params), body=body, type_params=())


def _instantiate(ftype, type_args) -> FuncType:
    """A polymorphic function type with its type parameters replaced by ``type_args``, without type parameters."""
    mapping = dict(zip(ftype.type_params, type_args, strict=True))
    return FuncType(tuple(bind_type_vars(t, mapping) for t in ftype.arg_types), bind_type_vars(ftype.ret_type, mapping))


def Defunctionalization(func, mod):  # noqa: N802  (TVM's name)
    """``func`` (the program's entry, typed, monomorphic, first-order at its boundary) made first-order; the
    encodings, apply functions and specialized clones are added to ``mod``.

    Examples
    --------
    >>> mod = relay.transform.InferType()(mod)   # doctest: +SKIP
    >>> mod["main"] = relay.transform.Defunctionalization(mod["main"], mod)
    """
    if func.type_params:
        raise KilnError("Defunctionalization: the entry function must not be polymorphic")
    if any(has_func_type(_var_type(p)) for p in func.params) or has_func_type(func.ret_type):
        raise KilnError("Defunctionalization: the entry function must neither take nor return functions")
    return _Defunctionalizer(mod).visit(func)
