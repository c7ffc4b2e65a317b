"""Converters of ONNX recurrent layers: RNN, GRU and LSTM, unrolled over the (static) sequence length.

For each direction the input projection of every time step is one ``nn.dense`` over the whole sequence
(``(seq * batch, input) x W^T``); then each step adds the recurrent projection ``nn.dense(h, R)`` and applies the
gate equations of the ONNX definition with Relay element-wise operators (gate order ``iofc`` for LSTM, ``zrh`` for
GRU, optional peepholes, ``clip``, ``input_forget``, ``linear_before_reset``, the named activation functions with
their ``activation_alpha``/``activation_beta``). A reverse direction walks the steps backwards and stores each
output at its own time index. ``Y`` stacks the per-step states as ``(seq, directions, batch, hidden)``
(``layout=1``: batch first). ``sequence_lens`` must give every sequence the full length.
"""

import numpy as np

from ....error import OpNotImplemented
from ... import op as _op
from ...op import nn as _nn
from .common import OnnxOpConverter, const, register

_TAKES_ALPHA = {"Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu"}
_TAKES_BETA = {"Affine", "ScaledTanh", "HardSigmoid"}
_DEFAULT_ALPHA = {"LeakyRelu": 0.01, "ThresholdedRelu": 1.0, "HardSigmoid": 0.2, "Elu": 1.0}
_DEFAULT_BETA = {"HardSigmoid": 0.5}
#: activation names are case-insensitive in exported models ("tanh", "Tanh")
_CANONICAL = {n.lower(): n for n in ["Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh",
                                     "HardSigmoid", "Elu", "Softsign", "Softplus"]}


def _gates(pre, count, hidden):
    """The ``count`` gate pre-activations of a cell, each its own slice of ``pre`` (batch, count * hidden): unlike a
    ``split``, whose tuple ends a fused group, a slice fuses into the element-wise gate math that reads it, so an
    LSTM step is the matrix product and two element-wise kernels, not three. (A GRU's gates are read by three
    different kernels, two of them matrix products a slice cannot fuse into: there one split stays cheaper.)"""
    return [_op.strided_slice(pre, [k * hidden], [(k + 1) * hidden], axes=[1]) for k in range(count)]


def _activation(name, alpha, beta, dtype):
    """The ONNX RNN activation ``name`` as a function of one expression."""
    c = lambda v: const(v, dtype)  # noqa: E731
    table = {
        "Relu": _nn.relu, "Tanh": _op.tanh, "Sigmoid": _op.sigmoid,
        "Affine": lambda x: _op.add(_op.multiply(c(alpha), x), c(beta)),
        "LeakyRelu": lambda x: _nn.leaky_relu(x, alpha),
        "ThresholdedRelu": lambda x: _op.where(_op.greater(x, c(alpha)), x, c(0)),
        "ScaledTanh": lambda x: _op.multiply(c(alpha), _op.tanh(_op.multiply(c(beta), x))),
        "HardSigmoid": lambda x: _op.clip(_op.add(_op.multiply(c(alpha), x), c(beta)), 0.0, 1.0),
        "Elu": lambda x: _op.where(_op.greater(x, c(0)), x, _op.multiply(c(alpha), _op.subtract(_op.exp(x), c(1)))),
        "Softsign": lambda x: _op.divide(x, _op.add(c(1), _op.abs(x))),
        "Softplus": lambda x: _op.log(_op.add(c(1), _op.exp(x))),
    }
    if name not in table:
        raise OpNotImplemented(f"RNN activation {name!r} is not supported")
    return table[name]


def _activations(attr, defaults, directions, dtype):
    """Per direction, the list of activation functions (alphas and betas consumed in order)."""
    names = list(attr.get("activations", defaults * directions))
    alphas, betas = list(attr.get("activation_alpha", [])), list(attr.get("activation_beta", []))
    funcs = []
    for name in names:
        name = _CANONICAL.get(name.lower(), name)
        alpha = alphas.pop(0) if name in _TAKES_ALPHA and alphas else _DEFAULT_ALPHA.get(name, 1.0)
        beta = betas.pop(0) if name in _TAKES_BETA and betas else _DEFAULT_BETA.get(name, 0.0)
        funcs.append(_activation(name, alpha, beta, dtype))
    per = len(defaults)
    if len(funcs) == per and directions == 2:
        funcs = funcs * 2
    return [funcs[d * per : (d + 1) * per] for d in range(directions)]


class _Recurrent(OnnxOpConverter):
    """Shared unrolling; subclasses give the gate count, default activations and the cell."""

    gates = 1
    default_activations = ["Tanh"]

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        inputs = list(inputs) + [None] * (8 - len(inputs))
        x, w, r, b, lens, h0 = inputs[:6]
        layout = attr.get("layout", 0)
        if layout:  # batch first: work sequence first
            x = _op.transpose(x, (1, 0, 2))
            h0 = None if h0 is None else _op.transpose(h0, (1, 0, 2))
            if inputs[6] is not None:
                inputs[6] = _op.transpose(inputs[6], (1, 0, 2))
        x = ctx.typed(x)
        seq, batch, size = ctx.shape(x)
        dtype = ctx.dtype(x)
        hidden = attr.get("hidden_size", ctx.shape(r)[-1])
        direction = attr.get("direction", "forward")
        dirs = 2 if direction == "bidirectional" else 1
        if lens is not None:
            values = ctx.value(lens, "sequence_lens")
            if not (values == seq).all():
                raise ctx.error(f"sequence_lens {values.tolist()} shorter than the sequence ({seq}) are not supported",
                                OpNotImplemented)
        acts = _activations(attr, cls.default_activations, dirs, dtype)
        flat_x = _op.reshape(x, (seq * batch, size))
        outputs, finals, cells = [], [], []
        for d in range(dirs):
            wd = _op.squeeze(_op.strided_slice(w, [d], [d + 1], axes=[0]), axis=[0])
            rd = _op.squeeze(_op.strided_slice(r, [d], [d + 1], axes=[0]), axis=[0])
            bias = None
            if b is not None:
                bd = _op.squeeze(_op.strided_slice(b, [d], [d + 1], axes=[0]), axis=[0])
                bias = _op.split(bd, 2, axis=0)
            proj = _nn.dense(flat_x, wd)
            if bias is not None:
                proj = _op.add(proj, bias[0])
            steps = _op.split(_op.reshape(proj, (seq, batch, cls.gates * hidden)), seq, axis=0)
            state = cls._initial(h0, d, batch, hidden, dtype)
            extra = cls._initial(inputs[6], d, batch, hidden, dtype) if cls.gates == 4 else None
            reverse = direction == "reverse" or d == 1
            step_out = [None] * seq
            for t in (range(seq - 1, -1, -1) if reverse else range(seq)):
                xt = _op.squeeze(steps[t], axis=[0])
                state, extra = cls._cell(xt, state, extra, rd, None if bias is None else bias[1], acts[d], attr, d,
                                         inputs, hidden, dtype)
                step_out[t] = state
            outputs.append(step_out)
            finals.append(state)
            cells.append(extra)
        y = _op.concatenate([_op.concatenate([_op.reshape(outputs[d][t], (1, 1, batch, hidden)) for d in range(dirs)],
                                             1) for t in range(seq)], 0)
        y_h = _op.concatenate([_op.expand_dims(s, 0) for s in finals], 0)
        results = [y, y_h]
        if cls.gates == 4:
            results.append(_op.concatenate([_op.expand_dims(c, 0) for c in cells], 0))
        if layout:
            results = [_op.transpose(results[0], (2, 0, 1, 3))] + [_op.transpose(v, (1, 0, 2)) for v in results[1:]]
        return results

    @staticmethod
    def _initial(value, d, batch, hidden, dtype):
        if value is None:
            return const(np.zeros((batch, hidden), dtype), dtype)
        return _op.squeeze(_op.strided_slice(value, [d], [d + 1], axes=[0]), axis=[0])

    @staticmethod
    def _clip(x, attr):
        clip = attr.get("clip")
        return x if clip is None else _op.clip(x, -clip, clip)


@register("RNN")
class RNN(_Recurrent):
    """``h = f(x W^T + h R^T + b)``."""

    gates = 1
    default_activations = ["Tanh"]

    @classmethod
    def _cell(cls, xt, h, c, r, rbias, acts, attr, d, inputs, hidden, dtype):
        pre = _op.add(xt, _nn.dense(h, r))
        if rbias is not None:
            pre = _op.add(pre, rbias)
        return acts[0](cls._clip(pre, attr)), None


@register("GRU")
class GRU(_Recurrent):
    """Update and reset gates (``zrh``); ``linear_before_reset`` applies the reset after the recurrent product."""

    gates = 3
    default_activations = ["Sigmoid", "Tanh"]

    @classmethod
    def _cell(cls, xt, h, c, r, rbias, acts, attr, d, inputs, hidden, dtype):
        f, g = acts
        xz, xr, xh = _op.split(xt, 3, axis=1)
        rz, rr, rh = _op.split(r, 3, axis=0)
        bz, br, bh = (None, None, None) if rbias is None else _op.split(rbias, 3, axis=0)

        def plus(a, bias):
            return a if bias is None else _op.add(a, bias)

        z = f(cls._clip(_op.add(xz, plus(_nn.dense(h, rz), bz)), attr))
        reset = f(cls._clip(_op.add(xr, plus(_nn.dense(h, rr), br)), attr))
        if attr.get("linear_before_reset", 0):
            recurrent = _op.multiply(reset, plus(_nn.dense(h, rh), bh))
        else:
            recurrent = plus(_nn.dense(_op.multiply(reset, h), rh), bh)
        candidate = g(cls._clip(_op.add(xh, recurrent), attr))
        one = const(1, dtype)
        return _op.add(_op.multiply(_op.subtract(one, z), candidate), _op.multiply(z, h)), None


@register("LSTM")
class LSTM(_Recurrent):
    """Input, output, forget and cell gates (``iofc``) with optional peepholes and coupled input/forget gates."""

    gates = 4
    default_activations = ["Sigmoid", "Tanh", "Tanh"]

    @classmethod
    def _cell(cls, xt, h, c, r, rbias, acts, attr, d, inputs, hidden, dtype):
        f, g, act_h = acts
        pre = _op.add(xt, _nn.dense(h, r))
        if rbias is not None:
            pre = _op.add(pre, rbias)
        pi, po, pf, pc = _gates(pre, 4, hidden)
        peep = inputs[7]
        if peep is not None:
            pd = _op.squeeze(_op.strided_slice(peep, [d], [d + 1], axes=[0]), axis=[0])
            peep_i, peep_o, peep_f = _op.split(pd, 3, axis=0)
            pi = _op.add(pi, _op.multiply(peep_i, c))
            pf = _op.add(pf, _op.multiply(peep_f, c))
        i = f(cls._clip(pi, attr))
        forget = _op.subtract(const(1, dtype), i) if attr.get("input_forget", 0) else f(cls._clip(pf, attr))
        cell = _op.add(_op.multiply(forget, c), _op.multiply(i, g(cls._clip(pc, attr))))
        if peep is not None:
            po = _op.add(po, _op.multiply(peep_o, cell))
        o = f(cls._clip(po, attr))
        return _op.multiply(o, act_h(cell)), cell
