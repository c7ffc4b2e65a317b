"""Tests of kiln/ir/analysis.py: cached analyses, their keys, and invalidation by passes that do not preserve them."""

import pytest

import kiln as tvm
from kiln import relay
from kiln.ir.analysis import ALL, AnalysisManager, PreservedAnalyses, list_analyses, register_analysis
from kiln.relay.transform import InferType, function_pass
from kiln.transform import PassContext, Sequential, module_pass

calls = []


@register_analysis("test.num_params", scope="function")
def num_params(func, mod):
    calls.append(("num_params", func))
    return len(func.params)


@register_analysis("test.num_functions", scope="module")
def num_functions(mod):
    calls.append(("num_functions", mod))
    return len(mod.functions)


def make_mod():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(2, 3))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.add(x, x))))
    mod["unused"] = relay.Function([y], relay.exp(y))
    return mod


def test_preserved_analyses():
    assert PreservedAnalyses.none().is_none() and not PreservedAnalyses.none().is_preserved("InferType")
    assert ALL.is_all() and ALL.is_preserved("anything")
    some = PreservedAnalyses.none().preserve("InferType")
    assert some.is_preserved("InferType") and not some.is_preserved("WellFormed")
    assert PreservedAnalyses.make(["InferType"]) == some and PreservedAnalyses.make("all") == ALL
    assert PreservedAnalyses.make(None).is_none()
    with pytest.raises(TypeError, match="analysis names"):
        PreservedAnalyses.make([1])


def test_function_results_are_cached_per_function_object():
    calls.clear()
    am = AnalysisManager()
    mod = make_mod()
    main = mod["main"]
    assert am.get("test.num_params", main, mod) == 1
    assert am.get("test.num_params", main, mod) == 1
    assert am.stats["test.num_params"] == {"computed": 1, "reused": 1} and len(calls) == 1
    assert am.get_cached("test.num_params", main) == 1
    assert am.get_cached("test.num_params", mod["unused"], "none") == "none"
    am.invalidate("test.num_params")
    am.get("test.num_params", main, mod)
    assert am.stats["test.num_params"]["computed"] == 2


def test_module_results_are_keyed_by_contents():
    calls.clear()
    am = AnalysisManager()
    mod = make_mod()
    assert am.get("test.num_functions", mod) == 2
    assert am.get("test.num_functions", mod.shallow_copy()) == 2  # a new module object, same functions: reused
    mod.remove("unused")  # changed in place: the old result must not be returned
    assert am.get("test.num_functions", mod) == 1
    assert am.stats["test.num_functions"] == {"computed": 2, "reused": 1}


def test_unknown_analysis_and_bad_scope():
    am = AnalysisManager()
    with pytest.raises(ValueError, match="test.nothing"):
        am.get("test.nothing", make_mod())
    with pytest.raises(ValueError, match="scope"):
        register_analysis("test.bad", lambda m: 0, scope="loop")
    assert {"InferType", "WellFormed", "test.num_params"} <= set(list_analyses())


def test_capacity_bounds_the_cache():
    am = AnalysisManager(capacity=2)
    funcs = [make_mod()["main"] for _ in range(3)]
    for f in funcs:
        am.get("test.num_params", f)
    assert am.get_cached("test.num_params", funcs[0]) is None
    assert am.get_cached("test.num_params", funcs[2]) == 1
    am = AnalysisManager(module_capacity=1)  # module results (a typed model, say) are kept fewer
    first, second = make_mod(), make_mod()
    am.get("test.num_functions", first)
    am.get("test.num_functions", second)
    assert am.get_cached("test.num_functions", first) is None and am.get_cached("test.num_functions", second) == 2


def test_update_carries_only_preserved_results():
    am = AnalysisManager()
    before = make_mod()
    am.get("test.num_functions", before)
    am.get("test.num_params", before["main"], before)
    x = relay.var("x", shape=(2, 3))
    after = before.shallow_copy()
    after["main"] = relay.Function([x], x)
    am.update(before, after, PreservedAnalyses.none())
    assert am.get_cached("test.num_functions", after) is None
    assert am.get_cached("test.num_params", after["main"]) is None
    am.update(before, after, ["test.num_params", "test.num_functions"])
    assert am.get_cached("test.num_functions", after) == 2
    assert am.get_cached("test.num_params", after["main"]) == 1


def test_infer_type_not_recomputed_across_passes_that_preserve_types():
    @module_pass(opt_level=0, preserves=["InferType"])
    def RemoveUnused(mod, ctx):
        """Drops @unused: every remaining function keeps its types."""
        mod.remove("unused")
        return mod

    @function_pass(opt_level=0)
    def Nothing(func, mod, ctx):
        return func

    seq = Sequential([InferType(), RemoveUnused, InferType(), Nothing, InferType()])
    with PassContext() as ctx:
        out = seq(make_mod())
        stats = dict(ctx.analysis_manager.stats["InferType"])
    assert "unused" not in out and out["main"].body.checked_type == relay.TensorType((2, 3))
    assert stats == {"computed": 1, "reused": 2}


def test_infer_type_recomputed_after_a_pass_that_does_not_preserve_types():
    @function_pass(opt_level=0)
    def ReluToExp(func, mod, ctx):
        return func.with_fields(body=relay.exp(func.body.args[0])) if func.params[0].name_hint == "x" else func

    with PassContext() as ctx:
        out = Sequential([InferType(), ReluToExp, InferType()])(make_mod())
        stats = dict(ctx.analysis_manager.stats["InferType"])
    assert stats == {"computed": 2, "reused": 0}
    assert out["main"].body.checked_type == relay.TensorType((2, 3))


def test_required_infer_type_reuses_the_cached_types():
    @module_pass(opt_level=0, required=["InferType"])
    def NeedsTypes(mod, ctx):
        assert mod["main"].body.checked_type_ is not None
        return mod

    with PassContext() as ctx:
        Sequential([InferType(), NeedsTypes, NeedsTypes])(make_mod())
        assert ctx.analysis_manager.stats["InferType"] == {"computed": 1, "reused": 2}


def test_cached_typed_module_is_not_shared_with_callers():
    with PassContext():
        mod = make_mod()
        typed = InferType()(mod)
        typed.remove("unused")  # the caller changes its result in place
        again = InferType()(mod)
    assert "unused" in again and again is not typed
