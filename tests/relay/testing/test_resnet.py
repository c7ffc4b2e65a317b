"""ResNet workloads: structure as in TVM's relay.testing.resnet, typed output, seeded parameters, text round trip."""

import collections

import numpy as np
import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.ir import TensorType, assert_structural_equal
from kiln.relay.testing import resnet


def _op_counts(func):
    counts = collections.Counter()
    relay.post_order_visit(func, lambda e: counts.update([e.op.name]) if isinstance(e, relay.Call) else None)
    return counts


@pytest.mark.parametrize("num_layers,convs,bns", [(18, 21, 19), (50, 53, 51)])
def test_structure(num_layers, convs, bns):
    mod, params = resnet.get_workload(num_layers=num_layers)
    main = mod["main"]
    counts = _op_counts(main)
    assert counts["nn.conv2d"] == convs and counts["nn.batch_norm"] == bns
    for name in ("nn.max_pool2d", "nn.global_avg_pool2d", "nn.batch_flatten", "nn.dense", "nn.bias_add", "nn.softmax"):
        assert counts[name] == 1
    assert main.ret_type == TensorType((1, 1000), "float32")
    assert main.params[0].name_hint == "data" and main.params[0].type_annotation == TensorType((1, 3, 224, 224))
    assert set(params) == {p.name_hint for p in main.params[1:]}
    for p in main.params[1:]:
        assert params[p.name_hint].shape == p.type_annotation.shape and params[p.name_hint].dtype == "float32"


def test_tvm_parameter_names_and_printed_forms():
    mod, params = resnet.get_workload(num_layers=50)
    assert "stage1_unit1_sc_weight" in params and "fc1_bias" in params and "bn_data_gamma" in params
    assert params["stage4_unit3_conv3_weight"].shape == (2048, 512, 1, 1)
    text = str(mod)
    assert ("%0 = nn.batch_norm(%data, %bn_data_gamma, %bn_data_beta, %bn_data_moving_mean, %bn_data_moving_var, "
            "epsilon=2e-05f, scale=False)") in text
    assert ("nn.conv2d(%1, %conv0_weight, strides=[2, 2], padding=[3, 3, 3, 3], channels=64, kernel_size=[7, 7]) "
            "/* ty=Tensor[(1, 64, 112, 112), float32] */") in text
    assert "nn.max_pool2d(%5, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])" in text
    assert "nn.bias_add(" in text and "axis=-1)" in text


def test_text_round_trip():
    mod, _ = resnet.get_workload(num_layers=50)
    assert_structural_equal(relay.parse(str(mod)), mod)


def test_parameters_are_seeded():
    _, a = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    _, b = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    _, c = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10, seed=1)
    assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)
    assert not np.array_equal(a["conv0_weight"].numpy(), c["conv0_weight"].numpy())
    assert (a["bn0_moving_var"].numpy() > 0).all() if "bn0_moving_var" in a else (a["bn1_moving_var"].numpy() > 0).all()


def test_small_images_and_other_options():
    mod, params = resnet.get_workload(batch_size=2, num_classes=10, num_layers=18, image_shape=(3, 32, 32),
                                      dtype="float16")
    main = mod["main"]
    assert main.ret_type == TensorType((2, 10), "float16")
    assert _op_counts(main)["nn.max_pool2d"] == 0  # CIFAR-sized input: 3x3 stem, no pooling
    assert params["conv0_weight"].shape == (64, 3, 3, 3) and params["conv0_weight"].dtype == "float16"
    cifar, _ = resnet.get_workload(num_layers=20, image_shape=(3, 28, 28), num_classes=10)
    assert cifar["main"].ret_type == TensorType((1, 10), "float32")
    with pytest.raises(KilnError, match="num_layers"):
        resnet.get_workload(num_layers=19)


def test_runs_in_the_reference_interpreter():
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    data = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype("float32")
    run = relay.create_executor("debug", mod=mod).evaluate()
    out = run(data, *[params[p.name_hint] for p in mod["main"].params[1:]]).numpy()
    assert out.shape == (1, 10) and np.all(np.isfinite(out))
    np.testing.assert_allclose(out.sum(), 1.0, rtol=1e-4)
