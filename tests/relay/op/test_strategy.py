"""Operator strategies (kiln/relay/op/strategy/) and the group builder (kiln/relay/backend/schedule_builder.py):
registration of every Relay operator, implementation selection, anchor choice; topi never imports Relay."""

import pytest

import kiln
from kiln import relay, te
from kiln.error import KilnError, OpNotImplemented
from kiln.ir import Op, TensorType, TupleType
from kiln.relay.backend.schedule_builder import ScheduleBuilder
from kiln.relay.op.attrs import ConcatenateAttrs, Conv2DAttrs, SplitAttrs
from kiln.relay.op.strategy import COMPUTES, OpStrategy, register_all, select_implementation


def test_every_relay_operator_has_a_compute_a_strategy_and_a_reference():
    # call_lowered (kiln.relay.backend) calls an already lowered PrimFunc: nothing to compute or schedule; nor do the
    # memory and VM dialects' ops (TNonComputational: VM instructions, never kernels); operators other tests
    # register (test.*, test_*) have none either
    names = [n for n in kiln.ir.list_op_names() if Op.get(n).get_attr("FTypeRelation") is not None
             and n != "call_lowered" and not Op.get(n).get_attr("TNonComputational") and not n.startswith("test")]
    assert len(names) > 60
    for name in names:
        op = Op.get(name)
        # a quantized (qnn.*) operator is rewritten into plain operators by QnnCanonicalize before lowering, as in
        # TVM: it needs a value for the interpreter, never a kernel of its own
        lowered = op.get_attr("FTVMQnnCanonicalize") is None
        for key in ("FTVMStrategy", "FTVMCompute", "FTVMSchedule", "FEvaluate") if lowered else ("FEvaluate",):
            assert op.get_attr(key) is not None, f"{name} has no {key}"
    assert set(COMPUTES) <= set(names)  # no attribute was set on a name Relay does not define
    register_all()  # a second registration is a no-op


def test_select_implementation_and_errors():
    x = te.placeholder((1, 8, 5, 5), name="x")
    w = te.placeholder((8, 8, 3, 3), name="w")
    ttype = TensorType((1, 8, 3, 3), "float32")
    impl, (out,) = select_implementation("nn.conv2d", Conv2DAttrs(), [x, w], ttype, "llvm")
    assert impl.name == "conv2d_nchw.x86" and impl.plevel == 15
    assert [int(d) for d in out.shape] == [1, 8, 3, 3]
    impl, _ = select_implementation("nn.conv2d", Conv2DAttrs(groups=2), [x, te.placeholder((8, 4, 3, 3))], ttype)
    assert impl.name == "conv2d_nchw_direct.x86"  # grouped: the direct compute and its schedule
    with pytest.raises(OpNotImplemented, match="tir.exp"):
        select_implementation("tir.exp", None, [x], ttype)
    with pytest.raises(OpNotImplemented, match="no implementation"):
        OpStrategy().best()
    best = OpStrategy().add_implementation(None, None, "low", 5).add_implementation(None, None, "high", 20)
    assert best.best().name == "high"


def test_builder_anchor_and_tuple_inputs():
    a, b = te.placeholder((2, 3), name="a"), te.placeholder((2, 5), name="b")
    builder = ScheduleBuilder("llvm")
    (cat,) = builder.call("concatenate", ConcatenateAttrs(1), [[a, b]], TensorType((2, 8), "float32"))
    assert builder.anchor_op == "concatenate"
    pieces = builder.call("split", SplitAttrs(2, 1), [cat],
                          TupleType([TensorType((2, 4), "float32"), TensorType((2, 4), "float32")]))
    assert len(pieces) == 2 and builder.anchor_op == "split"  # equal patterns: the later call anchors
    (total,) = builder.call("sum", kiln.relay.op.attrs.ReduceAttrs((1,)), [pieces[0]], TensorType((2,), "float32"))
    (scaled,) = builder.call("multiply", None, [total, total], TensorType((2,), "float32"))
    assert builder.anchor_op == "sum"  # a reduction outranks the injective calls around it
    s = builder.schedule([scaled, pieces[1]])
    mod = kiln.lower(s, [a, b, scaled, pieces[1]], name="group")
    assert "group" in [gv.name_hint for gv in mod.functions]
    empty = ScheduleBuilder("llvm")
    assert empty.schedule([te.compute((2,), lambda i: a[0, i] * 2.0)]) is not None


def test_attributes_registered_from_python_at_tvms_names():
    """relay.op.register_alter_op_layout / register_compute / register_strategy set the attributes the passes and
    the strategy read (TVM's decorators); a registration at a level already taken is refused."""
    calls = []

    @relay.op.register_alter_op_layout("nn.softmax", level=10)
    def alter(attrs, inputs, tinfos, out_type):
        calls.append(out_type)
        return relay.nn.softmax(inputs[0], axis=attrs.axis)

    try:
        x = relay.var("x", shape=(2, 3))
        mod = kiln.IRModule.from_expr(relay.Function([x], relay.nn.softmax(x)))
        with kiln.transform.PassContext(opt_level=3):
            relay.transform.AlterOpLayout()(relay.transform.InferType()(mod))
        assert len(calls) == 1
        with pytest.raises(KilnError, match="already registered"):
            relay.op.register_alter_op_layout("nn.softmax", alter, level=5)
    finally:
        Op.get("nn.softmax").reset_attr("FTVMAlterOpLayout")
    assert relay.op.register_strategy is not None and relay.op.register_compute is not None
