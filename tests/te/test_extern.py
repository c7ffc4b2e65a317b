"""te.extern and te.extern_primfunc (kiln/te/extern.py), and call_packed passing buffers as DLTensors."""

import numpy as np
import pytest

import kiln
from kiln import te, tir
from kiln.error import TIRError
from kiln.script import tir as T


def test_extern_declares_buffers_and_outputs():
    m = te.size_var("m")
    A = te.placeholder((m,), name="A")
    B = te.placeholder((m,), name="B", dtype="float32")
    seen = {}

    def fcompute(ins, outs):
        seen["ins"], seen["outs"] = ins, outs
        return tir.call_packed("my.add", ins[0], ins[1], outs[0], outs[1])

    C, D = te.extern([(m,), (m, 2)], [A, B], fcompute, name="C")
    assert isinstance(C.op, te.ExternOp) and D.op is C.op and D.value_index == 1
    assert tuple(C.shape) == (m,) and len(D.shape) == 2 and C.dtype == "float32"
    assert all(isinstance(b, tir.Buffer) for b in seen["ins"] + seen["outs"])
    assert C.op.input_tensors == [A, B] and list(C.op.output_placeholders) == seen["outs"]
    call = C.op.body.value
    packed = call.args[1]
    assert packed.op.name == "tir.tvm_stack_make_array" and packed.args[0] is seen["ins"][0].data
    assert packed.args[1].op.name == "tir.tvm_stack_make_shape" and packed.args[3].value == 1


def test_extern_needs_a_dtype_for_mixed_inputs_and_a_statement():
    A = te.placeholder((4,), name="A")
    B = te.placeholder((4,), name="B", dtype="int32")
    with pytest.raises(TIRError, match="dtype"):
        te.extern((4,), [A, B], lambda ins, outs: tir.call_packed("f", ins[0]))
    with pytest.raises(TIRError, match="PrimExpr or Stmt"):
        te.extern((4,), [A], lambda ins, outs: 3.5)
    with pytest.raises(TIRError, match="in_buffers"):
        te.extern((4,), [A], lambda ins, outs: tir.call_packed("f"), in_buffers=[])


@T.prim_func
def _scale_in_place(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("s"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
            A[vi] = A[vi] + T.float32(1)


def test_extern_primfunc_inputs_outputs_and_build():
    X = te.placeholder((8,), name="X")
    out = te.extern_primfunc([X], _scale_in_place)
    assert isinstance(out, te.Tensor) and out.op.output_placeholders[0] is _scale_in_place.buffer_map[
        _scale_in_place.params[1]]
    func = te.create_prim_func([X, out])
    mod = kiln.build(func, target="llvm")
    x = np.random.default_rng(0).random(8, dtype="float32")
    xa, ya = kiln.nd.array(x), kiln.nd.array(np.zeros(8, "float32"))
    mod(xa, ya)
    np.testing.assert_allclose(ya.numpy(), x * 2, rtol=1e-6)
    np.testing.assert_allclose(xa.numpy(), x + 1, rtol=1e-6)


def test_extern_primfunc_checks_the_input_tensors():
    with pytest.raises(TIRError, match="does not match"):
        te.extern_primfunc([te.placeholder((4,), name="X")], _scale_in_place)
    with pytest.raises(TIRError, match="input tensors"):
        te.extern_primfunc([], _scale_in_place)


def test_extern_stage_in_a_schedule_lowers_and_runs():
    A = te.placeholder((6,), name="A")
    P = te.compute((6,), lambda i: A[i] + 1.0, name="P")

    def body(ins, outs):
        i = tir.Var("i", "int32")
        return tir.For(i, 0, 6, tir.ForKind.SERIAL, tir.BufferStore(outs[0], ins[0][5 - i] * 3.0, [i]))

    E = te.extern((6,), [P], body, name="E")
    Q = te.compute((6,), lambda i: E[i] - 2.0, name="Q")
    s = te.create_schedule(Q.op)
    s[P].compute_at(s[Q], Q.op.axis[0])  # the extern reads P whole: refused below
    with pytest.raises(TIRError, match="computed inside stage Q"):
        kiln.lower(s, [A, Q])
    s[P].compute_root()
    f = kiln.build(s, [A, Q])
    a = np.random.default_rng(7).random(6, dtype="float32")
    q = kiln.nd.array(np.zeros(6, "float32"))
    f(kiln.nd.array(a), q)
    np.testing.assert_allclose(q.numpy(), (a[::-1] + 1) * 3 - 2, rtol=1e-6)
