import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.runtime.vm import VirtualMachine


def _vm(mod):
    return VirtualMachine(relay.vm.compile(mod, "llvm"), kiln.cpu())


def _names(mod):
    return sorted(gv.name_hint for gv in mod.functions)


def test_each_bucket_gets_a_static_copy_and_other_sizes_the_dynamic_one():
    x = relay.var("x", shape=(4, 3))
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.multiply(x, relay.const(2.0)))))
    flex = relay.transform.FlexibleShapeDispatch(buckets=[2, 4], axis=0)(mod)
    assert _names(flex) == ["main", "main_2", "main_4", "main_dynamic"]
    assert tuple(flex["main_2"].params[0].type_annotation.shape) == (2, 3)
    vm = _vm(flex)
    for rows in (1, 2, 4, 5):
        data = np.random.default_rng(rows).normal(size=(rows, 3)).astype("float32")
        np.testing.assert_allclose(vm.invoke("main", data).numpy(), np.maximum(2 * data, 0), rtol=1e-6)


def test_auto_pad_rounds_a_size_up_to_the_next_bucket_and_cuts_the_result_back():
    x = relay.var("x", shape=(4, 3))
    mod = kiln.IRModule.from_expr(relay.Function([x], relay.sum(x, axis=1)))
    flex = relay.transform.FlexibleShapeDispatch(buckets=[2, 4], auto_pad=True, pad_value=7.0)(mod)
    vm = _vm(flex)
    data = np.arange(9, dtype="float32").reshape(3, 3)
    np.testing.assert_allclose(vm.invoke("main", data).numpy(), data.sum(axis=1))


@pytest.mark.parametrize("affects_output, out_shape", [(False, (6, 6))])
def test_several_inputs_share_the_axis_and_a_fixed_output_keeps_its_type(affects_output, out_shape):
    x, w = relay.var("x", shape=(6, 6)), relay.var("w", shape=(6, 6))
    mod = kiln.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w)))
    flex = relay.transform.FlexibleShapeDispatch(buckets=[3], axis=1, input_indices=[0, 1],
                                                 affects_output=affects_output)(mod)
    assert tuple(flex["main"].checked_type.ret_type.shape) == out_shape
    data = np.random.default_rng(0).normal(size=(6, 3)).astype("float32")
    np.testing.assert_allclose(_vm(flex).invoke("main", data, data).numpy(), data @ data.T, rtol=1e-5)
