"""annotation.checkpoint (kiln/relay/op/annotation.py): the identity, typed as its argument, in the interpreter and
compiled."""

import numpy as np

from kiln import relay

from .checks import check


def test_checkpoint_is_the_identity():
    x = relay.var("x", shape=(2, 3))
    y = relay.annotation.checkpoint(relay.exp(x))
    assert relay.infer_type(relay.Function([x], y)).body.checked_type == relay.TensorType((2, 3), "float32")
    data = np.random.default_rng(0).uniform(-1, 1, (2, 3)).astype("float32")
    check(y * relay.const(2.0), {"x": data}, np.exp(data) * 2)
