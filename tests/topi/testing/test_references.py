"""kiln.topi.testing (TVM's tvm.topi.testing): numpy references checked against the reference interpreter."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.topi import testing as ref

RNG = np.random.default_rng(0)


def interpret(expr, *args):
    return relay.create_executor("debug", mod=kiln.IRModule.from_expr(expr)).evaluate()(*args).numpy()


@pytest.mark.parametrize("stride,padding,groups", [(1, 1, 1), (2, "SAME", 2), ((1, 2), (0, 1, 2, 1), 4)])
def test_convolutions_match_the_interpreter(stride, padding, groups):
    x, w = RNG.standard_normal((2, 8, 9, 7)).astype("float32"), RNG.standard_normal((12, 8 // groups, 3, 3))
    w = w.astype("float32")
    pad = {"SAME": (1, 1, 1, 1), 1: (1, 1, 1, 1)}.get(padding, padding)
    want = interpret(relay.nn.conv2d(relay.const(x), relay.const(w), strides=stride, padding=pad, groups=groups))
    np.testing.assert_allclose(ref.conv2d_nchw_python(x, w, stride, padding, groups), want, rtol=1e-5, atol=1e-5)
    nhwc = ref.conv2d_nhwc_python(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), stride, padding, groups)
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), want, rtol=1e-5, atol=1e-5)


def test_elementwise_references():
    a = RNG.standard_normal((3, 5)).astype("float32")
    np.testing.assert_allclose(ref.softmax_python(a), interpret(relay.nn.softmax(relay.const(a), axis=1)), rtol=1e-6)
    np.testing.assert_allclose(ref.log_softmax_python(a), interpret(relay.nn.log_softmax(relay.const(a), axis=1)),
                               rtol=1e-5, atol=1e-6)
    x = RNG.standard_normal((1, 6, 4, 4)).astype("float32")
    np.testing.assert_allclose(ref.lrn_python(x, 3, 1, 2.0, 1e-4, 0.75),
                               interpret(relay.nn.lrn(relay.const(x), 3, 1, 2.0, 1e-4, 0.75)), rtol=1e-6)
    np.testing.assert_allclose(ref.l2_normalize_python(x, 1e-12, (1,)),
                               interpret(relay.nn.l2_normalize(relay.const(x), 1e-12, [1])), rtol=1e-6)


def test_data_movement_references():
    assert ref.dilate_python(np.array([[1, 2], [3, 4]]), (2, 1)).tolist() == [[1, 2], [0, 0], [3, 4]]
    assert ref.one_hot(np.array([0, 2]), 1, 0, 3, -1, "int32").tolist() == [[1, 0, 0], [0, 0, 1]]
    x = RNG.standard_normal((1, 8, 2, 2)).astype("float32")
    np.testing.assert_array_equal(ref.space_to_depth_python(ref.depth_to_space_python(x, 2), 2), x)
    np.testing.assert_array_equal(ref.depth_to_space_python(x, 2, "CRD"),
                                  interpret(relay.nn.depth_to_space(relay.const(x), 2, mode="CRD")))
    d = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(ref.strided_slice_python(d, [0, 1], [2, 3], [1, 1]), d[0:2, 1:3])
    np.testing.assert_array_equal(ref.strided_slice_python(d, [1], [-1], None, "size", axes=[2]), d[:, :, 1:])
    as_arrays = [np.array(v, "int32") for v in ([1, 3, 0], [-3, -4, 4], [-1, -1, 2])]  # TVM's tests pass arrays
    np.testing.assert_array_equal(ref.strided_slice_python(d, *as_arrays), d[1:-3:-1, 3:-4:-1, 0:4:2])
    np.testing.assert_array_equal(ref.gather_python(d, 2, np.zeros((2, 3, 1), "int32")), d[:, :, :1])
    y = RNG.standard_normal((2, 3, 4)).astype("float32")
    np.testing.assert_allclose(ref.batch_matmul(y, y), np.matmul(y, y.transpose(0, 2, 1)), rtol=1e-6)


def test_searchsorted_ref_per_row_and_shared_sequence():
    from kiln.topi.testing import searchsorted_ref

    values = np.array([[0, 3, 6], [5, 5, 2]])
    np.testing.assert_array_equal(searchsorted_ref(np.array([1, 3, 5]), values, True, "int32"), [[0, 2, 3], [3, 3, 1]])
    rows = np.array([[1, 3, 5], [2, 4, 6]])
    got = searchsorted_ref(rows, values, False, "int64")
    assert got.dtype == np.int64 and got.tolist() == [[0, 1, 3], [2, 2, 0]]
