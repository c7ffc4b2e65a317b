"""The layout rewriter shared by AlterOpLayout and ConvertLayout (TVM's ``transform_layout.h`` over
``ForwardRewrite``).

Both passes let some operators change the layouts they compute in (conv2d to ``NCHW16c``, to ``NHWC``...) and then
move as little data as possible: the operators after them keep computing in the new layout as long as they have a
layout rule (``FInferCorrectLayout``, :mod:`.infer_layout_utils`), and a ``layout_transform`` back is inserted only
where a consumer has none or cannot follow.

Each expression is rewritten, in dataflow order, into a *value*: an expression, or a :class:`Alternated`
``(value, old, new)`` -- ``value`` computes the original tensor moved from layout ``old`` (the layout the original
program has it in) to ``new`` (TVM's ``LayoutAlternatedExpr``) -- or, for a tuple, a :class:`TupleValue` of values.
For each operator call (TVM's ``LayoutRewriter``):

1. its rule, asked with the producers' old layouts (``old_prd``), gives the layouts the call reads its inputs in
   (``old_cur``) and writes its output in; no rule, or a rule that cannot tell, leaves the call as it is, with every
   input brought back to its old layout;
2. the pass's hook (:class:`LayoutRewriter`'s ``call_with_new_layouts``: AlterOpLayout's ``FTVMAlterOpLayout``,
   ConvertLayout's ``FTVMConvertOpLayout``) may replace the call, given its inputs in their new layouts;
3. the rule of the new call, asked with the producers' new layouts (``new_prd``), gives the layouts it wants
   (``new_cur``), adapting its attributes; each input is transformed from ``new_prd`` to ``new_cur`` (through
   ``old_prd`` when the call read the input otherwise than its producer wrote it);
4. the result is ``Alternated(new call, old output layout, new output layout)``.

Transforms are memoized by ``(expression, from, to)``, so a tensor transformed for several consumers is transformed
once. A value reaching anything else (a call without a rule, a let, the function's result) is *realized*:
transformed back to its old layout.
"""

from ...error import KilnError
from ...ir.op import Op
from ...ir.type import TensorType, TupleType
from ...tir.layout import Layout
from .. import op as _op
from ..expr import Tuple, TupleGetItem
from ..expr_functor import ExprFunctor
from ..function import Function
from . import layout_rules  # noqa: F401  (registers the operators' FInferCorrectLayout)
from .infer_layout_utils import InferCorrectLayoutOutput

__all__ = ["Alternated", "TupleValue", "LayoutRewriter", "infer_correct_layouts", "rewrite_layouts"]


class Alternated:
    """The original tensor moved from layout ``old`` to layout ``new``: ``value`` (TVM's ``LayoutAlternatedExpr``;
    ``old`` and ``new`` are None for a tensor whose layout is unknown)."""

    __slots__ = ("value", "old", "new")

    def __init__(self, value, old=None, new=None):
        self.value, self.old, self.new = value, old, new


class TupleValue:
    """A rewritten ``relay.Tuple`` (``node``) whose fields are values (expressions or :class:`Alternated`)."""

    __slots__ = ("node", "fields")

    def __init__(self, node, fields):
        self.node, self.fields = node, tuple(fields)


def infer_correct_layouts(call, new_in_layouts, old_in_layouts, old_in_types):
    """The operator's ``FInferCorrectLayout`` answer for ``call``, or None when it has none or cannot infer (an
    undefined layout in its answer) (TVM's ``InferCorrectLayouts``)."""
    if not isinstance(call.op, Op):
        return None
    rule = call.op.get_attr("FInferCorrectLayout")
    if rule is None:
        return None
    out = rule(call.attrs, None if new_in_layouts is None else list(new_in_layouts), list(old_in_layouts),
               list(old_in_types))
    if not isinstance(out, InferCorrectLayoutOutput):
        raise KilnError(f"FInferCorrectLayout of {call.op.name} must return an InferCorrectLayoutOutput, "
                        f"got {type(out).__name__}")
    if any(lay is None for lay in (*out.input_layouts, *out.output_layouts)):
        return None
    return out


def _is_scalar(expr) -> bool:
    """Whether ``expr`` is typed as a tensor whose every dimension is 1 (TVM's ``IsScalar``)."""
    ttype = getattr(expr, "checked_type_", None)
    if not isinstance(ttype, TensorType):
        return False
    return all(isinstance(d, int) and d == 1 for d in ttype.shape)


class LayoutRewriter(ExprFunctor):
    """Rewrites a typed function (see the module docstring); ``call_with_new_layouts(ref_call, attrs, args)`` is
    the pass's hook: it returns the call to compute ``ref_call`` with (``args`` are its inputs in their new
    layouts, ``attrs`` its attributes as its rule adapted them), at least ``ref_call``'s operator over ``args``."""

    def __init__(self, call_with_new_layouts):
        super().__init__()
        self.call_with_new_layouts = call_with_new_layouts
        self._transforms: dict = {}

    # ---- moving values between layouts (TVM's TransformMemorizer) ---------------------------------------------
    def transform(self, raw, src, dst):
        """``raw`` (in layout ``src``) in layout ``dst``, built once per ``(raw, src, dst)``."""
        if src == dst:
            return raw
        if src is None or dst is None:
            raise KilnError(f"cannot insert a layout transform between undefined layouts ({src} -> {dst})")
        key = (raw, src.name, dst.name)
        out = self._transforms.get(key)
        if out is None:
            out = self._transforms[key] = self._transform(raw, src, dst)
        return out

    @staticmethod
    def _transform(raw, src: Layout, dst: Layout):
        expr = raw
        if src.ndim_primal < dst.ndim_primal:
            if _is_scalar(raw):
                return raw  # broadcasts against any layout as it is
            # a lower-rank operand (a per-channel vector) gets the missing axes in front first
            expr = _op.expand_dims(raw, axis=0, num_newaxis=dst.ndim_primal - src.ndim_primal)
            src = src.expand_primal(dst)
            if src == dst:
                return expr
        if sorted(src.primal) != sorted(dst.primal):
            raise KilnError(f"cannot insert a layout transform between layouts {src.name} and {dst.name}")
        return _op.layout_transform(expr, src.name, dst.name)

    def realize(self, value):
        """``value`` as an expression in its original layout."""
        if isinstance(value, Alternated):
            return self.transform(value.value, value.new, value.old)
        if isinstance(value, TupleValue):
            return value.node.with_fields(fields=tuple(self.realize(f) for f in value.fields))
        return value

    # ---- visiting (TVM's ForwardRewriter) ---------------------------------------------------------------------
    def visit_var(self, var):
        return var

    def visit_global_var(self, gv):
        return gv

    def visit_constant(self, const):
        return const

    def visit_op(self, op):
        return op

    def visit_tuple(self, tup):
        fields = [self.visit(f) for f in tup.fields]
        if any(isinstance(f, Alternated | TupleValue) for f in fields):
            return TupleValue(tup, fields)
        return tup.with_fields(fields=tuple(fields))

    def visit_tuple_getitem(self, item):
        value = self.visit(item.tuple_value)
        if isinstance(value, TupleValue | Tuple):  # folds (a, b)[0] to a (keeping a's layout), as TVM's
            return value.fields[item.index]
        return item.with_fields(tuple_value=self.realize(value))

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        values = [self.realize(self.visit(binding.value)) for binding in chain]
        result = self.realize(self.visit(body))
        for binding, value in zip(reversed(chain), reversed(values), strict=True):
            result = binding.with_fields(value=value, body=result)
            self.memo_map[binding] = result
        return result

    def visit_if(self, node):
        return node.with_fields(cond=self.realize(self.visit(node.cond)),
                                true_branch=self.realize(self.visit(node.true_branch)),
                                false_branch=self.realize(self.visit(node.false_branch)))

    def visit_function(self, fn):
        return fn.with_fields(body=self.realize(self.visit(fn.body)))

    # data types and references are boundaries: their values are in the original layouts
    def visit_constructor(self, ctor):
        return ctor

    def visit_match(self, node):
        clauses = tuple(c.with_fields(rhs=self.realize(self.visit(c.rhs))) for c in node.clauses)
        return node.with_fields(data=self.realize(self.visit(node.data)), clauses=clauses)

    def visit_ref_create(self, node):
        return node.with_fields(value=self.realize(self.visit(node.value)))

    def visit_ref_read(self, node):
        return node.with_fields(ref=self.realize(self.visit(node.ref)))

    def visit_ref_write(self, node):
        return node.with_fields(ref=self.realize(self.visit(node.ref)), value=self.realize(self.visit(node.value)))

    def visit_call(self, call):
        args = [self.visit(a) for a in call.args]
        if isinstance(call.op, Op):
            out = self.rewrite_call(call, args)
            if out is not None:
                return out
        callee = call.op if isinstance(call.op, Op) else self.realize(self.visit(call.op))
        return call.with_fields(op=callee, args=tuple(self.realize(a) for a in args))

    # ---- one operator call (TVM's LayoutRewriter) -------------------------------------------------------------
    def rewrite_call(self, ref_call, new_args):
        """The value of ``ref_call`` over the rewritten arguments ``new_args``, or None to leave it as it is."""
        inputs: list[Alternated] = []
        normal_args = []
        for arg in new_args:
            if isinstance(arg, TupleValue):
                normal_args.append(arg.node.with_fields(fields=tuple(self._push(f, inputs) for f in arg.fields)))
            elif isinstance(arg, Tuple):
                for field in arg.fields:
                    self._push(field, inputs)
                normal_args.append(arg)
            else:
                normal_args.append(self._push(arg, inputs))
        op = ref_call.op
        if op.has_attr("FTVMAlterOpLayout") and not op.has_attr("FInferCorrectLayout"):
            return self.call_with_new_layouts(ref_call, ref_call.attrs, normal_args)

        old_prd = [inp.old for inp in inputs]
        new_prd = [inp.new for inp in inputs]
        types = [a.checked_type for a in ref_call.args]
        first = infer_correct_layouts(ref_call, None, old_prd, types)
        if first is None:
            return None
        old_cur, old_out = first.input_layouts, first.output_layouts
        if len(old_cur) != len(new_prd):
            raise KilnError(f"FInferCorrectLayout of {op.name} gave {len(old_cur)} input layouts for "
                            f"{len(new_prd)} inputs")
        new_prd_inferred = [n if n is not None else c for n, c in zip(new_prd, old_cur, strict=True)]
        old_prd_inferred = [o if o is not None else c for o, c in zip(old_prd, old_cur, strict=True)]

        new_call = self.call_with_new_layouts(ref_call, first.new_attrs, normal_args)
        if not isinstance(new_call.op, Op):
            return None
        if new_call.op is op and new_call.attrs == ref_call.attrs and len(new_call.args) == len(normal_args) and \
                all(a is b for a, b in zip(new_call.args, normal_args, strict=True)):
            new_call = ref_call.with_fields(args=tuple(normal_args))  # an equal call: keep the original node
        if _count_inputs(new_call) != len(inputs):
            # a replacement over other inputs (TVM requires the same ones): computed in the original layouts
            if any(inp.old != inp.new for inp in inputs):
                new_call = self.call_with_new_layouts(ref_call, first.new_attrs,
                                                      [self.realize(a) for a in new_args])
            return new_call
        second = infer_correct_layouts(new_call, new_prd_inferred, old_prd_inferred, types)
        if second is None:
            return None
        new_cur, new_out = second.input_layouts, second.output_layouts
        if len(new_out) != len(old_out) or len(new_cur) != len(new_prd):
            raise KilnError(f"the layout rule of {new_call.op.name} changed the number of inputs or outputs of "
                            f"{op.name}")

        in_types = [f for t in types for f in (t.fields if isinstance(t, TupleType) else (t,))]
        # (an input the hook replaced, such as a padded weight, is not the original tensor: not checked)
        kept = [a is b for a, b in zip(_flat_args(new_call), _flat_args(normal_args), strict=True)]
        if not all(_fits(t, o, n) for t, o, n, k in zip(in_types, old_cur, new_cur, kept, strict=False) if k) or \
                not all(_fits(*x) for x in zip(_out_types(ref_call), old_out, new_out, strict=False)):
            return None  # a tensor cannot take the new layout (3 channels in NCHW4c): keep the call as it is

        layouts = iter(zip(old_prd, old_cur, new_prd, new_cur, strict=True))
        transformed = []
        # as TVM's, every argument is moved to the layout the new call reads, also one the hook built (a padded
        # weight): a hook returns its call over inputs in their current layouts and leaves the transforms to this
        for arg in new_call.args:
            if isinstance(arg, Tuple):
                transformed.append(arg.with_fields(fields=tuple(self._move(f, *next(layouts)) for f in arg.fields)))
            else:
                transformed.append(self._move(arg, *next(layouts)))
        attrs = new_call.attrs if second.new_attrs == new_call.attrs else second.new_attrs
        out_call = new_call.with_fields(args=tuple(transformed), attrs=attrs)  # itself when nothing changed
        if isinstance(ref_call.checked_type, TupleType):
            return TupleValue(Tuple(tuple(TupleGetItem(out_call, i) for i in range(len(new_out)))),
                              [Alternated(TupleGetItem(out_call, i), old, new)
                               for i, (old, new) in enumerate(zip(old_out, new_out, strict=True))])
        return Alternated(out_call, old_out[0], new_out[0])

    def _push(self, value, inputs):
        """Record ``value`` as one input and return its expression (in its new layout)."""
        if isinstance(value, TupleValue):
            value = self.realize(value)  # a nested tuple: not followed
        if not isinstance(value, Alternated):
            value = Alternated(value)
        inputs.append(value)
        return value.value

    def _move(self, arg, old_prd, old_cur, new_prd, new_cur):
        """Input ``arg`` (written in ``new_prd``) in the layout ``new_cur`` the call reads it in."""
        if old_cur == old_prd:  # the call reads the input as its producer wrote it: one transform
            return self.transform(arg, new_prd, new_cur)
        if old_prd is not None:
            arg = self.transform(arg, new_prd, old_prd)
        return self.transform(arg, old_cur, new_cur)


def _out_types(call):
    ttype = call.checked_type
    return list(ttype.fields) if isinstance(ttype, TupleType) else [ttype]


def _fits(ttype, src, dst) -> bool:
    """Whether a tensor of type ``ttype`` read in layout ``src`` can be transformed to ``dst`` (TVM does not check:
    its transform would fail to type)."""
    if src == dst or not isinstance(ttype, TensorType) or src.ndim != len(ttype.shape) or \
            src.ndim_primal < dst.ndim_primal:
        return True  # a lower-rank operand is expanded first; its transform is checked when it is typed
    try:
        src.convert_shape(ttype.shape, dst)
    except KilnError:
        return False
    return True


def _flat_args(call_or_args):
    """The inputs of a call (or an argument list) with tuple arguments field by field."""
    args = call_or_args.args if hasattr(call_or_args, "args") else call_or_args
    return [f for a in args for f in (a.fields if isinstance(a, Tuple) else (a,))]


def _count_inputs(call) -> int:
    """The inputs of ``call`` with tuple arguments counted field by field."""
    return len(_flat_args(call))


def rewrite_layouts(func, call_with_new_layouts):
    """Rewrite the typed function ``func`` with the pass hook ``call_with_new_layouts`` (see
    :class:`LayoutRewriter`). Returns ``func`` itself when nothing changed, else an untyped rebuilt function."""
    if not isinstance(func, Function):
        raise TypeError(f"rewrite_layouts expects a relay.Function, got {type(func).__name__}")
    rewriter = LayoutRewriter(call_with_new_layouts)
    return rewriter.realize(rewriter.visit(func))
