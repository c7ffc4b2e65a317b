"""x86 schedules (kiln/topi/x86/) on fused groups: chains of element-wise consumers, groups with several outputs,
and the loop structure that makes them fast (parallel outer loops, vector accumulators)."""

import re

import numpy as np
import pytest

import kiln
from kiln import te, tir, topi
from kiln.ir import Op, TensorType
from kiln.relay.backend.schedule_builder import ScheduleBuilder
from kiln.relay.op.attrs import BiasAddAttrs, Conv2DAttrs, DenseAttrs, SoftmaxAttrs
from kiln.tir.stmt_functor import pre_order_visit


def _ref(name, attrs, *args):
    return Op.get(name).get_attr("FEvaluate")(attrs, *args)


def _run(s, params, outs, arrays, target="llvm"):
    lib = kiln.build(s, params + outs, target=target, name="f")
    results = [kiln.nd.array(np.zeros([int(d) for d in o.shape], o.dtype)) for o in outs]
    lib["f"](*[kiln.nd.array(a) for a in arrays], *results)
    return [r.numpy() for r in results]


def _conv_group(output_order):
    x = te.placeholder((1, 16, 8, 8), name="x")
    w = te.placeholder((32, 16, 3, 3), name="w")
    b = te.placeholder((32,), name="b")
    attrs = Conv2DAttrs(padding=(1, 1))
    builder = ScheduleBuilder("llvm")
    (conv,) = builder.call("nn.conv2d", attrs, [x, w], TensorType((1, 32, 8, 8), "float32"))
    (biased,) = builder.call("nn.bias_add", BiasAddAttrs(1), [conv, b], TensorType((1, 32, 8, 8), "float32"))
    (relu,) = builder.call("nn.relu", None, [biased], TensorType((1, 32, 8, 8), "float32"))
    assert builder.anchor_op == "nn.conv2d" and builder.anchor_implementation.name == "conv2d_nchw.x86"
    outs = [relu, conv] if output_order == "relu_first" else [conv, relu]
    return builder, attrs, [x, w, b], outs


@pytest.mark.parametrize("order", ["relu_first", "conv_first"])
def test_conv_group_with_two_outputs(order):
    builder, attrs, params, outs = _conv_group(order)
    s = builder.schedule(outs)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal([int(d) for d in p.shape]).astype("float32") for p in params]
    got = dict(zip(["relu", "conv"] if order == "relu_first" else ["conv", "relu"], _run(s, params, outs, xs), strict=True))
    conv = _ref("nn.conv2d", attrs, xs[0], xs[1])
    np.testing.assert_allclose(got["conv"], conv, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got["relu"], np.maximum(conv + xs[2][:, None, None], 0), rtol=1e-4, atol=1e-4)


def _loops(func):
    found = []
    pre_order_visit(func.body, lambda n: found.append(n) if isinstance(n, tir.For) else None)
    return found


def _allocs(func):
    found = []
    pre_order_visit(func.body, lambda n: found.append(n) if isinstance(n, tir.Allocate) else None)
    return found


def test_conv_tile_lives_in_a_local_vector_accumulator():
    builder, _, params, outs = _conv_group("relu_first")
    s = builder.schedule(outs[:1])
    func = kiln.lower(s, params + outs[:1], name="f")["f"]
    kinds = [loop.kind for loop in _loops(func)]
    assert tir.ForKind.PARALLEL in kinds
    local = [a for a in _allocs(func) if a.scope == "local"]
    assert len(local) == 1  # the conv tile, computed inside the output's tile loop
    stores = []
    pre_order_visit(func.body, lambda n: stores.append(n) if isinstance(n, tir.BufferStore)
                    and n.buffer.name == local[0].buffer_var.name_hint else None)
    assert stores and all(isinstance(st.indices[0], tir.Ramp) for st in stores)


def test_dense_group_and_softmax_group():
    x, w = te.placeholder((32, 64), name="x"), te.placeholder((48, 64), name="w")
    builder = ScheduleBuilder("llvm")
    (dense,) = builder.call("nn.dense", DenseAttrs(), [x, w], TensorType((32, 48), "float32"))
    (relu,) = builder.call("nn.relu", None, [dense], TensorType((32, 48), "float32"))
    s = builder.schedule([relu, dense])
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((32, 64)).astype("float32"), rng.standard_normal((48, 64)).astype("float32")]
    got_relu, got_dense = _run(s, [x, w], [relu, dense], xs)
    np.testing.assert_allclose(got_dense, xs[0] @ xs[1].T, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_relu, np.maximum(xs[0] @ xs[1].T, 0), rtol=1e-4, atol=1e-4)

    y = te.placeholder((4, 10, 24), name="y")
    builder = ScheduleBuilder("llvm")
    (sm,) = builder.call("nn.softmax", SoftmaxAttrs(1), [y], TensorType((4, 10, 24), "float32"))
    (twice,) = builder.call("add", None, [sm, sm], TensorType((4, 10, 24), "float32"))
    s = builder.schedule([twice, sm])
    data = rng.standard_normal((4, 10, 24)).astype("float32")
    got_twice, got_sm = _run(s, [y], [twice, sm], [data])
    want = _ref("nn.softmax", SoftmaxAttrs(1), data)
    np.testing.assert_allclose(got_sm, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_twice, 2 * want, rtol=1e-5, atol=1e-6)


def test_injective_group_vectorizes_and_parallelizes():
    a = te.placeholder((64, 512), name="a")
    b = te.placeholder((512,), name="b")
    c = topi.exp(topi.add(a, b))
    s = topi.x86.schedule_injective([c], "llvm")
    func = kiln.lower(s, [a, b, c], name="f")["f"]
    loops = _loops(func)
    assert loops[0].kind == tir.ForKind.PARALLEL
    stores = []
    pre_order_visit(func.body, lambda n: stores.append(n) if isinstance(n, tir.BufferStore) else None)
    assert len(stores) == 1 and isinstance(stores[0].indices[0], tir.Ramp)  # add inlined, one vector store


def test_split_group_outputs_on_c_target():
    x = te.placeholder((6, 20), name="x")
    pieces = topi.split(x, (3, 11), axis=1)
    s = topi.x86.schedule_injective(pieces, "c")
    data = np.arange(120, dtype="float32").reshape(6, 20)
    got = _run(s, [x], pieces, [data], target="c")
    for g, want in zip(got, np.split(data, (3, 11), axis=1), strict=True):
        np.testing.assert_array_equal(g, want)


def test_schedule_auto_dispatches_by_anchor_tag():
    x = te.placeholder((1, 8, 6, 6), name="x")
    w = te.placeholder((3, 3, 8, 16), name="w")
    out = topi.nn.relu(topi.nn.conv2d(topi.nn.pad(x, (0, 0, 1, 1)), w, data_layout="NCHW", kernel_layout="HWIO"))
    assert topi.x86.anchor_tag([out]) == "conv2d_nchw"
    assert topi.x86.anchor_tag([topi.exp(x)]) == ""
    assert topi.x86.anchor_tag([topi.sum(x, axis=1)]) == "comm_reduce"


@pytest.mark.parametrize("channels, padded_copy", [(3, True), (16, False)])
def test_blocked_conv_padding_is_copied_for_narrow_blocks(channels, padded_copy):
    """conv2d_NCHWc on blocked data (as after AlterOpLayout): with fewer input channels per block than a vector
    (the RGB stem) the padded input is copied first, otherwise the padding guards are inlined; same results."""
    x = te.placeholder((1, 1, 12, 12, channels), name="x")
    w = te.placeholder((1, 1, 3, 3, channels, 16), name="w")
    attrs = Conv2DAttrs(padding=(1, 1), data_layout=f"NCHW{channels}c", kernel_layout=f"OIHW{channels}i16o",
                        out_layout="NCHW16c")
    builder = ScheduleBuilder("llvm -vector-width=512")
    (conv,) = builder.call("nn.conv2d", attrs, [x, w], TensorType((1, 1, 12, 12, 16), "float32"))
    s = builder.schedule([conv])
    func = kiln.lower(s, [x, w, conv], name="f")["f"]
    names = [a.buffer_var.name_hint for a in _allocs(func)]
    assert ("data_pad" in names) == padded_copy
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal([int(d) for d in p.shape]).astype("float32") for p in (x, w)]
    (got,) = _run(s, [x, w], [conv], xs)
    data = xs[0].transpose(0, 1, 4, 2, 3).reshape(1, channels, 12, 12)
    kernel = xs[1].transpose(0, 5, 1, 4, 2, 3).reshape(16, channels, 3, 3)
    want = _ref("nn.conv2d", Conv2DAttrs(padding=(1, 1)), data, kernel)
    np.testing.assert_allclose(got.transpose(0, 1, 4, 2, 3).reshape(1, 16, 12, 12), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target, block, register", [("llvm -mcpu=skylake-avx512", 16, "zmm"),
                                                     ("llvm -mcpu=haswell", 8, "ymm")])
def test_packed_depthwise_reads_its_padding_in_place_with_vector_fmas(target, block, register):
    """A blocked depthwise convolution (as AlterOpLayout makes it) reads its padding through guards, with no padded
    copy of the input, and each tap is a vector FMA over the channel block. (Numerics: tests/topi/nn/test_conv2d.py
    ``test_packed_depthwise``.)"""
    x = te.placeholder((1, 32 // block, 14, 14, block), name="x")
    w = te.placeholder((32 // block, 1, 3, 3, 1, block), name="w")
    conv = topi.nn.conv2d(x, w, (1, 1), (1, 1), (1, 1), f"NCHW{block}c", f"OIHW1i{block}o", "float32", groups=32,
                          out_layout=f"NCHW{block}c")
    s = topi.x86.schedule_conv2d_direct([conv], target)
    scopes = {a.buffer_var.name_hint: a.buffer_var.type_annotation.storage_scope
              for a in _allocs(kiln.lower(s, [x, w, conv], name="f")["f"])}
    assert set(scopes.values()) == {"local"}, scopes  # only the register tile
    asm = kiln.build(s, [x, w, conv], target=target, name="f").get_source("asm")
    assert re.search(rf"vfmadd\w+ps\s+[^\n]*%{register}", asm)
