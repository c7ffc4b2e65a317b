"""Partition a quantized module into input quantization, integer core and output dequantization (TVM's
``relay.quantize._partition_conversions``, applied by ``quantize`` when ``partition_conversions`` is not
``"disabled"``).

The result holds ``@quantize_inputs`` (the float inputs converted to integers), ``@quantized_main`` (the integer
core), ``@dequantize_outputs`` (its result converted back) and a ``@main`` calling the three in turn, equal to the
unpartitioned function. The cuts, as TVM makes them:

* *prefix*: an argument of a call of any operator but the conversion ones (``add multiply right_shift clip round
  cast``) that reaches exactly one parameter through conversion operators only is input quantization: it moves to
  ``@quantize_inputs``, and the core reads a new parameter in its place;
* *suffix*: walking down from the result, the first values of a quantized dtype end the core; what lies above them
  is output dequantization. Without such a value the whole function is the core and the suffix is the identity.

With ``fully_integral`` (``partition_conversions="fully_integral"``) the partition asserts that the prefix and
suffix hold only conversion operators and the core only quantized dtypes: an ``AssertionError``, as TVM's, names
what is left in float.
"""

from ...ir.module import IRModule
from ...ir.type import TensorType, TupleType
from ..expr import Call, GlobalVar, Let, Tuple, TupleGetItem, Var
from ..expr_functor import ExprMutator, post_order_visit
from ..function import Function
from ..transform.infer_type import infer_type

__all__ = ["partition_conversions", "CONVERSION_OPS"]

CONVERSION_OPS = frozenset({"add", "multiply", "right_shift", "clip", "round", "cast"})
"""The operators input quantization and output dequantization are made of."""


def _is_conversion(call):
    return getattr(call.op, "name", None) in CONVERSION_OPS


def _reached_params(expr, params, memo):
    """The parameters ``expr`` reaches through conversion operators, tuples and constants only (a call of another
    operator contributes none: its own arguments are cut where it is)."""
    if expr in memo:
        return memo[expr]
    stack, order = [expr], []
    while stack:  # post-order without recursion: a deep chain of conversions stays within the recursion limit
        e = stack.pop()
        if e in memo:
            continue
        children = _chain_children(e)
        pending = [c for c in children if c not in memo]
        if pending:
            stack.append(e)
            stack.extend(pending)
            continue
        memo[e] = frozenset({e}) if e in params else frozenset().union(*(memo[c] for c in children))
        order.append(e)
    return memo[expr]


def _chain_children(e):
    if isinstance(e, Call) and _is_conversion(e):
        return list(e.args)
    if isinstance(e, Tuple):
        return list(e.fields)
    if isinstance(e, TupleGetItem):
        return [e.tuple_value]
    return []


class _PrefixCutter(ExprMutator):
    def __init__(self, params):
        super().__init__()
        self.params = set(params)
        self.reached = {}
        self.cuts = {}  # argument -> (new core parameter, the argument: its input quantization)

    def visit_call(self, call):
        if _is_conversion(call):
            return super().visit_call(call)
        args = []
        for arg in call.args:
            reached = _reached_params(arg, self.params, self.reached)
            if not reached:
                args.append(self.visit(arg))
                continue
            names = sorted(p.name_hint for p in reached)
            assert len(reached) == 1, f"an input conversion of {call.op.name} reads several inputs: {names}"
            if arg not in self.cuts:
                (param,) = reached
                self.cuts[arg] = (Var(param.name_hint, arg.checked_type), arg)
            args.append(self.cuts[arg][0])
        return call.with_fields(args=tuple(args))


def _free_vars(expr):
    from ..analysis import free_vars

    return free_vars(expr)


def _partition_prefix(func):
    cutter = _PrefixCutter(func.params)
    core_body = cutter.visit(func.body)
    core_params = _free_vars(core_body)
    by_param = {new: (new, arg) for new, arg in cutter.cuts.values()}
    bindings, results = [], []
    for p in core_params:
        if p in by_param:
            bound = Var(p.name_hint, p.type_annotation)
            bindings.append((bound, by_param[p][1]))
            results.append(bound)
        else:
            results.append(p)  # an input the core reads as it is
    body = Tuple(results)
    for var, value in reversed(bindings):
        body = Let(var, value, body)
    return infer_type(Function(list(func.params), body)), infer_type(Function(core_params, core_body))


class _SuffixCutter(ExprMutator):
    def __init__(self, dtypes):
        super().__init__()
        self.dtypes = dtypes
        self.core_result = None
        self.input = None

    def prune(self, expr):
        return self._quantized(expr)

    def _quantized(self, expr):
        t = expr.checked_type_
        return isinstance(t, TensorType) and t.dtype in self.dtypes

    def _cut(self, expr):
        """The first integer value met ends the core: the suffix reads it as its input."""
        if self.core_result is None:
            self.core_result, self.input = expr, Var("input", expr.checked_type)
        if expr is not self.core_result:
            raise AssertionError("partition_conversions: the output dequantization reads several integer values")
        return self.input

    def visit_call(self, call):
        return self._cut(call) if self._quantized(call) else super().visit_call(call)

    def visit_tuple_getitem(self, item):
        return self._cut(item) if self._quantized(item) else super().visit_tuple_getitem(item)

    def visit_var(self, var):
        return self._cut(var) if self._quantized(var) else var


def _partition_suffix(core, dtypes):
    cutter = _SuffixCutter(dtypes)
    body = cutter.visit(core.body)
    if cutter.core_result is None:  # no integer value: the core is the whole function, the suffix the identity
        identity = Var("input", core.ret_type)
        return core, infer_type(Function([identity], identity))
    if _free_vars(body) != [cutter.input]:
        raise AssertionError("partition_conversions: the output dequantization reads the inputs besides the result")
    return infer_type(Function(list(core.params), cutter.core_result)), infer_type(Function([cutter.input], body))


def _only_conversions(func):
    calls = []
    post_order_visit(func, lambda e: calls.append(e) if isinstance(e, Call) and not _is_conversion(e) else None)
    return [getattr(c.op, "name", str(c.op)) for c in calls]


def _all_dtypes(func):
    dtypes = set()

    def record(e):
        t = getattr(e, "checked_type_", None)
        for field in (t.fields if isinstance(t, TupleType) else (t,)):
            if isinstance(field, TensorType):
                dtypes.add(field.dtype)

    post_order_visit(func, record)
    return dtypes


def _ops_in(func, dtypes):
    """The operators of ``func`` whose results have one of ``dtypes``, in order of first use."""
    names = []

    def record(e):
        if isinstance(e, Call) and isinstance(e.checked_type_, TensorType) and e.checked_type_.dtype in dtypes:
            name = getattr(e.op, "name", str(e.op))
            if name not in names:
                names.append(name)

    post_order_visit(func, record)
    return names


def partition_conversions(mod, quantized_dtypes, ensure_fully_integral):
    """``mod`` (one quantized ``@main``) partitioned into ``@quantize_inputs``, ``@quantized_main`` and
    ``@dequantize_outputs`` with a ``@main`` composing them (module docstring)."""
    assert len(mod.functions) == 1, "partition_conversions: the module must hold only @main"
    pre, core = _partition_prefix(mod["main"])
    core, post = _partition_suffix(core, set(quantized_dtypes))
    if ensure_fully_integral:
        for name, func in (("input quantization", pre), ("output dequantization", post)):
            others = _only_conversions(func)
            assert not others, f"partition_conversions: the {name} computes {', '.join(others)}"
        floats = _all_dtypes(core) - set(quantized_dtypes)
        assert not floats, f"partition_conversions: the quantized core computes in {', '.join(sorted(floats))} " \
                           f"({', '.join(_ops_in(core, floats))})"
    gv_pre, gv_core, gv_post = (GlobalVar(n) for n in ("quantize_inputs", "quantized_main", "dequantize_outputs"))
    params = [Var(p.name_hint, p.type_annotation) for p in pre.params]
    inputs, outputs, result = Var("quantized_inputs"), Var("quantized_outputs"), Var("dequantized_outputs")
    width = len(pre.ret_type.fields)
    body = Let(inputs, Call(gv_pre, tuple(params)),
               Let(outputs, Call(gv_core, tuple(TupleGetItem(inputs, i) for i in range(width))),
                   Let(result, Call(gv_post, (outputs,)), result)))
    fused = IRModule({gv_pre: pre, gv_core: core, gv_post: post})
    fused["main"] = Function(params, body)
    return infer_type(fused)

