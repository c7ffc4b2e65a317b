"""Kernels over dimensions known only at run time: the checks a static build makes while compiling (a dense
layer's reduction sizes agree, a squeezed axis is 1) move into the shape function, and sizes computed from a
dynamic extent (a convolution's or a pooling's output) stay expressions."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError
from kiln.runtime.vm import VirtualMachine

ANY = relay.Any()


def _vm(params, body):
    mod = kiln.IRModule.from_expr(relay.Function(params, body))
    return VirtualMachine(relay.vm.compile(mod, target="llvm"), kiln.cpu(0)), relay.create_executor(
        "debug", mod=mod).evaluate()


def test_dense_with_a_dynamic_reduction_checks_it_at_run_time():
    x, w = relay.var("x", shape=(ANY, ANY)), relay.var("w", shape=(5, ANY))
    vm, reference = _vm([x, w], relay.nn.dense(x, w))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 7)).astype("float32"), rng.standard_normal((5, 7)).astype("float32")
    np.testing.assert_allclose(vm.invoke("main", a, b).numpy(), a @ b.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(reference(a, b).numpy(), a @ b.T, rtol=1e-5, atol=1e-5)
    with pytest.raises(KilnError, match="topi.dense: the reduction"):
        vm.invoke("main", a, b[:, :6])


def test_squeeze_of_a_dynamic_axis_checks_it_is_one():
    x = relay.var("x", shape=(ANY, ANY, 4))
    vm, _ = _vm([x], relay.squeeze(x, axis=[0]))
    data = np.arange(12, dtype="float32").reshape(1, 3, 4)
    np.testing.assert_array_equal(vm.invoke("main", data).numpy(), data[0])
    with pytest.raises(KilnError, match="topi.squeeze"):
        vm.invoke("main", np.zeros((2, 3, 4), "float32"))


@pytest.mark.parametrize("ceil_mode", [False, True])
def test_conv_and_pool_over_dynamic_spatial_sizes_match_the_interpreter(ceil_mode):
    x = relay.var("x", shape=(ANY, 3, ANY, ANY))
    w = relay.var("w", shape=(4, 3, 3, 3))
    y = relay.nn.conv2d(x, w, padding=(1, 1), kernel_size=(3, 3), channels=4)
    y = relay.nn.max_pool2d(relay.nn.relu(y), pool_size=(2, 2), strides=(2, 2), ceil_mode=ceil_mode)
    y = relay.nn.conv2d(y, relay.var("w1", shape=(2, 4, 1, 1)), kernel_size=(1, 1), channels=2)
    params = relay.analysis.free_vars(y)
    vm, reference = _vm(params, y)
    rng = np.random.default_rng(1)
    weights = [rng.standard_normal(p.type_annotation.concrete_shape).astype("float32") for p in params[1:]]
    for shape in [(1, 3, 8, 8), (2, 3, 7, 5)]:
        data = rng.standard_normal(shape).astype("float32")
        got, want = vm.invoke("main", data, *weights).numpy(), reference(data, *weights).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("unbiased", [False, True])
def test_variance_over_a_dynamic_axis(unbiased):
    x = relay.var("x", shape=(ANY, 6))
    vm, _ = _vm([x], relay.variance(x, axis=[0], unbiased=unbiased))
    data = np.random.default_rng(2).standard_normal((5, 6)).astype("float32")
    np.testing.assert_allclose(vm.invoke("main", data).numpy(), data.var(0, ddof=int(unbiased)), rtol=1e-5)


@pytest.mark.parametrize("shape", [(2,), (3, 4), (1, 2, 3, 4)])
def test_ndarray_size_of_dynamic_dimensions_is_their_product_at_run_time(shape):
    x = relay.var("x", shape=(ANY,) * len(shape))
    vm, reference = _vm([x], relay.ndarray_size(x, dtype="int32"))
    data = np.zeros(shape, "float32")
    for run in (lambda d: vm.invoke("main", d), reference):
        out = run(data).numpy()
        assert out.dtype == np.int32 and out.item() == data.size


def test_concatenate_off_axis_dims_follow_tvm_and_are_checked_at_run_time():
    def typed(shapes, axis):
        xs = [relay.var(f"x{i}", shape=s) for i, s in enumerate(shapes)]
        return relay.infer_type(relay.concatenate(xs, axis)).checked_type.shape

    assert typed([(ANY, 3), (ANY, 3), (ANY, ANY)], 0) == (ANY, 3)  # the joined axis is unknown: the static 3 holds
    assert typed([(1, 3), (1, ANY)], 0) == (2, ANY)  # the joined axis is known: the unknown stays unknown
    x, y = relay.var("x", shape=(1, 3)), relay.var("y", shape=(1, ANY))
    vm, reference = _vm([x, y], relay.concatenate([x, y], 0))
    a, b = np.ones((1, 3), "float32"), np.arange(3, dtype="float32").reshape(1, 3)
    np.testing.assert_array_equal(vm.invoke("main", a, b).numpy(), np.concatenate([a, b]))
    np.testing.assert_array_equal(reference(a, b).numpy(), np.concatenate([a, b]))
    with pytest.raises(KilnError, match="topi.concatenate: the inputs' dimensions off the joined axis"):
        vm.invoke("main", a, np.ones((1, 4), "float32"))


@pytest.mark.parametrize("newshape,shape", [((1, -1), (2, 3, 4)), ((-4, -1, 2, -3), (6, 3, 4)),
                                            ((-4, 2, -1, -2), (6, 3, 4)), ((-1, 1, 0), (2, 3, 4))])
def test_reshape_to_several_dynamic_dimensions(newshape, shape):
    x = relay.var("x", shape=(ANY, ANY, ANY))
    vm, _ = _vm([x], relay.reshape(x, newshape))
    data = np.arange(np.prod(shape), dtype="float32").reshape(shape)
    want = relay.create_executor("debug", kiln.IRModule.from_expr(relay.Function([x], relay.reshape(x, newshape))))
    np.testing.assert_array_equal(vm.invoke("main", data).numpy(), want.evaluate()(data).numpy())


def test_reshape_like_and_topk_over_dynamic_dimensions():
    d, s = relay.var("d", shape=(ANY, ANY)), relay.var("s", shape=(ANY, ANY, ANY))
    vm, _ = _vm([d, s], relay.reshape_like(d, s))
    data = np.arange(20, dtype="float32").reshape(4, 5)
    assert vm.invoke("main", data, np.zeros((2, 2, 5), "float32")).numpy().tolist() == data.reshape(2, 2, 5).tolist()
    x = relay.var("x", shape=(ANY, ANY))
    assert relay.infer_type(relay.topk(x, 3, ret_type="indices")).checked_type.shape == (ANY, 3)
    vm, _ = _vm([x], relay.topk(x, 3, ret_type="indices"))
    values = np.random.default_rng(1).permutation(12).reshape(2, 6).astype("float32")
    np.testing.assert_array_equal(vm.invoke("main", values).numpy(), np.argsort(-values, axis=1)[:, :3])
    with pytest.raises(KilnError, match="topi.topk: k = 3 is larger"):
        vm.invoke("main", values[:, :2])


def test_gather_nd_with_batch_dims_over_dynamic_dimensions():
    # the batch axis: unknown in the indices, static in the data (TVM's relation accepts it)
    x, i = relay.var("x", shape=(2, 2, 3)), relay.var("i", shape=(1, ANY, ANY), dtype="int32")
    vm, reference = _vm([x, i], relay.gather_nd(x, i, batch_dims=1, index_rank=1))
    data = np.arange(12, dtype="float32").reshape(2, 2, 3)
    idx = np.array([[[1, 0], [0, 1]]], "int32")
    want = np.stack([data[b][idx[0, b]] for b in range(2)])
    np.testing.assert_array_equal(vm.invoke("main", data, idx).numpy(), want)
    np.testing.assert_array_equal(reference(data, idx).numpy(), want)
