"""Names at TVM's module paths (SPEC §12): what ``import kiln as tvm`` programs reach for."""

import kiln as tvm
import kiln.driver
import kiln.parser
from kiln import relay


def test_module_paths():
    assert tvm.driver.build_module.build is tvm.build and tvm.driver.lower is tvm.lower
    mod = tvm.parser.parse('#[version = "0.0.5"]\ndef @main(%x: float32) { %x }')
    assert mod["main"].params[0].name_hint == "x"
    assert str(tvm.parser.parse_expr("free_var %x: float32; add(%x, 1f)")).endswith("add(%x, 1f)")
    assert relay.ty.TensorType is tvm.ir.TensorType and relay.scalar_type("int64") == relay.TensorType((), "int64")
    assert relay.build_module.build is relay.build and tvm.runtime.convert(1).value == 1


def test_infer_type_local_and_op_freqs():
    x = relay.var("x", shape=(2, 3))
    body = relay.add(relay.add(x, x), relay.exp(x))
    assert relay.transform.InferTypeLocal(body) == relay.TensorType((2, 3), "float32")
    assert relay.analysis.list_op_freqs(tvm.IRModule.from_expr(body)) == {"add": 2, "exp": 1}


def test_frontend_common_and_nvcc():
    import numpy as np

    from kiln.contrib import nvcc
    from kiln.relay.frontend import common

    x = relay.var("x", shape=(2, 3))
    assert common.infer_shape(relay.add(x, x)) == (2, 3)
    assert common.infer_type(relay.add(x, x)).checked_type == relay.TensorType((2, 3), "float32")
    value = common.infer_value(relay.add(x, relay.const(1.0)), {"x": tvm.nd.array(np.ones((2, 3), "float32"))})
    np.testing.assert_array_equal(value.numpy(), np.full((2, 3), 2.0, "float32"))
    assert not nvcc.have_fp16("7.0") and not nvcc.have_tensorcore("8.0")  # kiln compiles for CPUs only
