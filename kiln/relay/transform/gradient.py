"""Reverse-mode automatic differentiation of Relay functions (TVM's ``relay.transform.gradient`` and
``FirstOrderGradient``).

``gradient(f)`` turns ``fn (x1, ..., xn) -> T`` into ``fn (x1, ..., xn) -> (T, (dx1, ..., dxn))``: the original
result paired with the gradient of (the sum of) the result with respect to each parameter.

How it works (a tape, built at compile time). The forward walk visits the function's dataflow graph in post-order
and emits one let binding per value, remembering for each a *node*: its bound variable, its type, and how its
adjoint flows back to its operands (an operator's registered ``FPrimalGradient``, a tuple's fields, a projection's
tuple). Let-bound variables are aliases of their values' nodes; a call of a function literal, or of a global
function of ``mod``, is differentiated through its body in a fresh scope (inlined, so two calls of one function get
separate tapes). The backward walk then seeds the result's adjoint with ones and visits the nodes in reverse
order, emitting the bindings that compute each operand's adjoint from its user's. Adjoints start as "zero" (no
expression at all) and are summed only when a second contribution arrives, so values whose gradient is zero cost
nothing; the adjoint of a tuple is kept per field. Values of integer or boolean type carry no gradient: functions
into them are piecewise constant, so their derivative is zero and the ops that make them need no gradient.

An operator's gradient receives the forward call with let-bound arguments; where it names the call itself (``exp``'s
gradient is ``grad * orig``), the call is replaced by its bound variable, so nothing is computed twice.

``mode="higher_order"`` (TVM's default) differs from ``"first_order"`` in what it accepts and in its seed: TVM
seeds only the first tensor of a tuple result, and requires tensor parameters. kiln differentiates the programs
both modes share with the tape above, in either mode (its result has no references, so every executor runs it);
programs only higher-order AD can express (references, recursion, closures passed as values, data types) go to
the reference-based transformation of :mod:`.gradient_higher` in higher-order mode, and are rejected with an
error naming the construct in first-order mode. An ``if`` is differentiated
without references: its backward is an ``if`` too, whose branches recompute their forward values (a branch's
intermediate values do not outlive it) and return the adjoints of the outer variables they read.
"""

from dataclasses import dataclass

from ...error import KilnError, TypeInferenceError
from ...ir.expr import GlobalVar, RelayExpr
from ...ir.module import IRModule
from ...ir.op import Op
from ...ir.transform import ModulePass, PassInfo, register_pass
from ...ir.type import TensorType, TupleType
from ..analysis.free_vars import free_vars
from ..expr import Call, Constant, If, Let, Tuple, TupleGetItem, Var
from ..expr_functor import ExprMutator
from ..function import Function
from .infer_type import infer_type

MODES = ("higher_order", "first_order")


class HigherOrderOnly(KilnError):
    """A construct only higher-order AD (with references) differentiates: references, closures as values,
    recursion, data types."""


def _is_float(dtype) -> bool:
    return str(dtype).startswith(("float", "bfloat"))


def _carries_grad(ty) -> bool:
    """Whether a value of type ``ty`` has a non-zero derivative at all (some floating-point tensor in it)."""
    if isinstance(ty, TensorType):
        return _is_float(ty.dtype)
    if isinstance(ty, TupleType):
        return any(_carries_grad(f) for f in ty.fields)
    return False


class _Node:
    """A value of the forward program: its atomic expression, its type, and its adjoint so far (None: zero; an
    expression; for a tuple, a list with one adjoint per field)."""

    __slots__ = ("value", "type", "requires_grad", "adjoint", "backward")

    def __init__(self, value, ty, requires_grad, backward=None):
        self.value = value
        self.type = ty
        self.requires_grad = requires_grad
        self.adjoint = None
        self.backward = backward


class _Replace(ExprMutator):
    """Replaces one node (by identity) with another everywhere in an expression."""

    def __init__(self, old, new):
        super().__init__()
        self.memo_map[old] = new


class _Tape:
    """The let bindings emitted so far and the nodes whose adjoints flow back, in forward order."""

    def __init__(self, mod):
        self.mod = mod
        self.bindings: list = []
        self.nodes: list = []
        self.inlining: list = []  # the global functions being differentiated through, innermost last

    # -- emitting bindings ------------------------------------------------------------------------------------------
    def push(self, expr, ty=None, name="v"):
        """``expr`` bound to a fresh variable (atoms are returned as they are)."""
        if isinstance(expr, Var | Constant):
            return expr
        var = Var(f"{name}{len(self.bindings)}", ty, checked_type_=ty)
        self.bindings.append((var, expr))
        return var

    def node(self, expr, ty, requires_grad, backward=None, name="v"):
        node = _Node(self.push(expr, ty, name), ty, requires_grad, backward)
        if requires_grad:
            self.nodes.append(node)
        return node

    # -- the forward walk -------------------------------------------------------------------------------------------
    def forward(self, expr, env):
        """The node of ``expr``; ``env`` maps the variables in scope (and, as a memo, the visited expressions of
        this scope) to nodes. Dataflow operands are visited first with an explicit stack (no deep recursion)."""
        stack = [(expr, False)]
        while stack:
            e, ready = stack.pop()
            if e in env:
                continue
            children = self._operands(e)
            if ready or not children:
                env[e] = self._visit(e, env)
                continue
            stack.append((e, True))
            stack.extend((c, False) for c in reversed(children) if c not in env)
        return env[expr]

    @staticmethod
    def _operands(e):
        if isinstance(e, Call):
            return e.args
        if isinstance(e, Tuple):
            return e.fields
        if isinstance(e, TupleGetItem):
            return (e.tuple_value,)
        return ()

    def _visit(self, e, env):
        if isinstance(e, Var):
            raise KilnError(f"gradient: free variable %{e.name_hint} is not bound in the function")
        if isinstance(e, Constant):
            return _Node(e, e.checked_type, False)
        if isinstance(e, Tuple):
            return self._tuple(e, [env[f] for f in e.fields])
        if isinstance(e, TupleGetItem):
            return self._tuple_getitem(e, env[e.tuple_value])
        if isinstance(e, Call):
            return self._call(e, [env[a] for a in e.args], env)
        if isinstance(e, Let):
            return self._let(e, env)
        if isinstance(e, If):
            return self._if(e, env)
        if isinstance(e, Function):
            raise HigherOrderOnly("gradient: a function used as a value (a closure) needs higher-order AD; only "
                                  "functions that are called directly can be differentiated")
        raise HigherOrderOnly(f"gradient: first-order AD cannot differentiate a {type(e).__name__} (use "
                              f"mode='higher_order')")

    def _if(self, node, env):
        """``if`` as a value: each branch's forward program inside the branch. Its backward is another ``if``
        whose branches compute their branch again, send the adjoint back through it, and return the adjoints of
        the outer variables the branches read (a tuple, zeros where a branch does not read one)."""
        cond = self.forward(node.cond, env)
        outer = [v for v in dict.fromkeys(free_vars(node.true_branch) + free_vars(node.false_branch))
                 if v in env and env[v].requires_grad]
        ty = node.checked_type
        forward = If(cond.value, self._branch(node.true_branch, env, outer)[0],
                     self._branch(node.false_branch, env, outer)[0])
        requires = bool(outer) and _carries_grad(ty)

        def backward(result):
            grad = self.push(self.materialize(ty, result.adjoint, result.value), name="dif")
            grads = self.push(If(cond.value, self._branch(node.true_branch, env, outer, grad)[1],
                                 self._branch(node.false_branch, env, outer, grad)[1]), name="dbranch")
            for i, v in enumerate(outer):
                self.accumulate(env[v], TupleGetItem(grads, i))

        return self.node(forward, ty, requires, backward, "if")

    def _branch(self, expr, env, outer, grad=None):
        """A branch on a tape of its own: ``(its forward program, its backward program)``; the backward one
        (built when ``grad``, the adjoint of the ``if``, is given) returns the adjoints of ``outer``."""
        tape = _Tape(self.mod)
        tape.inlining = self.inlining
        scope = {v: n for v, n in env.items() if isinstance(v, Var)}
        proxies = []
        for v in outer:  # the outer variables as leaves of the branch's tape, collecting their adjoints
            scope[v] = proxy = _Node(env[v].value, env[v].type, True)
            tape.nodes.append(proxy)
            proxies.append(proxy)
        result = tape.forward(expr, scope)
        if grad is None:
            return tape.wrap(result.value), None
        if result.requires_grad:
            result.adjoint = self.split(result.type, grad, None) if isinstance(result.type, TupleType) else grad
            tape.run_backward()
        grads = Tuple(tuple(tape.materialize(p.type, p.adjoint, p.value) for p in proxies))
        return None, tape.wrap(grads)

    def wrap(self, body):
        """``body`` inside this tape's let bindings."""
        for var, value in reversed(self.bindings):
            body = Let(var, value, body)
        return body

    def _let(self, let, env):
        while isinstance(let, Let):
            env[let.var] = self.forward(let.value, env)
            let = let.body
        return self.forward(let, env)

    def _tuple(self, tup, fields):
        requires = any(f.requires_grad for f in fields)

        def backward(node):
            for field, adjoint in zip(fields, self.split(node.type, node.adjoint, node.value), strict=True):
                self.accumulate(field, adjoint)

        return self.node(Tuple(tuple(f.value for f in fields)), tup.checked_type, requires, backward, "tup")

    def _tuple_getitem(self, item, tup):
        index = item.index
        requires = tup.requires_grad and _carries_grad(item.checked_type)

        def backward(node):
            adjoints = [None] * len(tup.type.fields)
            adjoints[index] = node.adjoint
            self.accumulate(tup, adjoints)

        return self.node(TupleGetItem(tup.value, index), item.checked_type, requires, backward)

    def _call(self, call, args, env):
        callee = call.op
        if isinstance(callee, GlobalVar):
            return self._call_global(callee, args)
        if isinstance(callee, Function):
            return self._call_function(callee, args, env)
        if not isinstance(callee, Op):
            raise HigherOrderOnly(f"gradient: cannot differentiate a call of a {type(callee).__name__} (a closure or "
                            f"function-valued expression needs higher-order AD)")
        ty = call.checked_type
        requires = any(a.requires_grad for a in args) and _carries_grad(ty)
        fgrad = callee.get_attr("FPrimalGradient")
        if requires and fgrad is None:
            raise KilnError(f"gradient: the operator {callee.name} does not have a registered gradient "
                            f"(relay.op.register_gradient)")
        orig = Call(callee, tuple(a.value for a in args), call.attrs, span=call.span, checked_type_=ty)

        def backward(node):
            grads = fgrad(orig, self.materialize(node.type, node.adjoint, node.value))
            if len(grads) != len(args):
                raise KilnError(f"gradient: the gradient of {callee.name} returned {len(grads)} values for "
                                f"{len(args)} arguments")
            for arg, grad in zip(args, grads, strict=True):
                if arg.requires_grad:
                    self.accumulate(arg, _Replace(orig, node.value).visit(grad))

        return self.node(orig, ty, requires, backward)

    def _call_function(self, func, args, env):
        if len(func.params) != len(args):
            raise KilnError(f"gradient: a function of {len(func.params)} parameters called with {len(args)}")
        scope = dict(env)  # the function's free variables resolve to the caller's nodes
        scope.update(zip(func.params, args, strict=True))
        return self.forward(func.body, scope)

    def _call_global(self, gv, args):
        func = self.mod[gv.name_hint] if self.mod is not None and gv.name_hint in self.mod else None
        if not isinstance(func, Function):
            raise KilnError(f"gradient: {gv} is not a Relay function of the module passed as mod")
        if gv.name_hint in self.inlining:
            raise HigherOrderOnly(f"gradient: {gv} is recursive; recursion needs higher-order AD (mode='higher_order')")
        if func.body.checked_type_ is None:
            func = infer_type(self.mod)[gv.name_hint]
        self.inlining.append(gv.name_hint)
        try:
            return self._call_function(func, args, {})
        finally:
            self.inlining.pop()

    # -- adjoints -----------------------------------------------------------------------------------------------------
    def split(self, ty, adjoint, value):
        """A tuple adjoint as a list of field adjoints (None for zero)."""
        n = len(ty.fields)
        if adjoint is None:
            return [None] * n
        if isinstance(adjoint, list):
            return adjoint
        if isinstance(adjoint, Tuple):
            return list(adjoint.fields)
        whole = self.push(adjoint, name="dtup")
        return [self.push(TupleGetItem(whole, i), name="d") for i in range(n)]

    def materialize(self, ty, adjoint, value):
        """The adjoint of a value of type ``ty`` as one expression, zeros where it is still zero."""
        if isinstance(ty, TupleType):
            parts = self.split(ty, adjoint, value)
            return Tuple(tuple(self.materialize(t, a, TupleGetItem(value, i))
                               for i, (t, a) in enumerate(zip(ty.fields, parts, strict=True))))
        if adjoint is None:
            from ..op.like import zeros_like

            return zeros_like(value)
        return adjoint

    def add(self, ty, a, b):
        """The sum of two adjoints of a value of type ``ty``."""
        if a is None:
            return b
        if b is None:
            return a
        if isinstance(ty, TupleType):
            return [self.add(t, x, y) for t, x, y in
                    zip(ty.fields, self.split(ty, a, None), self.split(ty, b, None), strict=True)]
        from ..op.tensor import add

        return self.push(add(a, b), name="d")

    def accumulate(self, node, contribution):
        """Add ``contribution`` to ``node``'s adjoint (dropped where the value carries no gradient)."""
        if not node.requires_grad or contribution is None:
            return
        if isinstance(node.type, TensorType):
            node.adjoint = self.add(node.type, node.adjoint, self.push(contribution, name="d"))
        else:
            node.adjoint = self.add(node.type, node.adjoint, self.split(node.type, contribution, node.value))

    def seed(self, node, first_only):
        """Ones for the result's adjoint: every tensor of it, or (``first_only``) its first tensor."""
        from ..op.like import ones_like

        def ones(ty, value):
            if isinstance(ty, TensorType):
                return ones_like(value) if _carries_grad(ty) else None
            fields = [ones(t, self.push(TupleGetItem(value, i)))
                      for i, t in enumerate(ty.fields) if not first_only or i == 0]
            return fields + [None] * (len(ty.fields) - len(fields))

        node.adjoint = ones(node.type, node.value) if node.requires_grad else None

    def run_backward(self):
        for node in reversed(self.nodes):
            if node.backward is not None and node.adjoint is not None:
                node.backward(node)


def _grad_ret_type(func) -> TupleType:
    params = tuple(p.checked_type for p in func.params)
    return TupleType((func.body.checked_type, TupleType(params)))


def _typed_function(expr, mod) -> Function:
    if isinstance(expr, GlobalVar):
        if mod is None or expr.name_hint not in mod:
            raise KilnError(f"gradient: {expr} needs the module it is defined in (mod=...)")
        expr = infer_type(mod)[expr.name_hint] if mod[expr.name_hint].checked_type_ is None else mod[expr.name_hint]
    if not isinstance(expr, Function):
        raise KilnError(f"gradient: the input must be a relay.Function (or a GlobalVar of mod), not "
                        f"{type(expr).__name__}")
    if expr.type_params:
        raise KilnError("gradient: polymorphic functions (type parameters) are not supported")
    if expr.body.checked_type_ is None or any(p.checked_type_ is None for p in expr.params):
        try:
            expr = infer_type(expr, mod)
        except TypeInferenceError as exc:
            raise TypeInferenceError(f"gradient: the input function does not type check: {exc}") from None
    return expr


def differentiate(func, mod=None, seed_first_only=False) -> Function:
    """The reverse-mode gradient of a typed ``func`` (see the module docstring); ``mod`` resolves the global
    functions it calls."""
    tape = _Tape(mod)
    env = {}
    for p in func.params:
        env[p] = node = _Node(p, p.checked_type, _carries_grad(p.checked_type))
        if node.requires_grad:
            tape.nodes.append(node)
    result = tape.forward(func.body, env)
    tape.seed(result, seed_first_only)
    tape.run_backward()
    grads = Tuple(tuple(tape.materialize(p.checked_type, env[p].adjoint, p) for p in func.params))
    body: RelayExpr = tape.wrap(Tuple((result.value, grads)))
    return Function(func.params, body, _grad_ret_type(func), func.attrs, span=func.span)


def gradient(expr, mod=None, mode="higher_order"):
    """Transform a function into one returning its result paired with the gradients of its inputs (TVM's
    ``relay.transform.gradient``).

    Parameters
    ----------
    expr : relay.Function or GlobalVar
        The function to differentiate (a GlobalVar is looked up in ``mod``). Types are inferred when missing.
    mod : IRModule, optional
        The module holding the global functions ``expr`` calls (they are differentiated through).
    mode : str
        ``"higher_order"`` (TVM's default: seeds only the first tensor of a tuple result, needs tensor parameters)
        or ``"first_order"`` (seeds every tensor of the result; tuple parameters allowed).

    Returns
    -------
    relay.Function
        ``fn (x1, ..., xn) -> (result, (d result / d x1, ..., d result / d xn))``, typed.

    Examples
    --------
    >>> x = relay.var("x", shape=(3,))
    >>> back = relay.transform.gradient(relay.Function([x], x * x))   # doctest: +SKIP
    >>> relay.create_executor().evaluate(back)(np.ones(3, "float32"))[1][0]   # 2 * x   # doctest: +SKIP
    """
    if mode not in MODES:
        raise KilnError(f"gradient: unknown mode {mode!r}; use one of {', '.join(MODES)}")
    func = _typed_function(expr, mod)
    if mode == "higher_order":
        for p in func.params:
            if not isinstance(p.checked_type, TensorType):
                raise KilnError(f"gradient: higher-order AD needs tensor parameters, but %{p.name_hint} has type "
                                f"{p.checked_type} (use mode='first_order' for tuple parameters)")
        try:
            return infer_type(differentiate(func, mod, seed_first_only=True), mod)
        except HigherOrderOnly:
            from .gradient_higher import higher_order_gradient

            return infer_type(higher_order_gradient(func, mod), mod)
    return infer_type(differentiate(func, mod), mod)


@register_pass("FirstOrderGradient")
@dataclass(frozen=True)
class FirstOrderGradient(ModulePass):
    """Replace every global Relay function of the module by its first-order gradient function (TVM's
    ``relay.transform.FirstOrderGradient``); each is differentiated on its own."""

    info = PassInfo(0, "FirstOrderGradient")

    def transform_module(self, mod, ctx):
        typed = infer_type(mod)
        out = IRModule(attrs=mod.attrs)
        for gv, func in typed.functions.items():
            out[gv] = differentiate(func, typed) if isinstance(func, Function) else func
        return infer_type(out)


__all__ = ["FirstOrderGradient", "differentiate", "gradient"]
