import numpy as np

import kiln
from kiln import relay


def _module():
    return relay.parse("""
        #[version = "0.0.5"]
        def @unused(%x: Tensor[(2), float32]) { %x }
        def @twice(%x: Tensor[(2), float32]) { add(%x, %x) }
        def @apply(%f: fn (Tensor[(2), float32]) -> Tensor[(2), float32], %x: Tensor[(2), float32]) { %f(%x) }
        def @main(%x: Tensor[(2), float32]) { @apply(@twice, %x) }
        def @other(%x: Tensor[(2), float32]) { @unused(%x) }
    """)


def test_keeps_what_main_reaches_by_call_or_as_a_value():
    mod = relay.transform.RemoveUnusedFunctions()(_module())
    assert {gv.name_hint for gv in mod.get_global_vars()} == {"main", "apply", "twice"}
    out = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(kiln.nd.array(np.array([1.0, 2.0], "float32")))
    assert out.numpy().tolist() == [2.0, 4.0]


def test_named_entry_functions_and_prelude_types_stay():
    mod = _module()
    mod.import_from_std("prelude.rly")
    after = relay.transform.RemoveUnusedFunctions(["other"])(mod)
    assert {gv.name_hint for gv in after.get_global_vars()} == {"other", "unused"}
    assert after.get_type("List") == mod.get_type("List")
