"""FakeQuantizationToInteger: regions ``dequantize -> float operators -> quantize`` rewritten into integer operators.

A fake-quantized program computes in float between ``qnn.dequantize`` and ``qnn.quantize`` calls::

    x    w                     x    w
    |    |                      \\  /
    dq   dq          ->      qnn.conv2d
     \\  /                         |
     conv2d                    requantize
       |
       q

The pass (TVM's ``src/relay/transforms/fake_quantization_to_integer.cc``) works in three steps for every
``qnn.quantize`` it meets, walking the function bottom-up:

1. *extract*: from the quantize's data argument, walk up to the ``qnn.dequantize`` calls that bound the region,
   noting each dequantize's affine type (:class:`~kiln.ir.TensorAffineType`: scale, zero point, integer dtype,
   axis). The region is only dataflow: a variable, ``let``, ``if`` or function inside it means it is not
   fake-quantized, and nothing is rewritten.
2. *check*: every operator of the region must have a rewrite rule (the op attribute
   ``FTVMFakeQuantizationToInteger``, or ``FTVMOptionalFakeQuantizationToInteger`` for the operators named in
   ``optional_qnn_ops``); the rules live beside the quantized operators (:mod:`kiln.relay.qnn.op.fake_quantization`).
3. *rewrite*: top-down from the quantize, each call's arguments are rewritten first, then its rule turns the call
   into integer operators given the arguments' affine types, returning the new expression and its affine type.
   The quantize's own type is recorded for every call before its rule runs, for operators whose output
   quantization only the region's end tells (``type_map[expr]``). A rule that raises leaves the region as it was,
   unless ``hard_fail``.

With ``use_qat`` a second walk converts, one by one, the operators of a fixed list whose arguments are all
dequantized (or constant), even outside a complete region: ``erf(batch_matmul(dq(a), dq(b)))`` becomes
``erf(dq(qnn.batch_matmul(a, b)))``, so quantization-aware-trained graphs whose regions have no closing quantize
still run their heavy operators on integers.
"""

from dataclasses import dataclass

from ...error import KilnError
from ...ir.affine_type import TensorAffineType, TupleAffineType
from ...ir.op import Op
from ...ir.transform import PassInfo, register_pass
from ..expr import Call
from ..expr_functor import ExprMutator, ExprVisitor
from ..function import Function
from .function_pass import FunctionPass
from .infer_type import InferTypeLocal, infer_type

__all__ = ["FakeQuantizationToInteger", "fake_quantization_to_integer", "QAT_OPS"]

RULE, OPTIONAL_RULE = "FTVMFakeQuantizationToInteger", "FTVMOptionalFakeQuantizationToInteger"

QAT_OPS = frozenset({
    "broadcast_to", "clip", "expand_dims", "max", "maximum", "min", "minimum", "nn.avg_pool2d", "nn.batch_flatten",
    "nn.batch_matmul", "nn.bias_add", "nn.conv2d", "nn.conv2d_transpose", "nn.dense", "nn.depth_to_space",
    "nn.global_avg_pool2d", "nn.max_pool2d", "nn.pad", "nn.relu", "reshape", "split", "squeeze", "strided_slice",
    "transpose"})
"""The operators the QAT walk converts on their own (TVM's list): those whose output quantization follows from
their arguments'."""


def _op_name(call):
    return call.op.name if isinstance(call.op, Op) else None


def get_op_attr(name, key):
    """Operator ``name``'s attribute ``key``, or None."""
    return Op.get(name).get_attr(key)


def _rule_for(name, optional):
    """The rewrite rule of operator ``name``, or None."""
    if name is None:
        return None
    rule = get_op_attr(name, RULE)
    if rule is None and name in optional:
        rule = get_op_attr(name, OPTIONAL_RULE)
    return rule


def _dequantize_type(call):
    """The affine type a ``qnn.dequantize`` call reads its integers with."""
    data = call.args[0]
    dtype = (data.checked_type_ if data.checked_type_ is not None else InferTypeLocal(data)).dtype
    return TensorAffineType(call.args[1], call.args[2], dtype, call.attrs.axis)


class _RegionExtractor(ExprVisitor):
    """Step 1: the calls of the region above ``root`` (bounded by dequantizes) and the dequantizes' affine types.

    ``root`` is a quantize (its data argument is walked) or, for the QAT walk, the one operator to convert (all its
    arguments are walked)."""

    def __init__(self, root):
        super().__init__()
        self.root = root
        self.fake_quantized = True
        self.calls = []
        self.types = {}

    def prune(self, expr):
        return isinstance(expr, Call) and _op_name(expr) == "qnn.dequantize"

    def visit_var(self, var):
        self.fake_quantized = False  # a value from outside the region: not a fake-quantized region

    def visit_let(self, let):
        self.fake_quantized = False

    def visit_if(self, node):
        self.fake_quantized = False

    def visit_function(self, fn):
        self.fake_quantized = False

    def visit_global_var(self, gv):
        self.fake_quantized = False

    def visit_call(self, call):
        name = _op_name(call)
        if name == "qnn.dequantize" and call is not self.root:
            self.types[call] = _dequantize_type(call)
        elif name == "qnn.quantize":
            self.types[call] = TensorAffineType(call.args[1], call.args[2], call.attrs.out_dtype, call.attrs.axis)
        else:
            self.visit(call.op)
            for arg in call.args:
                self.visit(arg)
        if call is not self.root and name != "qnn.quantize":
            self.calls.append(call)

    def region(self):
        self.visit(self.root)
        return self.calls if self.fake_quantized else []


class _RegionRewriter(ExprMutator):
    """Step 3: the region rewritten by the operators' rules, top-down from its root."""

    def __init__(self, types, out_type, optional, qat_root=None):
        super().__init__()
        self.types = types
        self.out_type = out_type
        self.optional = optional
        self.qat_root = qat_root

    def prune(self, expr):
        return isinstance(expr, Call) and _op_name(expr) == "qnn.dequantize"

    def visit_call(self, call):
        name = _op_name(call)
        rule = _rule_for(name, self.optional)
        if rule is None:
            raise KilnError(f"FakeQuantizationToInteger: no rewrite rule for {name or call.op} in a fake-quantized "
                            f"region")
        if name == "qnn.dequantize" and call is not self.qat_root:
            expr = call
        else:
            expr = super().visit_call(call)
            if self.out_type is not None:
                self.types[expr] = self.out_type  # what the region's end says, for rules that need it
        result = rule(expr, self.types)
        if len(result) != 2:
            raise KilnError(f"FakeQuantizationToInteger: the rule of {name} returned {len(result)} values, not "
                            f"[expression, affine type]")
        out, out_type = result
        self.types[out] = out_type
        if call is self.qat_root:
            from ..qnn.op import dequantize  # the QAT walk hands a float value back to the unconverted consumers

            out = dequantize(out, out_type.scale, out_type.zero_point, out_type.axis)
        return out

    def visit_tuple(self, tup):
        new = super().visit_tuple(tup)
        self.types[new] = TupleAffineType([self.types[f] for f in new.fields])
        return new

    def visit_tuple_getitem(self, item):
        new = super().visit_tuple_getitem(item)
        self.types[new] = self.types[new.tuple_value].types[new.index]
        return new


def _rewrite_region(root, pre_root, memo, hard_fail, optional, qat):
    """Steps 1-3 for one region ending at ``root`` (whose original, typed form is ``pre_root``)."""
    extractor = _RegionExtractor(pre_root)
    calls = extractor.region()
    if not calls:
        return root
    # the region was found on the typed originals; rewrite the already rewritten versions of its nodes
    types = {memo.get(k, root if k is pre_root else k): v for k, v in extractor.types.items()}
    for call in calls:
        name = _op_name(memo.get(call, call))
        missing = (name != "qnn.dequantize") if qat else _rule_for(name, optional) is None
        if missing:
            if hard_fail:
                what = "is not dequantized" if qat else "has no rewrite rule"
                raise KilnError(f"FakeQuantizationToInteger: {name} in the region of {_op_name(root)} {what}")
            return root
    out_type = None if qat else types[root]
    try:
        return _RegionRewriter(types, out_type, optional, root if qat else None).visit(root)
    except Exception as exc:
        if hard_fail:
            exc.add_note(f"in FakeQuantizationToInteger, rewriting the region ending at {_op_name(root)}")
            raise
        return root


class _Rewriter(ExprMutator):
    """The function walked bottom-up, each region rewritten at its end (a quantize, or a QAT operator)."""

    def __init__(self, hard_fail, optional, qat):
        super().__init__()
        self.hard_fail, self.optional, self.qat = hard_fail, optional, qat

    def visit_call(self, call):
        post = super().visit_call(call)
        if not isinstance(post, Call):
            return post
        name = _op_name(post)
        if self.qat:
            if name in QAT_OPS and get_op_attr(name, RULE) is not None:
                # the QAT walk judges the call as it now stands (its arguments may be earlier conversions)
                return _rewrite_region(post, post, {}, self.hard_fail, self.optional, True)
        elif name == "qnn.quantize":
            return _rewrite_region(post, call, self.memo_map, self.hard_fail, self.optional, False)
        return post


def fake_quantization_to_integer(func, hard_fail=False, use_qat=False, optional_qnn_ops=()):
    """``func`` (typed) with its fake-quantized regions rewritten in integer operators (module docstring)."""
    optional = frozenset(optional_qnn_ops)
    out = _Rewriter(hard_fail, optional, False).visit(func)
    if use_qat:
        typed = infer_type(out) if isinstance(out, Function) else out
        out = _Rewriter(hard_fail, optional, True).visit(typed)
    return out


@register_pass("FakeQuantizationToInteger")
@dataclass(frozen=True)
class FakeQuantizationToInteger(FunctionPass):
    """Rewrite fake-quantized regions (``dequantize -> float ops -> quantize``) in integer operators.

    Parameters
    ----------
    hard_fail : bool
        Raise when a region cannot be rewritten (an operator without a rule, a rule that fails) instead of leaving
        it as it is.
    use_qat : bool
        Also convert, one at a time, operators whose arguments are all dequantized though no quantize closes their
        region (module docstring).
    optional_qnn_ops : list of str
        Operators whose optional rewrite (``register_optional_fake_quantization_to_integer``, such as
        ``"nn.softmax"``) is wanted.

    Examples
    --------
    >>> mod = relay.transform.FakeQuantizationToInteger()(relay.transform.InferType()(mod))   # doctest: +SKIP
    """

    hard_fail: bool = False
    use_qat: bool = False
    optional_qnn_ops: tuple = ()
    info = PassInfo(0, "FakeQuantizationToInteger", required=("InferType", "DivToMul"))

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "optional_qnn_ops", tuple(str(n) for n in self.optional_qnn_ops or ()))

    def transform_function(self, func, mod, ctx):
        return fake_quantization_to_integer(func, self.hard_fail, self.use_qat, self.optional_qnn_ops)

