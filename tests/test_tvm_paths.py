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
