"""MergeCompilerRegions: neighbouring regions of one compiler merge unless that would make regions depend on each
other in a cycle; the merged program computes what the annotated one does."""

import numpy as np

import kiln
from kiln import relay
from kiln.ir import Op, assert_structural_equal
from kiln.relay.analysis.annotated_regions import AnnotatedRegionSet
from kiln.relay.op.annotation import compiler_begin as cb
from kiln.relay.op.annotation import compiler_end as ce


def _typed(func):
    return relay.transform.InferType()(kiln.IRModule.from_expr(func))


def _merge(func):
    return relay.transform.MergeCompilerRegions()(_typed(func))


def _run(mod, *args):
    """The value through the reference interpreter, checked against the built module's."""
    want = relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm")
    m = kiln.contrib.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    m.run(**{p.name_hint: a for p, a in zip(mod["main"].params, args, strict=True)})
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-6)
    return want


def _regions(func):
    return AnnotatedRegionSet(func, Op.get("annotation.compiler_begin"), Op.get("annotation.compiler_end"))


def test_chain_of_one_target_becomes_one_region():
    x = relay.var("x", shape=(4,))
    a = ce(relay.nn.relu(cb(x, "t")), "t")
    b = ce(relay.abs(cb(a, "t")), "t")
    merged = _merge(relay.Function([x], b))
    x2 = relay.var("x", shape=(4,))
    expected = relay.Function([x2], ce(relay.abs(relay.nn.relu(cb(x2, "t"))), "t"))
    assert_structural_equal(merged, _typed(expected))
    assert len(_regions(merged["main"])) == 1
    data = np.random.uniform(-1, 1, 4).astype("float32")
    np.testing.assert_allclose(_run(merged, data), np.abs(np.maximum(data, 0)))


def test_diamond_through_another_target_is_not_merged_into_a_cycle():
    # t: relu(x) feeds u: tanh and t: add(relu, tanh); merging add into relu's region would make the t region both
    # feed and consume the u region
    x = relay.var("x", shape=(5,))
    r = relay.nn.relu(cb(x, "t"))
    t = ce(relay.tanh(cb(ce(r, "t"), "u")), "u")
    out = ce(relay.add(cb(ce(r, "t"), "t"), cb(t, "t")), "t")
    merged = _merge(relay.Function([x], out))
    regions = _regions(merged["main"])
    assert sorted(r.get_target() for r in regions) == ["t", "t", "u"]
    data = np.random.uniform(-1, 1, 5).astype("float32")
    np.testing.assert_allclose(_run(merged, data), np.maximum(data, 0) + np.tanh(np.maximum(data, 0)), rtol=1e-6)


def test_different_targets_stay_apart():
    x = relay.var("x", shape=(2,))
    a = ce(relay.nn.relu(cb(x, "t")), "t")
    b = ce(relay.abs(cb(a, "u")), "u")
    func = relay.Function([x], b)
    assert kiln.ir.structural_equal(_merge(func), _typed(func))
