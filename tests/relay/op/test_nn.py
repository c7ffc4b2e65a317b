import pytest

from kiln import relay
from kiln.error import OpAttributeInvalid, TypeInferenceError


def typed(expr):
    return relay.infer_type(expr).checked_type


def v(shape, name="x", dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


def test_conv2d_nchw_and_nhwc():
    out = typed(relay.nn.conv2d(v((1, 3, 224, 224)), v((64, 3, 7, 7), "w"), strides=(2, 2), padding=(3, 3)))
    assert out.shape == (1, 64, 112, 112)
    out = typed(relay.nn.conv2d(v((1, 224, 224, 3)), v((7, 7, 3, 64), "w"), strides=2, padding=3,
                                data_layout="NHWC", kernel_layout="HWIO"))
    assert out.shape == (1, 112, 112, 64)


def test_conv2d_groups_dilation_padding():
    depthwise = relay.nn.conv2d(v((1, 32, 16, 16)), v((32, 1, 3, 3), "w"), padding=1, groups=32)
    assert typed(depthwise).shape == (1, 32, 16, 16)
    grouped = relay.nn.conv2d(v((1, 8, 10, 10)), v((12, 2, 3, 3), "w"), groups=4, dilation=(2, 2))
    assert typed(grouped).shape == (1, 12, 6, 6)
    asym = relay.nn.conv2d(v((1, 3, 10, 10)), v((4, 3, 3, 3), "w"), padding=(0, 1, 2, 3), strides=(1, 2))
    assert typed(asym).shape == (1, 4, 10, 6)
    assert relay.nn.conv2d(v((1, 3, 8, 8)), v((4, 3, 3, 3), "w"), padding=(1, 1)).attrs.padding == (1, 1, 1, 1)


def test_conv2d_errors():
    with pytest.raises(TypeInferenceError, match=r"nn.conv2d: .*3 input channels.*4"):
        typed(relay.nn.conv2d(v((1, 3, 8, 8)), v((4, 4, 3, 3), "w")))
    with pytest.raises(TypeInferenceError, match="channels=5"):
        typed(relay.nn.conv2d(v((1, 3, 8, 8)), v((4, 3, 3, 3), "w"), channels=5))
    with pytest.raises(TypeInferenceError, match="kernel_size"):
        typed(relay.nn.conv2d(v((1, 3, 8, 8)), v((4, 3, 3, 3), "w"), kernel_size=(5, 5)))
    with pytest.raises(OpAttributeInvalid, match="strides"):
        relay.nn.conv2d(v((1, 3, 8, 8)), v((4, 3, 3, 3), "w"), strides=(0, 1))
    with pytest.raises(OpAttributeInvalid, match="groups"):
        relay.nn.conv2d(v((1, 3, 8, 8)), v((4, 3, 3, 3), "w"), groups=0)
    with pytest.raises(OpAttributeInvalid, match=r"strides: must be an int or a sequence of ints \(got \['x', 1\]\)"):
        relay.nn.conv2d(v((1, 3, 8, 8)), v((4, 3, 3, 3), "w"), strides=["x", 1])


def test_conv2d_blocked_layout():
    out = typed(relay.nn.conv2d(v((1, 2, 8, 8, 16)), v((4, 2, 3, 3, 16, 8), "w"), padding=1,
                                data_layout="NCHW16c", kernel_layout="OIHW16i8o"))
    assert out.shape == (1, 2, 8, 8, 16)


@pytest.mark.parametrize("ceil_mode,out", [(False, 3), (True, 4)])
def test_pool_ceil_mode(ceil_mode, out):
    t = typed(relay.nn.max_pool2d(v((1, 2, 8, 8)), (3, 3), (2, 2), ceil_mode=ceil_mode))
    assert t.shape == (1, 2, out, out)
    t = typed(relay.nn.avg_pool2d(v((1, 8, 8, 2)), (3, 3), (2, 2), layout="NHWC", ceil_mode=ceil_mode,
                                  count_include_pad=True))
    assert t.shape == (1, out, out, 2)


def test_global_pool_dense_matmul_batch_matmul():
    assert typed(relay.nn.global_avg_pool2d(v((2, 5, 7, 7)))).shape == (2, 5, 1, 1)
    assert typed(relay.nn.dense(v((2, 16)), v((10, 16), "w"))).shape == (2, 10)
    with pytest.raises(TypeInferenceError, match="dense"):
        typed(relay.nn.dense(v((2, 16)), v((10, 15), "w")))
    assert typed(relay.nn.contrib_dense_pack(v((3, 2, 16)), v((5, 16, 2), "w"), "NC2n")).shape == (3, 2, 10)
    with pytest.raises(TypeInferenceError, match="weight_layout 'NC4n' does not describe"):
        typed(relay.nn.contrib_dense_pack(v((2, 16)), v((5, 16, 2), "w"), "NC4n"))
    with pytest.raises(TypeInferenceError, match="units=8 but weight"):
        typed(relay.nn.contrib_dense_pack(v((2, 16)), v((5, 16, 2), "w"), "NC2n", units=8))
    assert typed(relay.nn.matmul(v((2, 16)), v((16, 4), "w"))).shape == (2, 4)
    assert typed(relay.nn.matmul(v((16, 2)), v((4, 16), "w"), transpose_a=True, transpose_b=True)).shape == (2, 4)
    assert typed(relay.nn.batch_matmul(v((3, 4, 5)), v((3, 6, 5), "y"))).shape == (3, 4, 6)
    assert typed(relay.nn.batch_matmul(v((1, 4, 5)), v((3, 5, 6), "y"), transpose_b=False)).shape == (3, 4, 6)
    with pytest.raises(TypeInferenceError, match="batch sizes"):
        typed(relay.nn.batch_matmul(v((2, 4, 5)), v((3, 6, 5), "y")))


def test_norms_softmax_misc():
    x = v((2, 4, 3, 3))
    c = [v((4,), n) for n in "gbmv"]
    bn = relay.nn.batch_norm(x, *c)
    t = typed(bn.astuple())
    assert [f.shape for f in t.fields] == [(2, 4, 3, 3), (4,), (4,)]
    assert typed(bn[0]).shape == (2, 4, 3, 3)
    with pytest.raises(TypeInferenceError, match="gamma"):
        typed(relay.nn.batch_norm(x, v((3,), "g"), *c[1:]).astuple())
    assert typed(relay.nn.layer_norm(v((2, 5)), v((5,), "g"), v((5,), "b"))).shape == (2, 5)
    assert typed(relay.nn.softmax(x, axis=1)).shape == x.type_annotation.shape
    assert typed(relay.nn.log_softmax(x)).shape == (2, 4, 3, 3)
    assert typed(relay.nn.batch_flatten(x)).shape == (2, 36)
    assert typed(relay.nn.dropout(x, 0.3)).shape == (2, 4, 3, 3)
    assert typed(relay.nn.pad(x, ((0, 0), (0, 0), (1, 2), (3, 4)))).shape == (2, 4, 6, 10)
    assert typed(relay.nn.lrn(x, size=3)).shape == (2, 4, 3, 3)
    assert typed(relay.nn.bias_add(x, v((4,), "b"))).shape == (2, 4, 3, 3)
    assert typed(relay.nn.bias_add(v((2, 3, 3, 4)), v((4,), "b"), axis=-1)).shape == (2, 3, 3, 4)
    with pytest.raises(TypeInferenceError, match="bias"):
        typed(relay.nn.bias_add(x, v((3,), "b")))
    assert typed(relay.nn.relu(x)).shape == (2, 4, 3, 3)
    assert typed(relay.nn.leaky_relu(x, 0.2)).shape == (2, 4, 3, 3)


def test_resize2d():
    t = typed(relay.image.resize2d(v((1, 3, 4, 4)), (8, 6), method="nearest_neighbor"))
    assert t.shape == (1, 3, 8, 6)
    t = typed(relay.image.resize2d(v((1, 4, 4, 3)), (2, 2), layout="NHWC"))
    assert t.shape == (1, 2, 2, 3)
    with pytest.raises(OpAttributeInvalid, match="method"):
        relay.image.resize2d(v((1, 3, 4, 4)), (8, 8), method="bogus")


def test_pad_negative_width_crops():
    import numpy as np

    from .checks import check

    data = np.random.default_rng(1).standard_normal((3, 4, 5)).astype("float32")
    x = v((3, 4, 5))
    width = ((-1, 0), (2, -3), (-1, 2))
    assert typed(relay.nn.pad(x, width)).shape == (2, 3, 6)
    want = np.pad(data[1:, :1, 1:], ((0, 0), (2, 0), (0, 2)), constant_values=1.5)
    check(relay.nn.pad(x, width, pad_value=1.5), {"x": data}, want)
    edge = np.pad(data[1:, :1, 1:], ((0, 0), (2, 0), (0, 2)), mode="edge")
    check(relay.nn.pad(x, width, pad_mode="edge"), {"x": data}, edge)
    with pytest.raises(TypeInferenceError, match="crops more"):
        typed(relay.nn.pad(x, ((0, 0), (-3, -2), (0, 0))))

