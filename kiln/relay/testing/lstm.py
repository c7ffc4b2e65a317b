"""An unrolled LSTM (TVM's ``relay.testing.lstm``): ``iterations`` LSTM cells, each a Relay function called on
the step's input, the previous ``(h, c)`` state and its own weights, chained through let bindings.

A cell computes ``gates = dense(x, W_i2h) + b_i2h + dense(h, W_h2h) + b_h2h``, splits them into the input,
forget, transform and output gates, and returns ``(h', (h', c'))`` with ``c' = sigmoid(f) * c + sigmoid(i) *
tanh(t)`` and ``h' = sigmoid(o) * tanh(c')``. Every step's input is a parameter named ``data`` (as in TVM), and
its weights ``i2h_{k}_weight``, ``i2h_{k}_bias``, ``h2h_{k}_weight``, ``h2h_{k}_bias``.
"""

from ...ir.type import TensorType, TupleType
from .. import op as _op
from ..analysis import free_vars
from ..expr import Call, Tuple, TupleGetItem, Var
from ..function import Function
from ..scope_builder import ScopeBuilder
from . import layers
from .init import create_workload


def _types(batch_size, num_hidden, dtype):
    state = TensorType((batch_size, num_hidden), dtype)
    return (state, TensorType((4 * num_hidden, num_hidden), dtype), TensorType((4 * num_hidden,), dtype),
            TupleType((state, state)))


def lstm_cell(num_hidden, batch_size=1, dtype="float32", name="") -> Function:
    """One LSTM cell: ``fn(inputs, states, i2h_weight, i2h_bias, h2h_weight, h2h_bias) -> (h', (h', c'))``."""
    input_type, weight_type, bias_type, state_type = _types(batch_size, num_hidden, dtype)
    dense_type = TensorType((batch_size, 4 * num_hidden), dtype)
    ret_type = TupleType((input_type, state_type))
    inputs, states = Var("inputs", input_type), Var("states", state_type)
    i2h_weight, i2h_bias = Var("i2h_weight", weight_type), Var("i2h_bias", bias_type)
    h2h_weight, h2h_bias = Var("h2h_weight", weight_type), Var("h2h_bias", bias_type)
    sb = ScopeBuilder()
    i2h = sb.let(("i2h", dense_type), layers.dense_add_bias(inputs, i2h_weight, i2h_bias, units=4 * num_hidden,
                                                            name=f"{name}i2h"))
    h2h = sb.let(("h2h", dense_type), layers.dense_add_bias(TupleGetItem(states, 0), h2h_weight, h2h_bias,
                                                            units=4 * num_hidden, name=f"{name}h2h"))
    gates = sb.let(("gates", dense_type), _op.add(i2h, h2h))
    sliced = sb.let(("slice_gates", TupleType((input_type,) * 4)),
                    _op.split(gates, indices_or_sections=4, axis=1).astuple())
    in_gate, forget_gate, transform, out_gate = (
        sb.let((gate, input_type), fn(TupleGetItem(sliced, k)))
        for k, (gate, fn) in enumerate((("in_gate", _op.sigmoid), ("forget_gate", _op.sigmoid),
                                        ("in_transform", _op.tanh), ("out_gate", _op.sigmoid))))
    next_c = sb.let(("next_c", input_type), _op.add(_op.multiply(forget_gate, TupleGetItem(states, 1)),
                                                    _op.multiply(in_gate, transform)))
    next_h = sb.let(("next_h", input_type), _op.multiply(out_gate, _op.tanh(next_c)))
    ret = sb.let(("ret", ret_type), Tuple([next_h, Tuple([next_h, next_c])]))
    sb.ret(ret)
    return Function([inputs, states, i2h_weight, i2h_bias, h2h_weight, h2h_bias], sb.get(), ret_type)


def get_net(iterations, num_hidden, batch_size=1, dtype="float32") -> Function:
    """The unrolled network: ``iterations`` cells from a zero state; returns the last step's output."""
    input_type, weight_type, bias_type, state_type = _types(batch_size, num_hidden, dtype)
    cell_type = TupleType((input_type, state_type))
    sb = ScopeBuilder()
    zeros = sb.let(("zeros", input_type), _op.zeros((batch_size, num_hidden), dtype))
    states = sb.let(("init_states", state_type), Tuple([zeros, zeros]))
    out = None
    for i in range(iterations):
        args = [Var("data", input_type), states, Var(f"i2h_{i}_weight", weight_type), Var(f"i2h_{i}_bias", bias_type),
                Var(f"h2h_{i}_weight", weight_type), Var(f"h2h_{i}_bias", bias_type)]
        call = sb.let((f"call_{i}", cell_type), Call(lstm_cell(num_hidden, batch_size, dtype, f"lstm_{i}"), args))
        out = sb.let((f"out_{i}", input_type), TupleGetItem(call, 0))
        states = sb.let((f"states_{i}", state_type), TupleGetItem(call, 1))
    sb.ret(out)
    body = sb.get()
    return Function(free_vars(body), body, input_type)


def get_workload(iterations, num_hidden, batch_size=1, dtype="float32"):
    """The unrolled LSTM and its parameters (TVM's ``lstm.get_workload``).

    Note: every step's input is a parameter named ``data``, as in TVM; ``params`` holds the weights only.
    """
    return create_workload(get_net(iterations, num_hidden, batch_size, dtype))
