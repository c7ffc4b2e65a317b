"""The forward-rewrite driver of the quantization passes: rules over temporary values, realization where a value
meets a call without a rule, tuples carrying temporary fields, and the hook for values used more than once."""

import numpy as np

import kiln
from kiln import relay
from kiln.ir.op import register_op_attr
from kiln.relay.quantize.forward_rewrite import TempExpr, forward_rewrite

ATTR = "kiln.test.FNegateRewrite"


class Negated(TempExpr):
    """A value held as its negation (realized by negating back)."""

    def __init__(self, inner):
        self.inner = inner

    def realize(self):
        return relay.negative(self.inner)


def _exp_rule(ref_call, new_args, ctx):
    """exp(a), held negated; an operand held negated is read back first."""
    (arg,) = new_args
    value = arg.realize() if isinstance(arg, Negated) else arg
    return Negated(relay.negative(relay.exp(value)))


register_op_attr("exp", ATTR, _exp_rule, level=11)


def _evaluate(expr, *args):
    func = relay.Function(relay.analysis.free_vars(expr), expr)
    return relay.create_executor("debug", mod=kiln.IRModule.from_expr(func)).evaluate()(*args).numpy()


def test_values_survive_the_rewrite():
    x = relay.var("x", shape=(3,))
    expr = relay.add(relay.exp(relay.exp(x)), relay.Tuple([relay.exp(x), x])[0])
    data = np.array([0.1, -0.5, 0.3], "float32")
    shared = []
    out = forward_rewrite(expr, ATTR, fmulti_ref=lambda v: shared.append(v) or v)
    # exp(x) is built twice (two distinct calls), x itself is used three times
    np.testing.assert_allclose(_evaluate(out, data), _evaluate(expr, data), rtol=1e-6)
    assert shared  # the multi-reference hook saw the shared operand
    func = relay.Function([x], expr)
    rewritten = forward_rewrite(func, ATTR)
    assert isinstance(rewritten, relay.Function) and list(rewritten.params) == [x]
    unchanged = relay.add(x, x)
    assert forward_rewrite(unchanged, ATTR) is unchanged  # nothing to rewrite: the same node
