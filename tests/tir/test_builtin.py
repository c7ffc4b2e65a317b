"""The builders of TVM's built-in TIR calls: each makes a ``Call`` of its ``tir.<name>`` operator with TVM's dtype."""

from kiln import tir
from kiln.tir.expr import CallEffectKind


def test_builders_make_calls_with_tvm_dtypes():
    h = tir.Var("h", "handle")
    buf = tir.decl_buffer((4, 4), "int8")
    vec = buf.vload([0, 0], dtype="int8x16")
    cases = [
        (tir.tvm_tuple(1, 2), "tir.tvm_tuple", "handle", 2),
        (tir.tvm_struct_get(h, 0, 1, "int64"), "tir.tvm_struct_get", "int64", 3),
        (tir.tvm_struct_set(h, 0, 1, 7), "tir.tvm_struct_set", "int32", 4),
        (tir.address_of(buf[0, 1]), "tir.address_of", "handle", 1),
        (tir.lookup_param("p0"), "tir.lookup_param", "handle", 1),
        (tir.assume(tir.Var("x", "int32") > 0), "tir.assume", "bool", 1),
        (tir.undef(), "tir.undef", "int32", 0),
        (tir.type_annotation("float16"), "tir.type_annotation", "float16", 0),
        (tir.tvm_access_ptr(tir.type_annotation("int8"), buf.data, 0, 16, 1), "tir.tvm_access_ptr", "handle", 5),
        (tir.tvm_throw_last_error(), "tir.tvm_throw_last_error", "handle", 0),
        (tir.vectorlow("int8x8", vec), "tir.vectorlow", "int8x8", 1),
        (tir.vectorhigh("int8x8", vec), "tir.vectorhigh", "int8x8", 1),
        (tir.vectorcombine("int8x32", vec, vec), "tir.vectorcombine", "int8x32", 2),
        (tir.TVMBackendAllocWorkspace(1, 0, 64, 2, 32), "tir.TVMBackendAllocWorkspace", "handle", 5),
        (tir.TVMBackendFreeWorkspace(1, 0, h), "tir.TVMBackendFreeWorkspace", "int32", 3),
    ]
    for call, name, dtype, nargs in cases:
        assert isinstance(call, tir.Call)
        assert (call.op.name, call.dtype, len(call.args)) == (name, dtype, nargs)
    assert tir.lookup_param("p0").args[0].value == "p0"


def test_effect_kinds_keep_side_effects():
    assert tir.tvm_struct_set(tir.Var("h", "handle"), 0, 1, 2).op.get_attr("TCallEffectKind") != CallEffectKind.PURE
    assert tir.TVMBackendFreeWorkspace(1, 0, 0).op.get_attr("TCallEffectKind") == CallEffectKind.OPAQUE
    assert tir.vectorlow("int8x8", tir.Var("v", "int8x16")).op.get_attr("TCallEffectKind") == CallEffectKind.PURE
