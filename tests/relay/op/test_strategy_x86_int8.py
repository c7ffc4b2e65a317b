"""int8 products on x86 (kiln/relay/op/strategy/x86_legalize.py, kiln/topi/x86/conv2d_int8.py, dense_int8.py):
int8 x int8 convolutions and dense layers are legalized onto uint8 data, and every int8 product a CPU with an 8-bit
dot product runs uses it; relay.build's results equal the reference interpreter's on random inputs."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.runtime.host import host_cpu_features
from kiln.target import Target

RNG = np.random.default_rng(13)
# the host runs code for these CPUs; each must use its instruction
TARGETS = [t for t, needs in (("llvm -mcpu=cascadelake", "avx512vnni"), ("llvm -mcpu=core-avx2", "avx2"))
           if needs in host_cpu_features()]
INSTRUCTION = {"llvm -mcpu=cascadelake": "vpdpbusd", "llvm -mcpu=core-avx2": "pmaddubsw"}


def _values(shape, dtype):
    low, high = (0, 64) if dtype == "uint8" else (-32, 32)  # as TVM's tests: no pair of products saturates 16 bits
    return RNG.integers(low, high, shape).astype(dtype)


def _build_and_compare(mod, args, target):
    want = relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target)
    assert INSTRUCTION[target] in lib.lib.get_source("asm")
    rt = graph_executor.GraphModule(lib["default"](kiln.cpu()))
    for i, a in enumerate(args):
        rt.set_input(i, a)
    rt.run()
    np.testing.assert_array_equal(rt.get_output(0).numpy(), want)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("data_dtype, channels, out_channels, padding", [
    ("uint8", 8, 16, (1, 1)), ("int8", 6, 20, (1, 0, 0, 1)), ("int8", 17, 29, (0, 0)),
])
def test_conv2d_int8(target, data_dtype, channels, out_channels, padding):
    x = relay.var("x", shape=(1, channels, 9, 10), dtype=data_dtype)
    w = relay.var("w", shape=(out_channels, channels, 3, 3), dtype="int8")
    y = relay.nn.conv2d(x, w, kernel_size=(3, 3), channels=out_channels, padding=padding, out_dtype="int32")
    mod = kiln.IRModule.from_expr(relay.Function([x, w], relay.nn.relu(y)))
    args = [_values((1, channels, 9, 10), data_dtype), _values((out_channels, channels, 3, 3), "int8")]
    _build_and_compare(mod, args, target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("data_dtype, k", [("uint8", 96), ("int8", 97)])
def test_dense_int8(target, data_dtype, k):
    x = relay.var("x", shape=(8, k), dtype=data_dtype)
    w = relay.var("w", shape=(40, k), dtype="int8")
    b = relay.var("b", shape=(40,), dtype="int32")
    y = relay.nn.bias_add(relay.nn.dense(x, w, out_dtype="int32"), b)
    mod = kiln.IRModule.from_expr(relay.Function([x, w, b], y))
    args = [_values((8, k), data_dtype), _values((40, k), "int8"), RNG.integers(-100, 100, 40).astype("int32")]
    _build_and_compare(mod, args, target)


def test_legalize_shifts_int8_data_to_uint8():
    x = relay.var("x", shape=(1, 4, 5, 5), dtype="int8")
    w = relay.var("w", shape=(16, 4, 3, 3), dtype="int8")
    y = relay.nn.conv2d(x, w, kernel_size=(3, 3), padding=(1, 1), out_dtype="int32")
    mod = kiln.IRModule.from_expr(relay.Function([x, w], y))
    with Target("llvm -mcpu=cascadelake"):
        legal = relay.transform.Legalize()(mod)
    convs, pads = [], []
    relay.post_order_visit(legal["main"], lambda e: isinstance(e, relay.Call) and (
        convs.append(e) if e.op.name == "nn.conv2d" else pads.append(e) if e.op.name == "nn.pad" else None))
    assert [c.args[0].checked_type.dtype for c in convs] == ["uint8"]
    assert tuple(int(p) for p in convs[0].attrs.padding) == (0, 0, 0, 0)  # padded before, with the shifted zero
    assert len(pads) == 1
    args = [_values((1, 4, 5, 5), "int8"), _values((16, 4, 3, 3), "int8")]
    want = relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()
    got = relay.create_executor("debug", mod=legal).evaluate()(*args).numpy()
    np.testing.assert_array_equal(got, want)
    with Target("llvm -mcpu=x86-64"):  # no 8-bit dot product: nothing to legalize
        assert kiln.ir.structural_equal(relay.transform.Legalize()(mod), relay.transform.InferType()(mod))
