"""Symbolic dimensions: a ``te.var``/``te.size_var`` written into a tensor type (TVM's way of naming an unknown
size) is a named ``relay.Any`` that relations keep wherever they pass the dimension through."""

import numpy as np
import pytest

import kiln
from kiln import relay, te
from kiln.error import TypeInferenceError
from kiln.ir.type import Any, TensorType
from kiln.relay.testing import run_infer_type
from kiln.runtime.vm import VirtualMachine


def test_a_variable_dimension_is_named_by_its_variable():
    n, m = te.size_var("n"), te.var("m")
    t = TensorType((n, 3), "float32")
    assert str(t) == "Tensor[(n, 3), float32]"
    assert t.is_dynamic and isinstance(t.shape[0], Any)
    assert t.shape[0] == n and t.shape[0] != m
    assert t == TensorType((n, 3)) and t != TensorType((m, 3)) and t != TensorType((Any(), 3))
    assert hash(t) == hash(TensorType((n, 3)))
    with pytest.raises(TypeInferenceError, match="n"):
        int(t.shape[0])


def test_an_expression_of_variables_is_an_unnamed_dynamic_dimension():
    n = te.size_var("n")
    assert TensorType((n * 2, 4)).shape[0] == Any()


@pytest.mark.parametrize("axis, keepdims, expected", [
    (1, True, lambda d1, d2, d3: (d1, 1, d3)),
    ((0, 1), False, lambda d1, d2, d3: (d3,)),
    (None, True, lambda d1, d2, d3: (1, 1, 1)),
])
def test_reductions_keep_the_symbols_they_do_not_reduce(axis, keepdims, expected):
    dims = te.var("d1"), te.var("d2"), te.var("d3")
    x = relay.var("x", relay.TensorType(dims, "float32"))
    typed = run_infer_type(relay.sum(x, axis, keepdims))
    assert typed.checked_type == relay.TensorType(expected(*dims), "float32")


def test_elementwise_and_dense_carry_the_batch_symbol():
    n, k = te.size_var("n"), te.size_var("k")
    x = relay.var("x", relay.TensorType((n, k), "float32"))
    w = relay.var("w", relay.TensorType((8, k), "float32"))
    typed = run_infer_type(relay.nn.relu(relay.nn.dense(x, w)))
    assert typed.checked_type == relay.TensorType((n, 8), "float32")


def test_two_different_symbols_broadcast_to_an_unknown_size():
    n, m = te.size_var("n"), te.size_var("m")
    a = relay.var("a", relay.TensorType((n, 4)))
    b = relay.var("b", relay.TensorType((m, 4)))
    assert run_infer_type(relay.add(a, b)).checked_type == relay.TensorType((Any(), 4))
    assert run_infer_type(relay.add(a, a)).checked_type == relay.TensorType((n, 4))


def test_a_function_over_a_symbolic_batch_runs_on_the_vm():
    n = te.size_var("n")
    x = relay.var("x", relay.TensorType((n, 4), "float32"))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], relay.sum(relay.exp(x), 1))))
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu())
    for rows in (1, 5):
        data = np.random.rand(rows, 4).astype("float32")
        np.testing.assert_allclose(vm.run(data).numpy(), np.exp(data).sum(1), rtol=1e-5)


def test_a_dtype_without_bits_has_tvms_default_width():
    assert TensorType((1,), "int") == TensorType((1,), "int32")
    assert TensorType((), "float").dtype == "float32" and TensorType((), "uint").dtype == "uint32"
    assert TensorType((), "bfloat").dtype == "bfloat16" and TensorType((), "bool").dtype == "bool"
