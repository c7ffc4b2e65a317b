"""FuseOps on random dataflow graphs: every fused program computes what the unfused one did, is well formed, and
keeps every operator exactly once (checked with the reference interpreter on random inputs)."""

import numpy as np
import pytest

from kiln import relay
from kiln.relay.analysis import well_formed
from kiln.relay.testing import assert_same_results
from kiln.relay.transform.fuse_ops import fuse_function

SHAPE = (2, 4, 6)


def _random_graph(seed):
    rng = np.random.default_rng(seed)
    x = relay.var("x", shape=SHAPE)
    y = relay.var("y", shape=SHAPE)
    values = [x, y]
    for _ in range(int(rng.integers(4, 14))):
        kind = rng.integers(0, 9)
        a = values[int(rng.integers(0, len(values)))]
        b = values[int(rng.integers(0, len(values)))]
        if kind == 0:
            v = relay.add(a, b)
        elif kind == 1:
            v = relay.exp(relay.negative(relay.abs(a)))
        elif kind == 2:
            v = relay.multiply(a, relay.const(0.5))
        elif kind == 3:  # injective round trip keeps the shape
            v = relay.reshape(relay.transpose(a, (0, 2, 1)), SHAPE)
        elif kind == 4:  # reduction then broadcast back
            v = relay.add(b, relay.sum(a, axis=2, keepdims=True))
        elif kind == 5:  # opaque
            v = relay.nn.softmax(a, axis=-1)
        elif kind == 6:  # tuple and projections
            parts = relay.split(a, 2, axis=1)
            v = relay.concatenate([parts[1], parts[0]], axis=1)
        elif kind == 7:
            v = relay.maximum(a, relay.strided_slice(b, (0, 0, 0), (2, 4, 6)))
        else:  # out-element-wise-fusable through batch_matmul
            v = relay.reshape(relay.nn.batch_matmul(relay.reshape(a, (2, 4, 6)), relay.reshape(b, (2, 4, 6))),
                              (2, 4, 4))
            v = relay.concatenate([v, relay.strided_slice(a, (0, 0, 0), (2, 4, 2))], axis=2)
        values.append(v)
    # several outputs so that some groups have consumers outside them
    outs = [values[-1], values[int(rng.integers(2, len(values)))]]
    return relay.Function([x, y], relay.Tuple(outs))


def _count_ops(expr):
    names = []
    relay.post_order_visit(expr, lambda e: names.append(e.op.name) if isinstance(e, relay.Call)
                           and isinstance(e.op, relay.Op) else None)
    return sorted(names)


@pytest.mark.parametrize("level", [0, 1, 2])
@pytest.mark.parametrize("seed", range(20))
def test_random_graph(seed, level):
    before = relay.infer_type(_random_graph(seed))
    after = fuse_function(before, level)
    assert well_formed(after)
    assert _count_ops(after) == _count_ops(before)
    assert_same_results(before, after, seed=seed, rtol=1e-5, atol=1e-5, trials=1)
