"""AnnotateTarget: mark which parts of a program an external code generator takes (TVM's
``relay.transform.AnnotateTarget``, the first step of bring-your-own-codegen).

Each operator says whether the external compiler ``<name>`` supports a call of it through its attribute
``target.<name>`` (``tvm.ir.register_op_attr("nn.relu", "target.dnnl")``: a function of the call returning a bool);
a call of a ``Composite`` function named ``<name>.<pattern>`` belongs to ``<name>``. The pass walks the program
bottom-up and gives every call a target: the first of ``targets`` that supports it, else ``"default"`` (kiln's own
code generator). It then brackets every argument of the call: a ``compiler_end`` with the argument's target after
the argument (when the argument was computed by a call or, with ``include_non_call_ops``, a tuple, projection or
reference operation), and a ``compiler_begin`` with the call's target before the call. A function body, the branches
and condition of an ``if`` and a let body end with a ``compiler_end`` of their target. Without
``include_non_call_ops`` tuples, projections, references and calls of local functions are left outside every region.

Running the pass again with more targets keeps the regions already given a non-default target and re-decides the
default ones, so ``AnnotateTarget("A")`` then ``AnnotateTarget("B")`` equals ``AnnotateTarget(["A", "B"])``.
"""

from dataclasses import dataclass

from ...error import KilnError
from ...ir.op import Op
from ...ir.transform import ModulePass, PassInfo, register_pass
from ..expr import Call, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from ..expr_functor import ExprMutator
from ..function import Function
from ..op.annotation import compiler_begin, compiler_end
from .function_pass import skip_function
from .infer_type import infer_type

DEFAULT_TARGET = "default"


def _annotation_of(expr, name):
    """The compiler named by ``expr`` when it is a call of ``annotation.<name>``, else None."""
    if type(expr) is Call and isinstance(expr.op, Op) and expr.op.name == "annotation." + name:
        return getattr(expr.attrs, "compiler", None)
    return None


class _Annotator(ExprMutator):
    """Brackets every region with compiler_begin/compiler_end, keeping the target chosen for each rewritten node."""

    def __init__(self, targets, include_non_call_ops):
        super().__init__()
        self.targets = targets
        self.non_call_ops = include_non_call_ops
        self.target_of: dict = {}  # rewritten node -> the target that computes it

    # -- the two helpers of TVM's rewriter ---------------------------------------------------------------------------
    def annotate_args(self, args, target=""):
        """``(target, new_args)``: each argument ended in its own target and begun in ``target`` (or, when no target
        is given, the one target every argument shares, ``"default"`` when they differ)."""
        ref_target = ""
        begins, ends = [], []
        for arg in args:
            arg_target = DEFAULT_TARGET
            begun = _annotation_of(arg, "compiler_begin")
            if begun is not None:
                # annotated by an earlier run: keep a non-default region, re-decide a default one
                if begun != DEFAULT_TARGET:
                    begins.append(arg)
                else:
                    ends.append(arg.args[0])
                ended = _annotation_of(arg.args[0], "compiler_end")
                if ended is not None:
                    arg_target = ended
            elif arg in self.target_of:
                arg_target = self.target_of[arg]
                # a call without arguments (zeros, ones) has no region to end: it is an input like a variable
                ends.append(arg if type(arg) is Call and not arg.args else compiler_end(arg, arg_target))
            else:
                ends.append(arg)
            if not ref_target:
                ref_target = arg_target
            elif ref_target != arg_target:
                ref_target = DEFAULT_TARGET
        op_target = target or ref_target
        if not ref_target:
            return op_target, list(args)
        return op_target, begins + [compiler_begin(end, op_target) for end in ends]

    def end_region(self, expr):
        """``expr`` followed by a compiler_end of its target, when it was computed in a region."""
        if expr in self.target_of:
            kind = type(expr)
            if kind in (RefWrite, RefCreate, RefRead, TupleGetItem) or (kind is Call and expr.args) or \
                    (kind is Tuple and expr.fields):
                target = self.target_of[expr]
                expr = compiler_end(expr, target)
                self.target_of[expr] = target
        elif _annotation_of(expr, "compiler_end") == DEFAULT_TARGET:
            inner = expr.args[0]
            target = self.target_of.get(inner, DEFAULT_TARGET)
            expr = compiler_end(inner, target)
            self.target_of[expr] = target
        return expr

    def supported_targets(self, call):
        """The targets that may compute ``call`` (the original, typed call), in priority order, then default."""
        found = []
        if isinstance(call.op, Op):
            for target in self.targets:
                check = call.op.get_attr("target." + target)
                if check is not None and (check(call) if callable(check) else bool(check)):
                    found.append(target)
        elif isinstance(call.op, Function):
            composite = call.op.attrs.get("Composite", None)
            if composite is not None and "." in str(composite):
                prefix = str(composite).split(".", 1)[0]
                if prefix in self.targets:
                    found.append(prefix)
        return found + [DEFAULT_TARGET]

    # -- the rewrite of each kind of node (post-order: children are rewritten first) ---------------------------------
    def visit_call(self, call):
        post = super().visit_call(call)
        if isinstance(call.op, Op) and call.op.name in ("annotation.compiler_begin", "annotation.compiler_end"):
            if call.op.name == "annotation.compiler_end":
                self.target_of.setdefault(post.args[0], post.attrs.compiler)
            return post
        if call.args:
            first = _annotation_of(call.args[0], "compiler_begin")
            if first is not None and first != DEFAULT_TARGET:
                return post  # a region of another target, from an earlier run
        targets = self.supported_targets(call)
        if isinstance(call.op, Var) and not self.non_call_ops:
            return Call(post.op, [self.end_region(a) for a in post.args], post.attrs, span=post.span)
        target, args = self.annotate_args(post.args, targets[0])
        new = Call(post.op, args, post.attrs, post.type_args, span=post.span)
        self.target_of[new] = target
        return new

    def visit_tuple(self, tup):
        post = super().visit_tuple(tup)
        if not self.non_call_ops:
            return post.with_fields(fields=tuple(self.end_region(f) for f in post.fields))
        target, fields = self.annotate_args(post.fields)
        new = Tuple(fields, span=post.span)
        self.target_of[new] = target
        return new

    def visit_tuple_getitem(self, item):
        post = super().visit_tuple_getitem(item)
        if not self.non_call_ops:
            return TupleGetItem(self.end_region(post.tuple_value), post.index, span=post.span)
        target, (value,) = self.annotate_args([post.tuple_value])
        new = TupleGetItem(value, post.index, span=post.span)
        self.target_of[new] = target
        return new

    def visit_function(self, fn):
        if fn.attrs.get("Composite", None) is not None:
            return fn  # a composite function is one operation of its target: its body is not annotated
        post = super().visit_function(fn)
        return post.with_fields(body=self.end_region(post.body))

    def visit_let(self, let):
        chain, body = self.let_chain(let)
        bindings = [(self.visit(b.var), self.visit(b.value)) for b in chain]
        result = self.visit(body)
        for binding, (var, value) in zip(reversed(chain), reversed(bindings), strict=True):
            result = self.end_region(result)
            if not isinstance(binding.value, Function):  # a let-bound local function is left as it is
                value = self.annotate_args([value])[1][0]
            result = binding.with_fields(var=var, value=value, body=result)
            self.memo_map[binding] = result
        return result

    def visit_if(self, node):
        post = super().visit_if(node)
        return post.with_fields(cond=self.end_region(post.cond), true_branch=self.end_region(post.true_branch),
                                false_branch=self.end_region(post.false_branch))

    def _ref_node(self, post, fields):
        values = [getattr(post, f) for f in fields]
        if not self.non_call_ops:
            return post.with_fields(**{f: self.end_region(v) for f, v in zip(fields, values, strict=True)})
        target, new_values = self.annotate_args(values)
        new = post.with_fields(**dict(zip(fields, new_values, strict=True)))
        self.target_of[new] = target
        return new

    def visit_ref_create(self, ref):
        return self._ref_node(super().visit_ref_create(ref), ("value",))

    def visit_ref_read(self, ref):
        return self._ref_node(super().visit_ref_read(ref), ("ref",))

    def visit_ref_write(self, ref):
        return self._ref_node(super().visit_ref_write(ref), ("ref", "value"))


@register_pass("AnnotateTarget")
@dataclass(frozen=True)
class AnnotateTarget(ModulePass):
    """Bracket the regions each external compiler of ``targets`` supports with ``compiler_begin``/``compiler_end``.

    Parameters
    ----------
    targets : str or list of str
        The external compilers, in priority order (an operator two of them support goes to the first).
    include_non_call_ops : bool
        Whether tuples, projections, references and calls of local functions are annotated too (with the target
        their arguments share), or left outside every region.
    """

    targets: str | tuple | list = ()
    include_non_call_ops: bool = True
    info = PassInfo(0, "AnnotateTarget", required=("InferType",))

    def __post_init__(self):
        targets = (self.targets,) if isinstance(self.targets, str) else tuple(self.targets)
        for t in targets:
            if not isinstance(t, str) or not t:
                raise KilnError(f"AnnotateTarget: targets must be names of external compilers (str), got {t!r}")
        object.__setattr__(self, "targets", tuple(str(t) for t in targets))

    def transform_module(self, mod, ctx):
        mod = infer_type(mod)
        out = mod.shallow_copy()
        for gv, func in mod.functions.items():
            if isinstance(func, Function) and not skip_function(func):
                out[gv] = _Annotator(self.targets, self.include_non_call_ops).visit(func)
        return infer_type(out)
