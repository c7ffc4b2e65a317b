"""Legalize (kiln/relay/transform/legalize.py): calls are replaced by what their operator's hook returns."""

import numpy as np

from kiln import relay
from kiln.ir import assert_structural_equal
from kiln.relay.testing import assert_same_results, run_opt_pass
from kiln.relay.testing.temp_op_attr import TempOpAttr


def test_hook_rewrites_and_none_keeps():
    """A hook turning ``subtract(a, b)`` into ``add(a, negative(b))`` when ``b`` is a 2-D tensor; it sees the
    argument types and the result type."""
    seen = []

    def legalize_subtract(attrs, inputs, types):
        seen.append(types)
        if len(types[1].shape) != 2:
            return None
        return relay.add(inputs[0], relay.negative(inputs[1]))

    x, y, z = relay.var("x", shape=(2, 3)), relay.var("y", shape=(2, 3)), relay.var("z", shape=(3,))
    before = relay.Function([x, y, z], relay.subtract(relay.subtract(x, y), z))
    with TempOpAttr("subtract", "FTVMLegalize", legalize_subtract):
        after = run_opt_pass(before, relay.transform.Legalize())
    expected = relay.Function([x, y, z], relay.subtract(relay.add(x, relay.negative(y)), z))
    assert_structural_equal(after, relay.infer_type(expected))
    assert [str(t[-1]) for t in seen] == ["Tensor[(2, 3), float32]"] * 2
    assert_same_results(before, after)


def test_without_hooks_nothing_changes():
    x = relay.var("x", shape=(4,))
    before = relay.infer_type(relay.Function([x], relay.exp(x) * relay.const(np.float32(2))))
    assert_structural_equal(run_opt_pass(before, relay.transform.Legalize()), before)
