"""Tests of kiln/ir/pipeline.py: textual pipelines built from registered passes, printed back by ``str``."""

import dataclasses
import re
from dataclasses import dataclass, field

import pytest

import kiln as tvm
from kiln import relay
from kiln.ir.transform import ModulePass, PassInfo, register_pass
from kiln.relay.transform import InferType
from kiln.transform import PassContext, PrintIR, Sequential, parse_pipeline


@register_pass("TestPipe.Scale")
@dataclass(frozen=True)
class Scale(ModulePass):
    """A pass with options, as built-in passes are written."""

    factor: int = 1
    layout: str = "NCHW"
    axes: tuple = ()
    table: dict = field(default_factory=dict)
    info = PassInfo(1, "TestPipe.Scale")

    def transform_module(self, mod, ctx):
        return mod


@register_pass("TestPipe.Both")
def both():
    return Sequential([Scale(), InferType()], name="TestPipe.Both")


def test_parse_simple_pipeline():
    seq = parse_pipeline("InferType, TestPipe.Scale(factor=2), PrintIR")
    assert isinstance(seq, Sequential) and seq.info.name == "sequential" and seq.info.opt_level == 0
    assert [type(p) for p in seq.passes] == [InferType, Scale, PrintIR]
    assert seq.passes[1].factor == 2 and seq.passes[1].layout == "NCHW"
    assert str(seq) == "InferType,TestPipe.Scale(factor=2),PrintIR"


def test_round_trip_with_nesting_and_literals():
    text = (
        "InferType,TestPipe.Scale(factor=3,layout='NHWC',axes=(1, 2),table={'nn.conv2d': ['NHWC', 'default']}),"
        "sequential(PrintIR(header='mid'),TestPipe.Scale,opt_level=2,name='inner'),TestPipe.Both"
    )
    seq = parse_pipeline(text)
    assert str(seq) == text
    inner = seq.passes[2]
    assert isinstance(inner, Sequential) and inner.info.opt_level == 2 and inner.info.name == "inner"
    assert seq.passes[1].table == {"nn.conv2d": ["NHWC", "default"]} and seq.passes[1].axes == (1, 2)
    assert str(parse_pipeline(str(seq))) == text


def test_positional_options_and_bare_words():
    seq = parse_pipeline("TestPipe.Scale(4, NHWC), PrintIR('hello')")
    assert seq.passes[0].factor == 4 and seq.passes[0].layout == "NHWC" and seq.passes[1].header == "hello"


def test_str_of_passes():
    assert str(Scale()) == "TestPipe.Scale" and str(Scale(factor=5)) == "TestPipe.Scale(factor=5)"
    assert str(Sequential([Scale()], opt_level=3)) == "sequential(TestPipe.Scale,opt_level=3)"
    assert str(Sequential([Sequential([InferType()])])) == "sequential(InferType)"
    assert str(tvm.transform.get_pass("TestPipe.Both")) == "TestPipe.Both"


def test_empty_pipeline():
    assert parse_pipeline("").passes == [] and parse_pipeline("  ").passes == []


@pytest.mark.parametrize(
    "text,message",
    [
        ("InferType,NoSuchPass", "unknown pass 'NoSuchPass'"),
        ("InfrType", "did you mean 'InferType'"),
        ("TestPipe.Scale(factr=2)", "TestPipe.Scale has no option 'factr'; its options are: factor, layout"),
        ("TestPipe.Scale(1, 'a', (), {}, 5)", "at most 4 positional"),
        ("InferType,,FuseOps", "malformed pipeline"),
        ("InferType(", "malformed pipeline"),
        ("TestPipe.Scale(factor=1+x)", "not a literal"),
        ("3", "expected a pass name"),
        ("sequential(InferType, depth=2)", "sequential has no option 'depth'"),
        ("TestPipe.Scale(**{'factor': 2})", "'\\*\\*' is not allowed"),
    ],
)
def test_errors_name_the_problem(text, message):
    with pytest.raises(ValueError, match=message):
        parse_pipeline(text)


def test_parsed_pipeline_runs_under_the_context():
    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    with PassContext(opt_level=0):
        out = parse_pipeline("TestPipe.Scale,InferType")(mod)  # Scale (opt_level 1) is skipped at opt_level 0
    assert out["main"].body.checked_type == relay.TensorType((2,))


@pytest.mark.parametrize(
    "text,message",
    [
        ('FuseOps(fuse_opt_level="0")', "pass FuseOps option fuse_opt_level expects a value of type int, got str '0'"),
        ("FuseOps(fuse_opt_level=abc)", "pass FuseOps option fuse_opt_level expects a value of type int, got str 'abc'"),
        ("FuseOps(fuse_opt_level=1.5)", "fuse_opt_level expects a value of type int, got float 1.5"),
        ("DeadCodeElimination(inline_once=2)", "pass DeadCodeElimination option inline_once expects a value of type bool"),
        ("PrintIR(header=3)", "pass PrintIR option header expects a value of type str, got int 3"),
        ("TestPipe.Scale(axes=3)", "pass TestPipe.Scale option axes expects a value of type tuple, got int 3"),
        ("TestPipe.Scale(table=[1])", "pass TestPipe.Scale option table expects a value of type dict"),
        ("ConvertLayout(NHWC)", "pass ConvertLayout option desired_layouts expects a value of type dict"),
    ],
)
def test_pipeline_option_of_the_wrong_type_is_a_value_error(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_pipeline(text)


def test_direct_construction_checks_option_types():
    from kiln.relay.transform import EliminateCommonSubexpr, FuseOps

    with pytest.raises(ValueError, match="pass FuseOps option fuse_opt_level expects a value of type int, got str"):
        FuseOps(fuse_opt_level="0")
    with pytest.raises(ValueError, match="pass EliminateCommonSubexpr option fskip"):
        EliminateCommonSubexpr(fskip="never")
    with pytest.raises(ValueError, match="pass TestPipe.Scale option factor"):
        Scale(factor=True)


def test_option_values_are_widened_as_config_values_are():
    from kiln.relay.transform import DeadCodeElimination

    assert DeadCodeElimination(inline_once=1).inline_once is True
    scale = parse_pipeline("TestPipe.Scale(axes=[1, 2])").passes[0]
    assert scale.axes == (1, 2) and str(scale) == "TestPipe.Scale(axes=(1, 2))"


def test_every_builtin_pass_declares_checkable_option_types():
    for name in tvm.transform.list_passes():
        factory = tvm.ir.transform.get_pass_factory(name)
        if dataclasses.is_dataclass(factory) and all(
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            for f in dataclasses.fields(factory) if f.init
        ):
            assert str(factory()) == name  # __post_init__ checked every default against its annotation
