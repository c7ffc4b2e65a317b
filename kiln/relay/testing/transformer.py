"""A transformer encoder block built with the Relay builders (for pass tests and benchmarks).

``get_net`` returns ``fn (%data: Tensor[(batch, seq, hidden)], weights...)``: multi-head self-attention (dense
projections, reshape/transpose into heads, batch_matmul, scaling, softmax, batch_matmul, merge heads, output
projection), a residual add with layer_norm, then a feed-forward block (dense, bias, an erf GELU, dense) with a
second residual and layer_norm.
"""

import numpy as np

from ...runtime.ndarray import array
from .. import op as _op
from ..expr import const, var
from ..function import Function
from ..op import nn


def _dense(x, weight, bias):
    return _op.add(nn.dense(x, weight), bias)


def get_net(batch=1, seq=16, hidden=64, heads=4, ffn=128, dtype="float32", num_layers=1) -> Function:
    """The encoder (``num_layers`` blocks) as a Relay function whose weights are parameters."""
    if hidden % heads:
        raise ValueError(f"hidden size {hidden} is not divisible by {heads} heads")
    data = var("data", shape=(batch, seq, hidden), dtype=dtype)
    params = [data]

    def weight(name, shape):
        v = var(name, shape=shape, dtype=dtype)
        params.append(v)
        return v

    head = hidden // heads
    x = data
    for layer in range(num_layers):
        p = f"layer{layer}."
        flat = _op.reshape(x, (batch * seq, hidden))

        def project(name, flat=flat, p=p):
            y = _dense(flat, weight(p + name + ".weight", (hidden, hidden)), weight(p + name + ".bias", (hidden,)))
            y = _op.reshape(y, (batch, seq, heads, head))
            return _op.reshape(_op.transpose(y, (0, 2, 1, 3)), (batch * heads, seq, head))

        q, k, v = project("query"), project("key"), project("value")
        scores = _op.multiply(nn.batch_matmul(q, k), const(1.0 / np.sqrt(head), dtype))
        attn = nn.softmax(scores, axis=-1)
        ctx = nn.batch_matmul(attn, v, transpose_b=False)
        ctx = _op.transpose(_op.reshape(ctx, (batch, heads, seq, head)), (0, 2, 1, 3))
        ctx = _op.reshape(ctx, (batch * seq, hidden))
        out = _dense(ctx, weight(p + "out.weight", (hidden, hidden)), weight(p + "out.bias", (hidden,)))
        out = _op.add(_op.reshape(out, (batch, seq, hidden)), x)
        x = nn.layer_norm(out, weight(p + "ln1.gamma", (hidden,)), weight(p + "ln1.beta", (hidden,)))
        flat = _op.reshape(x, (batch * seq, hidden))
        h = _dense(flat, weight(p + "ffn1.weight", (ffn, hidden)), weight(p + "ffn1.bias", (ffn,)))
        gelu = _op.multiply(_op.multiply(h, const(0.5, dtype)),
                            _op.add(const(1.0, dtype), _op.erf(_op.multiply(h, const(1 / np.sqrt(2), dtype)))))
        h = _dense(gelu, weight(p + "ffn2.weight", (hidden, ffn)), weight(p + "ffn2.bias", (hidden,)))
        x = nn.layer_norm(_op.add(_op.reshape(h, (batch, seq, hidden)), x),
                          weight(p + "ln2.gamma", (hidden,)), weight(p + "ln2.beta", (hidden,)))
    return Function(params, x)


def get_workload(batch=1, seq=16, hidden=64, heads=4, ffn=128, dtype="float32", num_layers=1, seed=0):
    """``(mod, params)``: the encoder in ``@main`` and seeded random weights by parameter name."""
    from ...ir.module import IRModule

    func = get_net(batch, seq, hidden, heads, ffn, dtype, num_layers)
    rng = np.random.default_rng(seed)
    params = {}
    for p in func.params[1:]:
        shape = p.type_annotation.shape
        scale = 1.0 if p.name_hint.endswith("gamma") else 0.1
        value = rng.standard_normal(shape) * scale + (1.0 if p.name_hint.endswith("gamma") else 0.0)
        params[p.name_hint] = array(value.astype(dtype))
    return IRModule.from_expr(func), params
