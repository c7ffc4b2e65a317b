"""Operators of kiln/relay/op/nn_conv.py (1-D/3-D and transposed convolutions, 1-D/3-D and adaptive poolings)
against naive numpy loops, in the reference interpreter and compiled for llvm and c."""

import itertools
import math

import numpy as np
import pytest

from kiln import relay
from kiln.error import TypeInferenceError

from .checks import check

RNG = np.random.default_rng(17)


def rand(shape):
    return RNG.standard_normal(shape).astype("float32")


def naive_conv(x, w, strides, pads, dil, groups):
    """Direct loops over every output element (channel-first data, OI... kernel)."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[a], pads[nd + a]) for a in range(nd)])
    o, cg = w.shape[:2]
    outs = [(xp.shape[2 + a] - dil[a] * (w.shape[2 + a] - 1) - 1) // strides[a] + 1 for a in range(nd)]
    out = np.zeros((x.shape[0], o, *outs), "float64")
    for b, f in itertools.product(range(x.shape[0]), range(o)):
        g = f // (o // groups)
        for pos in itertools.product(*[range(s) for s in outs]):
            for k in itertools.product(*[range(s) for s in w.shape[2:]]):
                idx = tuple(pos[a] * strides[a] + k[a] * dil[a] for a in range(nd))
                out[(b, f, *pos)] += np.dot(xp[(b, slice(g * cg, (g + 1) * cg), *idx)], w[(f, slice(None), *k)])
    return out.astype("float32")


def naive_conv_transpose(x, w, strides, pads, out_pad, dil, groups):
    """Scatter each input element times the kernel into the output (channel-first data, IO... kernel)."""
    nd = x.ndim - 2
    c, og = w.shape[:2]
    cg = c // groups
    full = [(x.shape[2 + a] - 1) * strides[a] + dil[a] * (w.shape[2 + a] - 1) + 1 + out_pad[a] for a in range(nd)]
    out = np.zeros((x.shape[0], og * groups, *full), "float64")
    for b, ci in itertools.product(range(x.shape[0]), range(c)):
        g = ci // cg
        for pos in itertools.product(*[range(s) for s in x.shape[2:]]):
            for k in itertools.product(*[range(s) for s in w.shape[2:]]):
                idx = tuple(pos[a] * strides[a] + k[a] * dil[a] for a in range(nd))
                out[(b, slice(g * og, (g + 1) * og), *idx)] += x[(b, ci, *pos)] * w[(ci, slice(None), *k)]
    crop = tuple(slice(pads[a], full[a] - pads[nd + a]) for a in range(nd))
    return out[(slice(None), slice(None), *crop)].astype("float32")


@pytest.mark.parametrize("strides,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 1, 2), (1, (1, 2), 2, 1)])
def test_conv1d(strides, padding, dilation, groups):
    x, w = rand((2, 4, 9)), rand((6, 4 // groups, 3))
    pads = (padding, padding) if isinstance(padding, int) else padding
    want = naive_conv(x, w, (strides,), pads, (dilation,), groups)
    expr = relay.nn.conv1d(relay.var("x", shape=x.shape), relay.var("w", shape=w.shape), strides, padding, dilation,
                           groups)
    check(expr, {"x": x, "w": w}, want, rtol=1e-4)


def test_conv1d_nwc_and_errors():
    x, w = rand((1, 8, 3)), rand((3, 3, 5))  # NWC data, WIO kernel
    want = naive_conv(x.transpose(0, 2, 1), w.transpose(2, 1, 0), (1,), (1, 1), (1,), 1).transpose(0, 2, 1)
    expr = relay.nn.conv1d(relay.var("x", shape=x.shape), relay.var("w", shape=w.shape), padding=1,
                           data_layout="NWC", kernel_layout="WIO")
    check(expr, {"x": x, "w": w}, want, rtol=1e-4, targets=("llvm",))
    with pytest.raises(TypeInferenceError, match="nn.conv1d: data has 3 input channels"):
        relay.infer_type(relay.nn.conv1d(relay.var("x", shape=(1, 3, 8)), relay.var("w", shape=(2, 4, 3))))


@pytest.mark.parametrize("padding,groups", [((0, 0, 0), 1), ((1, 0, 1, 0, 1, 1), 2)])
def test_conv3d(padding, groups):
    x, w = rand((1, 4, 4, 5, 3)), rand((2, 4 // groups, 2, 3, 2))
    pads = padding * 2 if len(padding) == 3 else padding
    want = naive_conv(x, w, (1, 2, 1), pads, (1, 1, 1), groups)
    expr = relay.nn.conv3d(relay.var("x", shape=x.shape), relay.var("w", shape=w.shape), (1, 2, 1), padding,
                           groups=groups)
    check(expr, {"x": x, "w": w}, want, rtol=1e-4)


@pytest.mark.parametrize("nd,strides,padding,output_padding,dilation,groups", [
    (1, (2,), (0, 0), (1,), (1,), 1), (1, (3,), (1, 2), (0,), (2,), 2),
    (2, (2, 2), (1, 1, 1, 1), (1, 0), (1, 1), 1), (2, (1, 2), (0, 1, 2, 0), (0, 1), (2, 1), 2),
    (3, (2, 1, 2), (0, 0, 1, 1, 0, 0), (0, 0, 1), (1, 1, 1), 1),
])
def test_conv_transpose(nd, strides, padding, output_padding, dilation, groups):
    x = rand((1, 4) + (4, 3, 3)[:nd])
    w = rand((4, 2) + (3, 2, 2)[:nd])
    want = naive_conv_transpose(x, w, strides, padding, output_padding, dilation, groups)
    build = {1: relay.nn.conv1d_transpose, 2: relay.nn.conv2d_transpose, 3: relay.nn.conv3d_transpose}[nd]
    expr = build(relay.var("x", shape=x.shape), relay.var("w", shape=w.shape), strides, padding, dilation, groups,
                 output_padding=output_padding)
    assert relay.infer_type(expr).checked_type.shape == want.shape
    check(expr, {"x": x, "w": w}, want, rtol=1e-4)


def test_conv1d_transpose_reads_the_first_output_padding_only():
    """TVM's relation and topi read ``output_padding[0]`` of a 1-D transposed convolution; its tests pass two."""
    x, w = rand((1, 4, 5)), rand((4, 2, 3))
    want = naive_conv_transpose(x, w, (2,), (1, 1), (1,), (1,), 1)
    expr = relay.nn.conv1d_transpose(relay.var("x", shape=x.shape), relay.var("w", shape=w.shape), strides=(2,),
                                     padding=(1,), output_padding=(1, 1))
    assert expr.attrs.output_padding == (1,)
    check(expr, {"x": x, "w": w}, want, rtol=1e-4, targets=("llvm",))


def naive_pool(x, kernel, strides, pads, kind, count_include_pad, ceil_mode=False):
    nd = x.ndim - 2
    space = x.shape[2:]
    outs = []
    for a in range(nd):
        span = space[a] + pads[a] + pads[nd + a] - kernel[a]
        outs.append((-(-span // strides[a]) if ceil_mode else span // strides[a]) + 1)
    out = np.zeros(x.shape[:2] + tuple(outs), "float32")
    for pos in itertools.product(*[range(s) for s in outs]):
        lo = [pos[a] * strides[a] - pads[a] for a in range(nd)]
        hi = [lo[a] + kernel[a] for a in range(nd)]
        cl = [max(v, 0) for v in lo]
        ch = [min(hi[a], space[a]) for a in range(nd)]
        window = x[(Ellipsis, *[slice(cl[a], ch[a]) for a in range(nd)])]
        if kind == "max":
            out[(Ellipsis, *pos)] = window.max(axis=tuple(range(2, 2 + nd)))
        else:
            if count_include_pad:
                count = math.prod(min(hi[a], space[a] + pads[nd + a]) - lo[a] for a in range(nd))
            else:
                count = math.prod(ch[a] - cl[a] for a in range(nd))
            out[(Ellipsis, *pos)] = window.sum(axis=tuple(range(2, 2 + nd))) / max(count, 1)  # a window of padding: 0
    return out


@pytest.mark.parametrize("kind,count_include_pad,ceil_mode", [("max", False, False), ("avg", False, True),
                                                              ("avg", True, False)])
def test_pool1d_and_pool3d(kind, count_include_pad, ceil_mode):
    x1, x3 = rand((2, 3, 9)), rand((1, 2, 5, 4, 6))
    kw = {"count_include_pad": count_include_pad} if kind == "avg" else {}
    p1 = getattr(relay.nn, f"{kind}_pool1d")(relay.var("x", shape=x1.shape), (3,), (2,), padding=(1,),
                                             ceil_mode=ceil_mode, **kw)
    check(p1, {"x": x1}, naive_pool(x1, (3,), (2,), (1, 1), kind, count_include_pad, ceil_mode))
    p3 = getattr(relay.nn, f"{kind}_pool3d")(relay.var("x", shape=x3.shape), (2, 3, 2), (2, 1, 2),
                                             padding=(1, 0, 1), ceil_mode=ceil_mode, **kw)
    check(p3, {"x": x3}, naive_pool(x3, (2, 3, 2), (2, 1, 2), (1, 0, 1, 1, 0, 1), kind, count_include_pad,
                                    ceil_mode))


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("shape,output_size", [((1, 2, 7), (3,)), ((1, 2, 5, 7), (2, 3)), ((1, 1, 4, 5, 3), (3, 2, 2))])
def test_adaptive_pool(kind, shape, output_size):
    x = rand(shape)
    nd = len(output_size)
    want = np.zeros(shape[:2] + output_size, "float32")
    for pos in itertools.product(*[range(s) for s in output_size]):
        win = tuple(slice(pos[a] * shape[2 + a] // output_size[a], -(-(pos[a] + 1) * shape[2 + a] // output_size[a]))
                    for a in range(nd))
        part = x[(Ellipsis, *win)]
        want[(Ellipsis, *pos)] = part.max(axis=tuple(range(2, 2 + nd))) if kind == "max" else part.mean(
            axis=tuple(range(2, 2 + nd)))
    expr = getattr(relay.nn, f"adaptive_{kind}_pool{nd}d")(relay.var("x", shape=shape), output_size)
    check(expr, {"x": x}, want)


def test_contrib_conv2d_nchwc_is_conv2d_in_blocked_layouts():
    x, w = rand((1, 8, 5, 5)), rand((8, 8, 3, 3))
    want = naive_conv(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1)
    xb = x.reshape(1, 2, 4, 5, 5).transpose(0, 1, 3, 4, 2)
    wb = w.reshape(2, 4, 2, 4, 3, 3).transpose(0, 2, 4, 5, 3, 1)
    expr = relay.nn.contrib_conv2d_nchwc(relay.var("x", shape=xb.shape), relay.var("w", shape=wb.shape), padding=1,
                                         data_layout="NCHW4c", kernel_layout="OIHW4i4o")
    check(expr, {"x": xb, "w": wb}, want.reshape(1, 2, 4, 5, 5).transpose(0, 1, 3, 4, 2), rtol=1e-4)
    with pytest.raises(TypeInferenceError, match="must be blocked"):
        relay.infer_type(relay.nn.contrib_conv2d_nchwc(relay.var("x", shape=x.shape), relay.var("w", shape=w.shape),
                                                       data_layout="NCHW", kernel_layout="OIHW"))


@pytest.mark.parametrize("kind", ["avg", "max"])
def test_global_pools_over_one_and_three_axes(kind):
    x1, x3 = rand((2, 3, 7)), rand((1, 2, 3, 4, 5))
    reduce = np.mean if kind == "avg" else np.max
    op1, op3 = getattr(relay.nn, f"global_{kind}_pool1d"), getattr(relay.nn, f"global_{kind}_pool3d")
    check(op1(relay.var("x", shape=x1.shape)), {"x": x1}, reduce(x1, axis=2, keepdims=True))
    nwc = op1(relay.var("x", shape=(2, 7, 3)), layout="NWC")
    check(nwc, {"x": x1.transpose(0, 2, 1)}, reduce(x1, axis=2, keepdims=True).transpose(0, 2, 1))
    check(op3(relay.var("x", shape=x3.shape)), {"x": x3}, reduce(x3, axis=(2, 3, 4), keepdims=True))
    assert op3(relay.var("x", shape=x3.shape)).op.name == f"nn.adaptive_{kind}_pool3d"


def test_depthwise_kernel_with_a_channel_multiplier():
    # TVM's depthwise form: groups == C, kernel (C, multiplier, ...), channels = C * multiplier
    x, w = rand((1, 3, 4, 5, 4)), rand((3, 2, 2, 1, 3))
    want = naive_conv(x, w.reshape(6, 1, 2, 1, 3), (1, 1, 1), (0, 0, 1, 0, 0, 1), (1, 1, 1), 3)
    call = relay.nn.conv3d(relay.var("x", shape=x.shape), relay.var("w", shape=w.shape), padding=(0, 0, 1),
                           groups=3, channels=6, kernel_size=(2, 1, 3))
    check(call, {"x": x, "w": w}, want, rtol=1e-4)
    x1, w1 = rand((2, 2, 7)), rand((2, 3, 3))
    check(relay.nn.conv1d(relay.var("x", shape=x1.shape), relay.var("w", shape=w1.shape), groups=2, channels=6,
                          kernel_size=3), {"x": x1, "w": w1},
          naive_conv(x1, w1.reshape(6, 1, 3), (1,), (0, 0), (1,), 2), rtol=1e-4)
    with pytest.raises(TypeInferenceError, match="expects"):  # without channels it is an ordinary grouped kernel
        relay.infer_type(relay.nn.conv1d(relay.var("x", shape=x1.shape), relay.var("w", shape=w1.shape), groups=2))


def test_spatial_sizes_known_only_at_run_time():
    """Convolutions and poolings over H/W (W) that are relay.Any: compiled once for the VM, run at several sizes."""
    import kiln
    from kiln.runtime.vm import VirtualMachine
    from kiln.topi import testing as ref

    dyn = relay.Any()
    x = relay.var("x", shape=(1, 2, dyn, dyn))
    w = relay.var("w", shape=(3, 2, 3, 3))
    conv = relay.nn.conv2d(x, w, padding=(1, 0), strides=(1, 2))
    pool = relay.nn.avg_pool2d(x, (3, 2), (2, 2), padding=(1, 1), ceil_mode=True, count_include_pad=True)
    mpool = relay.nn.max_pool2d(x, (2, 2), (2, 1), ceil_mode=True)
    x1 = relay.var("x1", shape=(1, 2, dyn))
    conv1 = relay.nn.conv1d(x1, relay.var("w1", shape=(4, 2, 3)), padding=(2, 1), dilation=2)
    pool1 = relay.nn.max_pool1d(x1, (3,), (2,), padding=(1, 1))
    mod = kiln.IRModule.from_expr(relay.Function(relay.analysis.free_vars(relay.Tuple([conv, pool, mpool, conv1,
                                                                                       pool1])),
                                                 relay.Tuple([conv, pool, mpool, conv1, pool1])))
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0))
    wv, w1v = rand((3, 2, 3, 3)), rand((4, 2, 3))
    for h, wd, n1 in ((7, 9, 11), (10, 6, 8)):
        xv, x1v = rand((1, 2, h, wd)), rand((1, 2, n1))
        args = {"x": xv, "w": wv, "x1": x1v, "w1": w1v}
        got = [t.numpy() for t in vm.invoke("main", **args)]
        want = [naive_conv(xv, wv, (1, 2), (1, 0, 1, 0), (1, 1), 1),
                ref.poolnd_python(xv, (3, 2), (2, 2), (1, 1), (1, 1), (1, 1), "avg", True, True),
                ref.poolnd_python(xv, (2, 2), (2, 1), (1, 1), (0, 0), (0, 0), "max", False, True),
                naive_conv(x1v, w1v, (1,), (2, 1), (2,), 1),
                ref.poolnd_python(x1v, (3,), (2,), (1,), (1,), (1,), "max", False)]
        for g, e in zip(got, want, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("conv,rank", [(relay.nn.conv1d, 1), (relay.nn.conv2d, 2), (relay.nn.conv3d, 3)])
def test_grouped_conv_with_run_time_channels_types(conv, rank):
    # the data's channels are known only at run time: the grouped kernel fixes the output channels and the
    # input channels are checked when the kernel runs, as TVM's relation does
    import kiln

    x = relay.var("x", shape=(relay.Any(),) * (2 + rank))
    w = relay.var("w", shape=(16, 8) + (3,) * rank)
    mod = kiln.IRModule.from_expr(relay.Function([x, w], conv(x, w, channels=16, groups=2)))
    ret = relay.transform.InferType()(mod)["main"].ret_type
    assert int(ret.shape[1]) == 16 and all(relay.Any() == d for d in ret.shape[2:])
    static = relay.var("s", shape=(1, 15) + (8,) * rank)
    with pytest.raises(TypeInferenceError, match="15 input channels"):
        relay.transform.InferType()(kiln.IRModule.from_expr(conv(static, w, channels=16, groups=2)))
