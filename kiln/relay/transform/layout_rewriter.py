"""The layout rewriter shared by ConvertLayout and AlterOpLayout (TVM's ``transform_layout.h``).

Both passes let some operators change the layout they compute in (conv2d to NHWC, conv2d to NCHW16c...) and then
move as little data as possible: operators that do not care about the layout keep computing in the new one, and a
``layout_transform`` is inserted only where a consumer needs another layout.

Every expression is rewritten into a :class:`LayoutValue` ``(expr, old, new)``: ``expr`` computes the original
tensor transformed from layout ``old`` to layout ``new`` (``old is new`` or both None when nothing changed: then
``expr`` has the original's shape; ``None`` means "layout unknown"). Tuples carry a tuple of layouts per field.

For each operator call, in dataflow order:

1. if the pass has a *conversion hook* for it (ConvertLayout: ``FTVMConvertOpLayout`` of the ops named in
   ``desired_layouts``; AlterOpLayout: ``FTVMAlterOpLayout``), the hook receives the call's attrs, its inputs in
   their original layouts, their types and (ConvertLayout) the desired layouts, and may return a new call, such as
   the same conv2d with ``data_layout="NHWC"``; the rewriter then brings each input into the layout the new call
   declares (:data:`~.layout_rules.LAYOUT_OPS`) and records the new call's output layout;
2. otherwise the operator's *layout rule* (:func:`~.layout_rules.rule_for`) may carry the new layouts of its inputs
   through (element-wise and broadcast operators, bias_add, concatenate, pooling, reductions, ...), adjusting
   attributes such as ``axis`` or ``layout``;
3. otherwise every input is brought back to its original layout (a "boundary").

Bringing a value into a layout goes through one memo, so each ``(expression, from, to)`` transform is built once
and ``layout_transform(layout_transform(x, A, B), B, A)`` collapses to ``x``. The function's result is always
brought back to its original layout, so the rewritten function has the original signature.
"""

from ...error import KilnError
from ...ir.op import Op
from ...tir.layout import layout as parse_layout
from .. import op as _op
from ..expr import Call, Tuple, TupleGetItem
from ..expr_functor import ExprFunctor
from ..function import Function
from ..op.attrs import LayoutTransformAttrs
from .layout_rules import LAYOUT_OPS, LayoutValue, rule_for


class LayoutRewriter(ExprFunctor):
    """Rewrites a typed function; ``convert`` is the pass's conversion hook (see the module docstring).

    ``convert(call)`` returns None when the pass has nothing to do for the original call, else a function that
    receives the call's inputs in their original layouts and returns a replacement expression or None.
    """

    def __init__(self, convert):
        super().__init__()
        self.convert = convert
        self._transforms: dict = {}
        self._expanded: dict = {}
        self._originals: dict = {}

    # ---- moving values between layouts ------------------------------------------------------------------------
    def transform(self, expr, src, dst):
        """``expr`` (in layout ``src``) in layout ``dst``: one ``layout_transform``, built once per triple."""
        if src == dst:
            return expr
        key = (expr, src, dst)
        out = self._transforms.get(key)
        if out is None:
            if (isinstance(expr, Call) and expr.op is _LAYOUT_TRANSFORM and isinstance(expr.attrs, LayoutTransformAttrs)
                    and expr.attrs.src_layout == dst and expr.attrs.dst_layout == src):
                out = expr.args[0]  # transforming back undoes the transform
            else:
                out = _op.layout_transform(expr, src, dst)
            self._transforms[key] = out
        return out

    def expand_dims(self, expr, num_newaxis):
        """``expand_dims(expr, axis=0, num_newaxis)``, built once per expression."""
        key = (expr, num_newaxis)
        out = self._expanded.get(key)
        if out is None:
            out = self._expanded[key] = _op.expand_dims(expr, axis=0, num_newaxis=num_newaxis)
        return out

    def original(self, value):
        """The expression of ``value`` in its original layout (tuples field by field)."""
        if not value.changed:
            return value.expr
        cached = self._originals.get(id(value))
        if cached is not None:
            return cached[1]
        if isinstance(value.old, tuple):
            fields = [self.original(LayoutValue(self._field(value.expr, i), old, new))
                      for i, (old, new) in enumerate(zip(value.old, value.new, strict=True))]
            out = Tuple(tuple(fields))
        else:
            out = self.transform(value.expr, value.new, value.old)
        self._originals[id(value)] = (value, out)
        return out

    @staticmethod
    def _field(expr, index):
        return expr.fields[index] if isinstance(expr, Tuple) else TupleGetItem(expr, index)

    def field(self, value, index):
        """Field ``index`` of a tuple-valued ``value``, as a LayoutValue."""
        if isinstance(value.old, tuple):
            return LayoutValue(self._field(value.expr, index), value.old[index], value.new[index])
        return LayoutValue(self._field(value.expr, index))

    def as_layout(self, value, interpreted, target):
        """``value`` in layout ``target``, for a consumer that reads the original tensor as layout ``interpreted``."""
        if value.old is not None and value.old == interpreted and isinstance(value.new, str):
            return self.transform(value.expr, value.new, target)
        return self.transform(self.original(value), interpreted, target)

    # ---- visiting ---------------------------------------------------------------------------------------------
    def visit_var(self, var):
        return LayoutValue(var)

    def visit_global_var(self, gv):
        return LayoutValue(gv)

    def visit_constant(self, const):
        return LayoutValue(const)

    def visit_op(self, op):
        return LayoutValue(op)

    def visit_tuple(self, tup):
        values = [self.visit(f) for f in tup.fields]
        expr = tup.with_fields(fields=tuple(v.expr for v in values))
        if not any(v.changed for v in values):
            return LayoutValue(expr)
        return LayoutValue(expr, tuple(v.old for v in values), tuple(v.new for v in values))

    def visit_tuple_getitem(self, item):
        value = self.visit(item.tuple_value)
        if isinstance(value.old, tuple):
            return LayoutValue(item.with_fields(tuple_value=value.expr), value.old[item.index],
                               value.new[item.index])
        return LayoutValue(item.with_fields(tuple_value=self.original(value)))

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        bindings = [(b, self.original(self.visit(b.value))) for b in chain]
        result = self.original(self.visit(body))
        for binding, value in reversed(bindings):
            result = binding.with_fields(value=value, body=result)
            self.memo_map[binding] = LayoutValue(result)
        return LayoutValue(result)

    def visit_if(self, node):
        return LayoutValue(node.with_fields(
            cond=self.original(self.visit(node.cond)),
            true_branch=self.original(self.visit(node.true_branch)),
            false_branch=self.original(self.visit(node.false_branch))))

    def visit_function(self, fn):
        if fn.is_primitive():
            return LayoutValue(fn)
        return LayoutValue(fn.with_fields(body=self.original(self.visit(fn.body))))

    def visit_call(self, call):
        args = [self.visit(a) for a in call.args]
        if not isinstance(call.op, Op):
            callee = self.original(self.visit(call.op))
            return LayoutValue(call.with_fields(op=callee, args=tuple(self.original(a) for a in args)))
        build = self.convert(call) if self.convert is not None else None
        if build is not None:
            inputs = [self.original(a) for a in args]
            new = build(inputs)
            if new is not None and not _same_call(new, call, inputs):
                out = self._converted(call, new, args, inputs)
                if out is not None:
                    return out
        rule = _rule(call.op)
        if rule is not None:
            out = rule(self, call, args)
            if out is not None:
                return out
        spec = LAYOUT_OPS.get(call.op.name)
        if spec is not None:  # a layout-defining op left as it is: its inputs go back to what it declares
            layouts = spec.inputs(call)
            new_args = tuple(self.as_layout(a, lay, lay) if lay else self.original(a)
                             for a, lay in zip(args, layouts, strict=True))
            out_layout = spec.output(call)
            return LayoutValue(call.with_fields(args=new_args), out_layout, out_layout)
        return LayoutValue(call.with_fields(args=tuple(self.original(a) for a in args)))

    def _converted(self, call, new, args, inputs):
        """Wire the replacement ``new`` of ``call`` (see the module docstring, step 1); None when one of its tensors
    does not fit the new layouts."""
        old_spec = LAYOUT_OPS.get(call.op.name)
        new_spec = LAYOUT_OPS.get(new.op.name) if isinstance(new, Call) and isinstance(new.op, Op) else None
        if old_spec is None or new_spec is None:
            return LayoutValue(new)  # an equivalent expression in the original layout
        old_layouts, new_layouts = old_spec.inputs(call), new_spec.inputs(new)
        old_out, new_out = old_spec.output(call), new_spec.output(new)
        shapes = [(a.checked_type.shape, o, n)
                  for a, o, n in zip(call.args, old_layouts, new_layouts, strict=True) if o and n]
        if not all(_convertible(*s) for s in [*shapes, (call.checked_type.shape, old_out, new_out)]):
            return None  # a tensor cannot be laid out that way (C=3 in NCHW8c): keep the call as it is
        new_args = []
        for arg, target in zip(new.args, new_layouts, strict=True):
            index = next((j for j, inp in enumerate(inputs) if inp is arg), None)
            if index is None or not target or not old_layouts[index]:
                new_args.append(arg)  # built by the hook itself: already what the new call expects
            else:
                new_args.append(self.as_layout(args[index], old_layouts[index], target))
        return LayoutValue(new.with_fields(args=tuple(new_args)), old_out, new_out)


_LAYOUT_TRANSFORM = Op.get("layout_transform")
_RULE_CACHE: dict = {}


def _rule(op):
    if op not in _RULE_CACHE:
        _RULE_CACHE[op] = rule_for(op)
    return _RULE_CACHE[op]


def _convertible(shape, src, dst) -> bool:
    """Whether a tensor of ``shape`` in layout ``src`` can be transformed to layout ``dst``."""
    try:
        parse_layout(src).convert_shape(shape, parse_layout(dst))
    except KilnError:
        return False
    return True


def _same_call(new, call, inputs) -> bool:
    """Whether a hook returned the call unchanged (same op and attrs over the same inputs)."""
    return (isinstance(new, Call) and new.op is call.op and new.attrs == call.attrs
            and len(new.args) == len(inputs) and all(a is b for a, b in zip(new.args, inputs, strict=True)))


def rewrite_layouts(func, convert):
    """Rewrite the typed function ``func`` with the conversion hook ``convert`` (see :class:`LayoutRewriter`).

    Returns ``func`` itself when nothing changed, else an untyped rebuilt function.
    """
    if not isinstance(func, Function):
        raise TypeError(f"rewrite_layouts expects a relay.Function, got {type(func).__name__}")
    rewriter = LayoutRewriter(convert)
    new = func.with_fields(body=rewriter.original(rewriter.visit(func.body)))
    return new
