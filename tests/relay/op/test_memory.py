"""The memory and VM dialects (kiln/relay/op/memory.py, vm.py, reference/memory.py): type relations, attributes,
printing, the reference interpreter's semantics, and the passes that must leave allocations alone."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import OpAttributeInvalid, TypeInferenceError
from kiln.ir import IRModule, TensorType, TupleType
from kiln.relay.op import memory, vm
from kiln.relay.op.memory import StorageType


def _run(func, *args):
    return relay.create_executor("debug", IRModule.from_expr(func)).evaluate()(*args)


def test_types_of_the_dialect_ops():
    storage = memory.alloc_storage(48, dtype_hint="int32")
    tensor = memory.alloc_tensor(storage, 16, (2, 4), "int32")
    x = relay.var("x", shape=(2, 4), dtype="int32")
    body = relay.Tuple([tensor, vm.shape_of(x), vm.reshape_tensor(x, relay.const(np.array([8], "int64"), "int64"),
                                                                   (8,)), memory.kill(x)])
    typed = relay.infer_type(relay.Function([x], body))
    assert typed.ret_type == TupleType([TensorType((2, 4), "int32"), TensorType((2,), "int64"),
                                        TensorType((8,), "int32"), TupleType([])])
    assert relay.infer_type(storage).checked_type == StorageType() and str(StorageType()) == "Storage[]"
    assert tensor.attrs.const_shape == (2, 4)
    text = str(relay.Function([x], body))
    assert "memory.alloc_storage(48i64, dtype_hint=\"int32\")" in text and "const_shape=[2, 4]" in text


def test_type_errors_name_the_problem():
    storage = memory.alloc_storage(16)
    with pytest.raises(TypeInferenceError, match="the size must be an int64 scalar"):
        relay.infer_type(memory.alloc_storage(relay.const(16)))
    computed = relay.var("shape", shape=(2,), dtype="int64")
    with pytest.raises(TypeInferenceError, match="computed at run time needs assert_shape"):
        relay.infer_type(relay.Function([computed], memory.alloc_tensor(storage, 0, computed)))
    typed = relay.infer_type(relay.Function([computed], memory.alloc_tensor(storage, 0, computed,
                                                                            assert_shape=(1, 4))))
    assert typed.ret_type == TensorType((1, 4))
    with pytest.raises(TypeInferenceError, match="first argument must be a storage block"):
        relay.infer_type(memory.alloc_tensor(relay.const(1, "int64"), 0, (2,)))
    x = relay.var("x", shape=(2, 4))
    with pytest.raises(TypeInferenceError, match=r"cannot view Tensor\[\(2, 4\), float32\] as shape \(3,\)"):
        relay.infer_type(relay.Function([x], vm.reshape_tensor(x, relay.const(np.array([3], "int64"), "int64"),
                                                               (3,))))
    with pytest.raises(OpAttributeInvalid, match="alignment: must be a power of two"):
        memory.alloc_storage(16, alignment=24)


def test_reference_semantics_share_bytes():
    """Two tensors of one storage alias in the interpreter, as they do in the VM."""
    x = relay.var("x", shape=(4,))
    storage = relay.var("s", StorageType())
    a, b = relay.var("a"), relay.var("b")
    p = relay.var("p", shape=(4,))
    negate = relay.Function([p], relay.negative(p)).with_attr("Primitive", 1)
    body = relay.Let(storage, memory.alloc_storage(16),
                     relay.Let(a, memory.alloc_tensor(storage, 0, (4,)),
                               relay.Let(relay.var("_"), vm.invoke_tvm_op(negate, [x], [a]),
                                         relay.Let(b, memory.alloc_tensor(storage, 0, (2, 2)), relay.Tuple([a, b])))))
    first, second = _run(relay.Function([x], body), np.arange(4, dtype="float32"))
    np.testing.assert_array_equal(first.numpy(), -np.arange(4))
    np.testing.assert_array_equal(second.numpy(), -np.arange(4).reshape(2, 2))
    shape = _run(relay.Function([x], vm.shape_of(x)), np.zeros(4, "float32"))
    assert shape.numpy().tolist() == [4] and shape.dtype == "int64"


def test_passes_never_fold_merge_or_drop_allocations():
    x = relay.var("x", shape=(4,))
    p = relay.var("p", shape=(4,))
    exp = relay.Function([p], relay.exp(p)).with_attr("Primitive", 1)
    s1, s2, t1, t2, done = (relay.var(n) for n in ("s1", "s2", "t1", "t2", "done"))
    body = relay.Let(s1, memory.alloc_storage(16), relay.Let(s2, memory.alloc_storage(16), relay.Let(
        t1, memory.alloc_tensor(s1, 0, (4,)), relay.Let(t2, memory.alloc_tensor(s2, 0, (4,)), relay.Let(
            done, vm.invoke_tvm_op(exp, [x], [t1]), relay.Let(relay.var("unused"), vm.invoke_tvm_op(exp, [t1], [t2]),
                                                              t2))))))
    before = relay.Function([x], body)
    with kiln.transform.PassContext(opt_level=3):
        after = relay.transform.Sequential([relay.transform.FoldConstant(), relay.transform.EliminateCommonSubexpr(),
                                            relay.transform.DeadCodeElimination(), relay.transform.FuseOps()])(
            IRModule.from_expr(before))["main"]
    calls = []
    relay.post_order_visit(after, lambda e: calls.append(e.op.name) if isinstance(e, relay.Call)
                           and isinstance(e.op, kiln.ir.Op) else None)
    assert calls.count("memory.alloc_storage") == 2 and calls.count("vm.invoke_tvm_op") == 2
    x0 = np.arange(4, dtype="float32")
    np.testing.assert_allclose(_run(after, x0).numpy(), np.exp(np.exp(x0)), rtol=1e-6)


def test_vm_shape_of_reads_tvms_text_and_gives_int64_only():
    mod = relay.parse('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2, 3), float32]) { vm.shape_of(%x, dtype="int64") }')
    assert mod["main"].body.checked_type == relay.TensorType((2,), "int64")
    kiln.ir.assert_structural_equal(mod["main"].body.attrs, vm.shape_of(relay.var("y")).attrs)
    with pytest.raises(kiln.error.TypeInferenceError, match="int64"):
        relay.parse('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2, 3), float32]) { vm.shape_of(%x, dtype="int32") }')
