"""relay.testing.byoc.CcompilerAnnotator: add-subtract-multiply chains become ccompiler regions."""

import numpy as np

import kiln
from kiln import relay
from kiln.relay.testing import byoc


def test_chains_are_annotated_and_partitioned_and_compute_the_same():
    x = relay.var("x", shape=(4, 4))
    ws = [relay.var(f"w{i}", shape=(4, 4)) for i in range(5)]
    chain = relay.multiply(relay.subtract(relay.add(x, ws[0]), ws[1]), ws[2])
    other = relay.subtract(relay.add(x, ws[3]), ws[4])  # no multiply: stays with kiln
    func = relay.Function([x, *ws], relay.concatenate((chain, other), axis=0))
    mod = kiln.IRModule()
    mod["main"] = byoc.CcompilerAnnotator().visit(func)
    part = relay.transform.PartitionGraph()(mod)
    assert [gv.name_hint for gv in part.functions if gv.name_hint != "main"] == ["tvmgen_default_ccompiler_main_0"]
    data = [np.random.rand(4, 4).astype("float32") for _ in range(6)]
    want = np.concatenate((((data[0] + data[1]) - data[2]) * data[3], data[0] + data[4] - data[5]), axis=0)
    got = relay.create_executor("debug", mod=part).evaluate()(*data).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
