"""Conv2dToSparse and Conv2dToSparse2 (kiln/relay/transform/convert_sparse_conv2d.py) through
relay.data_dep_optimization.bsr_conv2d: the converted function computes what the dense one does (compiled and
interpreted), the BSR arrays become parameters or constants, and convolutions sparse_conv2d cannot compute stay."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.relay.build_module import bind_params_by_name
from kiln.relay.data_dep_optimization import bsr_conv2d


def _conv(layout, kernel, **extra):
    x = relay.var("x", shape=(1, 8, 5, 6) if layout == "NCHW" else (1, 5, 6, 8))
    shape = (16, 8, kernel, kernel) if layout == "NCHW" else (kernel, kernel, 8, 16)
    w = relay.var("w", shape=shape)
    y = relay.nn.conv2d(relay.nn.relu(x), w, kernel_size=kernel, padding=extra.pop("padding", kernel // 2),
                        data_layout=layout, kernel_layout="OIHW" if layout == "NCHW" else "HWIO", **extra)
    return relay.Function([x, w], relay.nn.relu(y)), x, shape


def _sparse_weight(shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * (rng.random(shape) < 0.1)).astype("float32")


def _ops(func):
    names = []
    relay.analysis.post_order_visit(func, lambda n: names.append(n.op.name) if isinstance(n, relay.Call) else None)
    return names


def _run(func, params, x, target):
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(kiln.IRModule.from_expr(func), target=target, params=params)
    module = kiln.contrib.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    module.run(x=x)
    return module.get_output(0).numpy()


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_convert_makes_parameters_of_the_bsr_arrays(target, layout):
    func, _, shape = _conv(layout, 1)
    weight = _sparse_weight(shape, 1)
    x = np.random.default_rng(2).standard_normal([int(d) for d in func.params[0].type_annotation.shape]).astype(
        "float32")
    want = _run(func, {"w": kiln.nd.array(weight)}, x, target)
    sparse_func, params = bsr_conv2d.convert(func, {"w": kiln.nd.array(weight)}, (4, 1), 0.5, layout)
    assert "nn.sparse_conv2d" in _ops(sparse_func) and "nn.conv2d" not in _ops(sparse_func)
    assert [p.name_hint for p in sparse_func.params] == ["x", "w.data", "w.indices", "w.indptr"]
    assert sorted(params) == ["w.data", "w.indices", "w.indptr"]
    np.testing.assert_allclose(_run(sparse_func, params, x, target), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("kernel", [1, 3])
def test_convert2_makes_constants_of_the_bsr_arrays(layout, kernel):
    func, _, shape = _conv(layout, kernel)
    weight = _sparse_weight(shape, kernel)
    bound = bind_params_by_name(func, {"w": kiln.nd.array(weight)})
    sparse_func, params = bsr_conv2d.convert2(bound, {}, (4, 1), 0.5, layout, kernel)
    assert params == {} and "nn.sparse_conv2d" in _ops(sparse_func)
    x = np.random.default_rng(3).standard_normal([int(d) for d in func.params[0].type_annotation.shape]).astype(
        "float32")
    want = relay.create_executor("debug", mod=kiln.IRModule.from_expr(bound)).evaluate()(x).numpy()
    got = _run(sparse_func, {}, x, "llvm")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("extra", [dict(strides=(2, 2)), dict(padding=0), dict(dilation=(2, 2))])
def test_convolutions_sparse_conv2d_cannot_compute_stay_dense(extra):
    func, _, shape = _conv("NCHW", 3, **extra)
    bound = bind_params_by_name(func, {"w": kiln.nd.array(_sparse_weight(shape, 4))})
    sparse_func, _ = bsr_conv2d.convert2(bound, {}, (4, 1), 0.5, "NCHW", 3)
    assert "nn.conv2d" in _ops(sparse_func) and "nn.sparse_conv2d" not in _ops(sparse_func)


def test_dense_enough_weights_stay_dense():
    func, _, shape = _conv("NHWC", 1)
    dense = np.random.default_rng(5).standard_normal(shape).astype("float32")
    params = {"w": kiln.nd.array(dense)}
    sparse_func, params = bsr_conv2d.convert(func, params, (4, 1), 0.5, "NHWC")
    assert "nn.conv2d" in _ops(sparse_func) and list(params) == ["w"]
    bound = bind_params_by_name(func, params)
    assert "nn.sparse_conv2d" not in _ops(bsr_conv2d.convert2(bound, {}, (4, 1), 0.5, "NHWC", 1)[0])


def test_passes_print_and_parse_as_pipelines():
    p = relay.transform.Conv2dToSparse2("NCHW", 3, (16, 1), 0.2)
    assert p.info.name == "Conv2dToSparse2" and p.blocksize == (16, 1)
    q = relay.transform.Conv2dToSparse(["w"], [[3, 4, 1, 3, 5]], "NHWC", 1)
    assert q.weight_name == ("w",) and q.weight_shape == ((3, 4, 1, 3, 5),)
