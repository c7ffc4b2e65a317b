"""on_device and device_copy: builders, attributes, text form and values (the identity)."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import OpAttributeInvalid
from kiln.target import VirtualDevice


def test_builders_take_devices_names_or_virtual_devices():
    x = relay.var("x", shape=(2, 3))
    ann = relay.annotation.on_device(x, "cpu", constrain_result=True)
    assert ann.attrs.virtual_device == VirtualDevice(kiln.cpu(0)) and ann.attrs.constrain_body
    copy = relay.device_copy(x, kiln.cpu(0), VirtualDevice(kiln.device("cuda")))
    assert copy.attrs.dst_virtual_device.device_type == 2
    free = relay.annotation.on_device(x, VirtualDevice(), constrain_body=False)
    assert free.attrs.virtual_device.is_fully_unconstrained
    with pytest.raises(OpAttributeInvalid, match="fully unconstrained"):
        relay.annotation.on_device(x, VirtualDevice())
    with pytest.raises(OpAttributeInvalid, match="VirtualDevice"):
        relay.device_copy(x, 1.5, "cpu")


def test_text_round_trip_and_identity_values():
    x = relay.var("x", shape=(2, 3))
    body = relay.device_copy(relay.annotation.on_device(relay.exp(x), "cpu", constrain_result=True), "cpu", "cuda")
    mod = relay.transform.InferType()(kiln.IRModule.from_expr(relay.Function([x], body)))
    kiln.ir.assert_structural_equal(relay.parse(mod.astext()), mod)
    data = np.random.rand(2, 3).astype("float32")
    out = relay.create_executor("debug", mod=mod).evaluate()(data).numpy()
    np.testing.assert_allclose(out, np.exp(data), rtol=1e-6)
