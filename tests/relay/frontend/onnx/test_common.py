"""The converter machinery (kiln/relay/frontend/onnx/common.py): opset dispatch, padding rules, dtypes,
attribute parsing."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from kiln.error import OpNotImplemented
from kiln.relay.frontend.onnx.common import CONVERTERS, OnnxOpConverter, get_pads, onnx_dtype, parse_attributes


class _Versions(OnnxOpConverter):
    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        return 1

    @classmethod
    def _impl_v11(cls, inputs, attr, ctx):
        return 11

    @classmethod
    def _impl_v13(cls, inputs, attr, ctx):
        return 13


@pytest.mark.parametrize("opset,version", [(1, 1), (10, 1), (11, 11), (12, 11), (13, 13), (21, 13)])
def test_dispatch_takes_the_largest_version_not_above_the_opset(opset, version):
    assert _Versions.versions() == [1, 11, 13]
    assert _Versions.get_converter(opset)(None, None, None) == version


def test_no_version_below_the_first():
    assert CONVERTERS["Gelu"].get_converter(19) is None and CONVERTERS["Gelu"].get_converter(20) is not None


@pytest.mark.parametrize("auto_pad,expected", [("SAME_UPPER", [(1, 2), (0, 1)]), ("SAME_LOWER", [(2, 1), (1, 0)]),
                                               ("VALID", [(0, 0), (0, 0)])])
def test_auto_pad(auto_pad, expected):
    # in 7 x 6, kernel 4 x 3, stride 2: outputs 4 x 3, total padding 3 and 1
    assert get_pads(None, {"auto_pad": auto_pad}, (7, 6), (4, 3), (2, 2), (1, 1)) == expected
    assert get_pads(None, {"pads": [1, 2, 3, 4]}, (7, 6), (4, 3), (2, 2), (1, 1)) == [(1, 3), (2, 4)]


def test_onnx_dtypes():
    assert onnx_dtype(TensorProto.FLOAT) == "float32" and onnx_dtype(TensorProto.BOOL) == "bool"
    assert onnx_dtype(TensorProto.INT64) == "int64" and onnx_dtype(TensorProto.FLOAT16) == "float16"
    with pytest.raises(OpNotImplemented, match="graph input 'q' has ONNX element type BFLOAT16"):
        onnx_dtype(TensorProto.BFLOAT16, "graph input 'q'")
    with pytest.raises(OpNotImplemented, match="STRING"):
        onnx_dtype(TensorProto.STRING)


def test_parse_attributes():
    tensor = helper.make_tensor("t", TensorProto.INT32, [2], [3, 4])
    node = helper.make_node("X", [], [], mode=b"edge", names=["a", "b"], value=tensor, alpha=0.5, axes=[1, 2])
    attrs = parse_attributes(node)
    assert attrs["mode"] == "edge" and attrs["names"] == ["a", "b"] and attrs["alpha"] == 0.5
    assert attrs["axes"] == [1, 2]
    np.testing.assert_array_equal(attrs["value"], np.array([3, 4], "int32"))
