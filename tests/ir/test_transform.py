"""Tests of kiln/ir/transform.py and kiln/ir/pass_context.py: SPEC section 4, rule by rule, through the public API."""

import dataclasses
import threading

import numpy as np
import pytest

import kiln as tvm
from kiln import relay
from kiln.error import KilnError
from kiln.ir.transform import ModulePass, PassInfo, register_pass
from kiln.relay.transform import FunctionPass, function_pass
from kiln.transform import PassContext, Sequential, module_pass


def make_mod():
    x = relay.var("x", shape=(2, 3))
    return tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.add(x, x))))


def recorder(events, name, opt_level=2, required=None):
    def run(mod, ctx):
        events.append(name)
        return mod

    return module_pass(run, opt_level=opt_level, name=name, required=required)


# --- PassInfo ------------------------------------------------------------------------------------------------------
def test_pass_info_fields_and_str():
    info = PassInfo(opt_level=1, name="xyz")
    assert (info.opt_level, info.name, info.required) == (1, "xyz", ())
    info = PassInfo(3, "FuseOps", ["InferType"])
    assert info.required == ("InferType",)  # a list is accepted, a tuple kept
    assert "pass name: FuseOps" in str(info) and "opt_level: 3" in str(info) and "InferType" in str(info)
    assert info == PassInfo(3, "FuseOps", ("InferType",)) and hash(info) == hash(PassInfo(3, "FuseOps", ["InferType"]))


def test_pass_info_rejects_bad_values():
    with pytest.raises(TypeError, match="opt_level"):
        PassInfo("2", "p")
    with pytest.raises(TypeError, match="required"):
        PassInfo(2, "p", "InferType")


# --- PassContext -----------------------------------------------------------------------------------------------
def test_default_context_and_stack():
    default = PassContext.current()
    assert default.opt_level == 2 and not default.instruments
    assert default.required_pass == [] and default.disabled_pass == []
    assert PassContext.current() is default  # one default per thread
    outer = PassContext(opt_level=3)
    with outer as entered:
        assert entered is outer and PassContext.current() is outer
        with PassContext(opt_level=0) as inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer
    assert PassContext.current() is default


def test_context_is_per_thread():
    seen = {}

    def other():
        seen["level"] = PassContext.current().opt_level
        seen["ctx"] = PassContext.current()

    with PassContext(opt_level=0) as ctx:
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert seen["level"] == 2 and seen["ctx"] is not ctx


def test_context_argument_types():
    with pytest.raises(TypeError, match="required_pass"):
        PassContext(required_pass="FoldConstant")
    with pytest.raises(TypeError, match="disabled_pass"):
        PassContext(disabled_pass=3)
    with pytest.raises(TypeError, match="not a pass instrument"):
        PassContext(instruments=[object()])


def test_config_registered_unknown_and_wrong_type():
    tvm.transform.register_config("test.Transform.depth", int, 256)
    tvm.transform.register_config("test.Transform.flag", bool, False)
    ctx = PassContext(config={"test.Transform.depth": 4, "test.Transform.flag": 1})
    assert ctx.config["test.Transform.depth"] == 4 and ctx.config["test.Transform.flag"] is True
    assert ctx.config.get("test.Transform.missing", 7) == 7
    with pytest.raises(ValueError, match="test.Transform.dpeth"):
        PassContext(config={"test.Transform.dpeth": 4})
    with pytest.raises(ValueError, match="test.Transform.depth") as info:
        PassContext(config={"test.Transform.depth": "4"})
    assert "int" in str(info.value)
    with pytest.raises(ValueError, match="test.Transform.depth"):
        PassContext(config={"test.Transform.depth": True})
    with pytest.raises(ValueError, match="already registered"):
        tvm.transform.register_config("test.Transform.depth", str, "x")
    configs = PassContext.list_configs()
    assert configs["test.Transform.depth"] == {"type": "IntImm", "python_type": "int", "default": 256}
    assert configs["test.Transform.flag"] == {"type": "IntImm", "python_type": "bool", "default": False}
    assert configs["transform.max_passes"] == {"type": "IntImm", "python_type": "int", "default": -1}
    assert tvm.transform.list_configs() == configs


def test_config_is_read_only():
    ctx = PassContext(config={"transform.max_passes": 3})
    with pytest.raises(TypeError):
        ctx.config["transform.max_passes"] = 4


# --- passes --------------------------------------------------------------------------------------------------
def test_module_pass_on_function():
    def transform(mod, ctx):
        return mod

    p = module_pass(transform, 1, "module_pass_test")  # positional, as TVM's tests write it
    assert isinstance(p, tvm.transform.ModulePass) and isinstance(p, tvm.transform.Pass)
    assert p.info.name == "module_pass_test" and p.info.opt_level == 1
    q = module_pass(opt_level=2)(transform)
    assert q.info.name == "transform" and str(q) == "transform"


def test_module_pass_on_class():
    @module_pass(opt_level=1)
    class TestPipeline:
        """Replace the module by another one."""

        def __init__(self, new_mod, replace):
            self.new_mod = new_mod
            self.replace = replace

        def transform_module(self, mod, ctx):
            return self.new_mod if self.replace else mod

    m1, m2 = make_mod(), make_mod()
    fpass = TestPipeline(m2, replace=True)
    assert fpass.info.name == "TestPipeline" and fpass.info.opt_level == 1
    assert isinstance(fpass, ModulePass) and fpass.replace is True  # attributes forward to the instance
    assert TestPipeline.__doc__ == "Replace the module by another one."
    assert fpass(m1) is m2
    assert TestPipeline(m2, replace=False)(m1) is m1  # a pass that changes nothing returns its input


def test_decorator_requires_opt_level_and_method():
    with pytest.raises(ValueError, match="opt_level"):
        module_pass(lambda mod, ctx: mod)
    with pytest.raises(TypeError, match="transform_module"):
        @module_pass(opt_level=0)
        class NoMethod:
            pass
    with pytest.raises(TypeError, match="required"):
        module_pass(lambda mod, ctx: mod, opt_level=0, required="InferType")


def test_module_pass_must_return_a_module():
    bad = module_pass(lambda mod, ctx: None, opt_level=0, name="ReturnsNothing")
    with pytest.raises(KilnError, match="ReturnsNothing"):
        bad(make_mod())


def test_pass_does_not_mutate_its_input():
    y = relay.var("y", shape=(2, 3))

    @module_pass(opt_level=0)
    def add_function(mod, ctx):
        mod["extra"] = relay.Function([y], y)
        return mod

    mod = make_mod()
    out = add_function(mod)
    assert "extra" in out and "extra" not in mod and out is not mod


def test_direct_call_ignores_opt_level_and_disabled():
    events = []
    p = recorder(events, "Expensive", opt_level=4)
    with PassContext(opt_level=0, disabled_pass=["Expensive"]):
        p(make_mod())
    assert events == ["Expensive"]


def test_sequential_enabling_rules():
    events = []
    passes = [recorder(events, "A", 1), recorder(events, "B", 3), recorder(events, "C", 3), recorder(events, "D", 0)]
    seq = Sequential(passes, opt_level=0)
    assert seq.info.name == "sequential" and seq.info.opt_level == 0 and seq.passes == passes
    with PassContext(opt_level=2, required_pass=["B", "D"], disabled_pass=["A", "D"]):
        seq(make_mod())
    # A disabled; B required beats its opt_level; C above opt_level; D disabled beats required
    assert events == ["B"]
    events.clear()
    with PassContext(opt_level=3):
        seq(make_mod())
    assert events == ["A", "B", "C", "D"]


def test_sequential_runs_required_passes_by_name():
    events = []
    register_pass("TestReq.Prepare", lambda: recorder(events, "TestReq.Prepare", opt_level=4))
    main = recorder(events, "TestReq.Main", 0, required=["TestReq.Prepare"])
    with PassContext(opt_level=0):
        Sequential([main, main])(make_mod())
    # a required pass always runs (its own opt_level is not checked) before each run of the pass needing it
    assert events == ["TestReq.Prepare", "TestReq.Main", "TestReq.Prepare", "TestReq.Main"]
    events.clear()
    with PassContext(disabled_pass=["TestReq.Main"]):
        Sequential([main])(make_mod())
    assert events == []  # a disabled pass's requirements do not run either


def test_sequential_unknown_required_pass():
    p = recorder([], "NeedsGhost", 0, required=["NoSuchPass"])
    seq = Sequential([p])
    with pytest.raises(ValueError, match="NoSuchPass"):
        seq(make_mod())


def test_sequential_argument_checks():
    with pytest.raises(TypeError, match="list"):
        Sequential(recorder([], "A"))
    with pytest.raises(TypeError, match="not a Pass"):
        Sequential([lambda mod: mod])


def test_nested_sequential_uses_context_opt_level():
    events = []
    inner = Sequential([recorder(events, "X", 1), recorder(events, "Y", 3)], opt_level=1, name="inner")
    with PassContext(opt_level=2):
        Sequential([inner])(make_mod())
    assert events == ["X"]


# --- registry ----------------------------------------------------------------------------------------------------
def test_register_pass_on_factory_and_class():
    @register_pass("TestRegistry.Factory")
    def factory():
        return module_pass(lambda mod, ctx: mod, opt_level=0, name="TestRegistry.Factory")

    @register_pass("TestRegistry.Class")
    class ClassPass(ModulePass):
        info = PassInfo(1, "TestRegistry.Class")

        def __init__(self):
            pass

        def transform_module(self, mod, ctx):
            return mod

    a, b = tvm.transform.get_pass("TestRegistry.Factory"), tvm.transform.get_pass("TestRegistry.Factory")
    assert a is not b and a.info.name == "TestRegistry.Factory"
    assert isinstance(tvm.transform.get_pass("TestRegistry.Class"), ClassPass)
    names = tvm.transform.list_passes()
    assert {"TestRegistry.Factory", "TestRegistry.Class", "InferType", "PrintIR"} <= set(names)
    assert names == sorted(names)
    with pytest.raises(ValueError, match="TestRegistry.Nope"):
        tvm.transform.get_pass("TestRegistry.Nope")
    with pytest.raises(ValueError, match="already registered"):
        register_pass("TestRegistry.Factory", lambda: None)


def test_infer_type_is_registered_builtin():
    p = tvm.transform.get_pass("InferType")
    assert isinstance(p, relay.transform.InferType) and p.info.name == "InferType" and p.info.opt_level == 0
    mod = p(make_mod())
    assert mod["main"].body.checked_type == relay.TensorType((2, 3))


def test_print_ir(capsys):
    mod = make_mod()
    out = tvm.transform.PrintIR("after nothing")(mod)
    assert out is mod
    printed = capsys.readouterr().err
    assert printed.startswith("PrintIR(after nothing):\n") and str(mod) in printed


# --- function passes -----------------------------------------------------------------------------------------
def test_function_pass_on_class_and_skips():
    x = relay.var("x", shape=(10, 20))
    f1, f2 = relay.Function([x], x), relay.Function([x], relay.log(x))

    @function_pass(opt_level=1)
    class TestReplaceFunc:
        def __init__(self, new_func):
            self.new_func = new_func

        def transform_function(self, func, mod, ctx):
            return self.new_func

    fpass = TestReplaceFunc(f1)
    assert isinstance(fpass, FunctionPass) and fpass.info.opt_level == 1 and fpass.info.name == "TestReplaceFunc"
    mod = tvm.IRModule({"main": f2, "fused": f2.with_attr("Primitive", 1), "skip": f2.with_attr("SkipOptimization", 1)})
    out = fpass(mod)
    # as in TVM, the module a function pass changed comes back typed
    assert tvm.ir.structural_equal(out["main"], relay.transform.infer_type(f1))
    typed = relay.transform.infer_type(mod)
    assert tvm.ir.structural_equal(out["fused"], typed["fused"]) and tvm.ir.structural_equal(out["skip"], typed["skip"])
    assert mod["main"] is f2


def test_function_pass_sees_each_function_and_module():
    seen = []

    @function_pass(opt_level=0)
    def visit(func, mod, ctx):
        seen.append((len(mod.functions), ctx is PassContext.current()))
        return func

    mod = make_mod()
    mod["second"] = mod["main"]
    assert visit(mod) is mod  # nothing changed: the same module
    assert seen == [(2, True), (2, True)]


def test_prim_func_pass_updates_and_removes():
    from kiln import tir
    from kiln.tir.transform.function_pass import PrimFuncPass, prim_func_pass

    def prim(name):
        return tir.PrimFunc([], tir.Evaluate(tir.IntImm("int32", 0))).with_attr("global_symbol", name)

    @prim_func_pass(opt_level=0)
    def rename_or_drop(func, mod, ctx):
        if func.attrs["global_symbol"] == "drop":
            return None
        return func.with_attr("renamed", 1)

    mod = make_mod()
    mod["keep"], mod["drop"] = prim("keep"), prim("drop")
    assert isinstance(rename_or_drop, PrimFuncPass)
    out = rename_or_drop(mod)
    assert "drop" not in out and out["keep"].attrs["renamed"] == 1
    assert out["main"] is mod["main"] and "drop" in mod


# --- errors keep their type --------------------------------------------------------------------------------
def test_exception_in_pass_keeps_type_and_names_pass():
    @module_pass(opt_level=0)
    def Broken(mod, ctx):
        raise ZeroDivisionError("boom")

    with pytest.raises(ZeroDivisionError, match="boom") as info:
        Sequential([Broken])(make_mod())
    assert any("Broken" in note for note in info.value.__notes__)
    assert sum("in pass" in note for note in info.value.__notes__) == 1  # only the innermost pass is named


# --- bisection ----------------------------------------------------------------------------------------------
def test_max_passes_bisection(capsys):
    events = []
    seq = Sequential([recorder(events, name, 0) for name in "ABCD"])
    with PassContext(config={"transform.max_passes": 2}):
        seq(make_mod())
    assert events == ["A", "B"]
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "BISECT: running pass (1) A on module",
        "BISECT: running pass (2) B on module",
        "BISECT: NOT running pass (3) C on module",
        "BISECT: NOT running pass (4) D on module",
    ]
    events.clear()
    seq(make_mod())  # without the limit: no reports
    assert events == list("ABCD") and capsys.readouterr().err == ""


def test_bisection_counts_functions_and_spares_required(capsys):
    @function_pass(opt_level=0)
    def mark(func, mod, ctx):
        return func.with_attr("marked", 1)

    mod = make_mod()
    mod["other"] = mod["main"]
    with PassContext(config={"transform.max_passes": 1}):
        out = mark(mod)
    assert out["main"].attrs.get("marked") == 1 and out["other"].attrs.get("marked") is None
    err = capsys.readouterr().err
    assert "BISECT: running pass (1) mark on function (@main)" in err
    assert "BISECT: NOT running pass (2) mark on function (@other)" in err
    with PassContext(required_pass=["mark"], config={"transform.max_passes": 0}):
        out = mark(mod)
    assert out["other"].attrs.get("marked") == 1 and capsys.readouterr().err == ""


def test_bisection_finds_the_breaking_pass():
    """Halving transform.max_passes finds the first pass after which the model computes something else."""

    @function_pass(opt_level=0)
    def DropRelu(func, mod, ctx):
        body = func.body
        return func.with_fields(body=body.args[0]) if getattr(body, "op", None) == relay.Op.get("nn.relu") else func

    ok = [recorder([], f"Ok{i}", 0) for i in range(7)]
    seq = Sequential(ok[:5] + [DropRelu] + ok[5:])
    mod = make_mod()
    data = np.random.default_rng(0).standard_normal((2, 3)).astype("float32")
    expected = relay.create_executor("debug", mod=mod).evaluate()(data).numpy()

    def breaks(limit):
        with PassContext(config={"transform.max_passes": limit}):
            out = seq(mod)
        got = relay.create_executor("debug", mod=out).evaluate()(data).numpy()
        return not np.allclose(got, expected)

    lo, hi = 0, 8  # breaks(lo) is False, breaks(hi) is True
    assert not breaks(lo) and breaks(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if breaks(mid) else (mid, hi)
    assert hi == 6 and seq.passes[hi - 1] is DropRelu


def test_builtin_style_dataclass_function_pass():
    from dataclasses import dataclass

    @register_pass("TestBuiltin.Tag")
    @dataclass(frozen=True)
    class Tag(FunctionPass):
        """A pass written the way built-in passes are: a frozen dataclass whose fields are its options."""

        value: int = 1
        info = PassInfo(1, "TestBuiltin.Tag")

        def transform_function(self, func, mod, ctx):
            return func.with_attr("tag", self.value)

    p = tvm.transform.get_pass("TestBuiltin.Tag", value=3)
    assert p == Tag(3) and str(p) == "TestBuiltin.Tag(value=3)" and p.info.opt_level == 1
    assert p(make_mod())["main"].attrs["tag"] == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.value = 4  # frozen
    assert str(tvm.transform.parse_pipeline(str(p)).passes[0]) == str(p)
