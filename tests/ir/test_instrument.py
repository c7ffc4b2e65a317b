"""Tests of kiln/ir/instrument.py: SPEC section 5 (hook order, exception rules, the TVM instruments) and the
beyond-TVM debugging instruments catching planted broken passes."""

import numpy as np
import pytest

import kiln as tvm
from kiln import relay
from kiln.ir.instrument import (
    PassInstrument,
    PassPrintingInstrument,
    PassTimingInstrument,
    PassVerificationError,
    PrintAfterAll,
    PrintBeforeAll,
    VerifySemantics,
    VerifyWellFormed,
    pass_instrument,
)
from kiln.relay.transform import function_pass
from kiln.transform import PassContext, Sequential, module_pass


def make_mod():
    x = relay.var("x", shape=(2, 3))
    return tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.add(x, x))))


@pass_instrument
class PI:
    """Prints every hook, indented as in TVM's test of the call sequence."""

    def __init__(self, id_):
        self.id = id_

    def enter_pass_ctx(self):
        print(self.id + " enter ctx")

    def exit_pass_ctx(self):
        print(self.id + " exit ctx")

    def should_run(self, mod, info):
        print("  " + self.id + " should run")
        return True

    def run_before_pass(self, mod, info):
        print("    " + self.id + " run before")

    def run_after_pass(self, mod, info):
        print("    " + self.id + " run after")


def printing_pass(name):
    def run(mod, ctx):
        print(f"      {name} pass")
        return mod

    return module_pass(run, opt_level=2, name=name)


def test_pass_instrument_decorator():
    assert isinstance(PI("%1"), PassInstrument) and PI("%1").name == "PI" and PI.__doc__.startswith("Prints")
    with pytest.raises(TypeError, match="class"):
        pass_instrument(lambda: None)

    class Sub(PassInstrument):
        pass

    assert pass_instrument(Sub) is Sub


def test_instrument_call_sequence(capsys):
    mod = make_mod()
    with PassContext(instruments=[PI("%1"), PI("%2")]):
        mod = printing_pass("transform1")(mod)
        mod = printing_pass("transform2")(mod)
    per_pass = (
        "  %1 should run\n  %2 should run\n    %1 run before\n    %2 run before\n"
        "      {} pass\n    %1 run after\n    %2 run after\n"
    )
    assert capsys.readouterr().out == (
        "%1 enter ctx\n%2 enter ctx\n" + per_pass.format("transform1") + per_pass.format("transform2")
        + "%1 exit ctx\n%2 exit ctx\n"
    )


def test_should_run_false_skips_pass_and_every_should_run_is_asked():
    events = []

    @pass_instrument
    class Skip:
        def __init__(self, answer):
            self.answer = answer

        def should_run(self, mod, info):
            events.append(f"should_run {self.answer}")
            return self.answer

        def run_before_pass(self, mod, info):
            events.append("before")

        def run_after_pass(self, mod, info):
            events.append("after")

    @module_pass(opt_level=0)
    def work(mod, ctx):
        events.append("pass")
        return mod

    with PassContext(instruments=[Skip(False), Skip(True)]):
        work(make_mod())
    assert events == ["should_run False", "should_run True"]
    events.clear()
    with PassContext(instruments=[Skip(False)], required_pass=["work"]):
        work(make_mod())  # should_run is not asked for a required pass
    assert events == ["before", "pass", "after"]


def test_sequential_hooks_nest(capsys):
    with PassContext(instruments=[PI("%1")]):
        Sequential([printing_pass("inner")], name="outer")(make_mod())
    assert capsys.readouterr().out == (
        "%1 enter ctx\n  %1 should run\n    %1 run before\n  %1 should run\n    %1 run before\n"
        "      inner pass\n    %1 run after\n    %1 run after\n%1 exit ctx\n"
    )


# --- exception rules ---------------------------------------------------------------------------------------
class Recorder(PassInstrument):
    """Records every hook in ``events``; ``fail`` names the hook that raises RuntimeError."""

    def __init__(self, events, id_="", fail=None):
        self.events, self.id, self.fail = events, id_, fail

    def _hit(self, what):
        self.events.append(f"{self.id}{what}")
        if what == self.fail:
            raise RuntimeError(f"dummy error in {what}")

    def enter_pass_ctx(self):
        self._hit("enter_ctx")

    def exit_pass_ctx(self):
        self._hit("exit_ctx")

    def should_run(self, mod, info):
        self._hit("should_run")
        return True

    def run_before_pass(self, mod, info):
        self._hit("run_before_pass")

    def run_after_pass(self, mod, info):
        self._hit("run_after_pass")


def test_enter_pass_ctx_exception():
    events = []
    ctx = PassContext(instruments=[Recorder(events, "%1 "), Recorder(events, "%2 ", "enter_ctx"), Recorder(events, "%3 ")])
    with pytest.raises(RuntimeError, match="dummy error"):
        with ctx:
            events.append("body")
    assert events == ["%1 enter_ctx", "%2 enter_ctx", "%1 exit_ctx"]
    assert PassContext.current() is not ctx and not ctx.instruments


def test_enter_pass_ctx_exception_on_override():
    events = []
    current = PassContext.current()
    with pytest.raises(RuntimeError, match="dummy error"):
        current.override_instruments([Recorder(events, fail="enter_ctx")])
    assert not current.instruments and events == ["enter_ctx"]


def test_exit_pass_ctx_exception():
    events = []
    ctx = PassContext(instruments=[Recorder(events, "%1 "), Recorder(events, "%2 ", "exit_ctx"), Recorder(events, "%3 ")])
    with pytest.raises(RuntimeError, match="dummy error"):
        with ctx:
            pass
    assert events == ["%1 enter_ctx", "%2 enter_ctx", "%3 enter_ctx", "%1 exit_ctx", "%2 exit_ctx"]
    assert PassContext.current() is not ctx and not ctx.instruments


@pytest.mark.parametrize(
    "fail,expected",
    [
        ("should_run", ["enter_ctx", "should_run", "exit_ctx"]),
        ("run_before_pass", ["enter_ctx", "should_run", "run_before_pass", "exit_ctx"]),
        ("transform", ["enter_ctx", "should_run", "run_before_pass", "transform pass", "exit_ctx"]),
        ("run_after_pass", ["enter_ctx", "should_run", "run_before_pass", "transform pass", "run_after_pass", "exit_ctx"]),
    ],
)
def test_exceptions_during_a_pass(fail, expected):
    events = []

    @module_pass(opt_level=2)
    def transform(mod, ctx):
        events.append("transform pass")
        if fail == "transform":
            raise RuntimeError("dummy error in transform")
        return mod

    with pytest.raises(RuntimeError, match=f"dummy error in {fail}") as info:
        with PassContext(opt_level=3, instruments=[Recorder(events, fail=fail)]):
            transform(make_mod())
            events.append("not reached")
    assert events == expected
    assert type(info.value) is RuntimeError  # the original type, with a note naming the pass
    assert any("transform" in note for note in info.value.__notes__)


def test_override_instruments_exits_old_then_enters_new():
    events = []
    with PassContext(instruments=[Recorder(events, "old ")]) as ctx:
        ctx.override_instruments([Recorder(events, "new ")])
        assert [i.id for i in ctx.instruments] == ["new "]
    assert events == ["old enter_ctx", "old exit_ctx", "new enter_ctx", "new exit_ctx"]


# --- TVM's instruments -------------------------------------------------------------------------------------
def test_pass_timing_instrument():
    timing = PassTimingInstrument()
    current = PassContext.current()
    current.override_instruments([timing])
    try:
        Sequential([relay.transform.InferType(), printing_pass("Other")], name="Outer")(make_mod())
        profiles = timing.render()
    finally:
        current.override_instruments(None)
    lines = profiles.splitlines()
    assert [line.split(":")[0] for line in lines] == ["Outer", "\tInferType", "\tOther"]
    assert all(line.rstrip().endswith("%)") and "us [" in line for line in lines)
    assert timing.render() == ""  # cleared by override_instruments
    with PassContext(instruments=[timing]):
        relay.transform.InferType()(make_mod())
        assert timing.render().startswith("InferType: ")
    assert timing.render() == ""  # cleared when the context is left


def test_print_before_and_after_all(capsys):
    mod = make_mod()
    with PassContext(instruments=[PrintBeforeAll(), PrintAfterAll()]):
        printing_pass("Shown")(mod)
    out = capsys.readouterr().out
    assert out.index("Before Running Pass:") < out.index("Shown pass") < out.index("After Running Pass:")
    assert "pass name: Shown" in out and out.count(str(mod)) == 2


def test_pass_printing_instrument(capsys):
    mod = make_mod()
    with PassContext(instruments=[PassPrintingInstrument(["A"], ["B"])]):
        Sequential([printing_pass("A"), printing_pass("B"), printing_pass("C")])(mod)
    out = capsys.readouterr().out
    assert f"Print IR before: A\n{mod}\n\n" in out and f"Print IR after: B\n{mod}\n\n" in out
    assert "after: A" not in out and "before: B" not in out and ": C" not in out


def test_print_after_all_only_changed(capsys):
    @function_pass(opt_level=0)
    def ReluToSigmoid(func, mod, ctx):
        return func.with_fields(body=relay.sigmoid(func.body.args[0]))

    with PassContext(instruments=[PrintAfterAll(only_changed=True)]):
        Sequential([printing_pass("Nothing"), ReluToSigmoid, printing_pass("Nothing2")])(make_mod())
    out = capsys.readouterr().out
    assert out.count("After Running Pass:") == 1 and "pass name: ReluToSigmoid" in out
    diff = out.splitlines()
    assert "--- before ReluToSigmoid" in diff and "+++ after ReluToSigmoid" in diff
    assert any(line.startswith("-") and "nn.relu" in line for line in diff)
    assert any(line.startswith("+") and "sigmoid" in line for line in diff)


# --- beyond TVM: verification instruments catch planted broken passes ------------------------------------
@function_pass(opt_level=0)
def DropOperator(func, mod, ctx):
    """Broken: drops the relu (changes the result, still well formed)."""
    return func.with_fields(body=func.body.args[0])


@module_pass(opt_level=0)
def MakeIllTyped(mod, ctx):
    """Broken: adds a (4, 5) constant to a (2, 3) tensor. (A module pass: a function pass's result is typed as
    soon as it returns, so the type error would surface there, naming the pass, before any instrument runs.)"""
    func = mod["main"]
    out = mod.shallow_copy()
    out["main"] = func.with_fields(body=relay.add(func.body, relay.const(np.ones((4, 5), "float32"))))
    return out


@function_pass(opt_level=0)
def LeakVariable(func, mod, ctx):
    """Broken: uses a let variable outside the let that binds it."""
    v = relay.var("v", shape=(2, 3))
    return func.with_fields(body=relay.Tuple([relay.Let(v, func.body, v), v]))


@function_pass(opt_level=0)
def Harmless(func, mod, ctx):
    """Correct: changes nothing."""
    return func


def test_verify_well_formed_names_the_ill_typed_pass():
    seq = Sequential([relay.transform.InferType(), Harmless, MakeIllTyped, Harmless])
    with pytest.raises(PassVerificationError, match="pass MakeIllTyped produced IR that is not well formed") as info:
        with PassContext(instruments=[VerifyWellFormed()]):
            seq(make_mod())
    assert "(4, 5)" in str(info.value)


def test_verify_well_formed_names_the_scoping_pass():
    with pytest.raises(PassVerificationError, match="pass LeakVariable .*%v"):
        with PassContext(instruments=[VerifyWellFormed()]):
            Sequential([Harmless, LeakVariable])(make_mod())


def test_verify_well_formed_blames_bad_input_not_the_pass():
    x = relay.var("x", shape=(2, 3))
    bad = tvm.IRModule({"main": relay.Function([x], relay.add(x, relay.const(np.ones((4, 5), "float32"))))})
    with pytest.raises(PassVerificationError, match="module given to pass Harmless"):
        with PassContext(instruments=[VerifyWellFormed()]):
            Harmless(bad)


def test_verify_well_formed_passes_good_pipelines_and_checks_each_module_once():
    with PassContext(instruments=[VerifyWellFormed()]) as ctx:
        out = Sequential([relay.transform.InferType(), Harmless, Harmless])(make_mod())
        stats = ctx.analysis_manager.stats["WellFormed"]
    assert out["main"].body.checked_type == relay.TensorType((2, 3))
    assert stats["computed"] == 2  # the input, then InferType's result; the unchanged results are not rechecked


def test_verify_semantics_names_the_pass_that_dropped_an_operator():
    seq = Sequential([relay.transform.InferType(), Harmless, DropOperator, Harmless])
    with pytest.raises(PassVerificationError, match="pass DropOperator changed the result of @main") as info:
        with PassContext(instruments=[VerifySemantics()]):
            seq(make_mod())
    assert "differs at index" in str(info.value)


def test_verify_semantics_accepts_correct_passes_and_given_inputs():
    @function_pass(opt_level=0)
    def DoubleAsMultiply(func, mod, ctx):
        (x,) = func.params
        return func.with_fields(body=relay.nn.relu(relay.multiply(relay.const(2.0), x)))

    data = np.linspace(-1, 1, 6, dtype="float32").reshape(2, 3)
    for inputs in (None, [data], {"x": data}):
        with PassContext(instruments=[VerifySemantics(inputs=inputs)]):
            out = Sequential([relay.transform.InferType(), DoubleAsMultiply])(make_mod())
        assert out["main"].body.args[0].op == relay.Op.get("multiply")


def test_instrument_list_is_a_list_and_edits_are_seen():
    events = []
    first = Recorder(events, "1 ")
    with PassContext(instruments=[first]) as ctx:
        assert ctx.instruments == [first]
        ctx.instruments.append(Recorder(events, "2 "))
        printing_pass("P")(make_mod())
    assert events == ["1 enter_ctx", "1 should_run", "2 should_run", "1 run_before_pass", "2 run_before_pass",
                      "1 run_after_pass", "2 run_after_pass", "1 exit_ctx", "2 exit_ctx"]


def test_render_on_the_class_uses_the_current_context():
    from kiln.ir.instrument import PassTimingInstrument as Timing

    timing = Timing()
    x = tvm.relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(tvm.relay.exp(x))
    with tvm.transform.PassContext(instruments=[timing]):
        tvm.relay.transform.InferType()(mod)
        assert Timing.render() == timing.render() and Timing.render().startswith("InferType:")
    assert Timing.render() == "" and timing.render() == ""
