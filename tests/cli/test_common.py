"""What the ``kiln`` commands share (kiln/cli/common.py and kiln/cli/__init__.py): the --input-shapes and
--disabled-pass parsers, one-line errors."""

import pytest

from kiln.cli import main, parse_input_shapes
from kiln.cli.common import one_line, parse_pass_names
from kiln.error import KilnError


def test_parse_input_shapes():
    assert parse_input_shapes("data:[1,3,224,224]") == {"data": (1, 3, 224, 224)}
    assert parse_input_shapes(" a:[1, 2]  b/c:0 : [ 3 ] scalar:[] ") == {"a": (1, 2), "b/c:0": (3,), "scalar": ()}


@pytest.mark.parametrize("text,message", [
    ("", "no shapes given"),
    ("data", "cannot read 'data'"),
    ("data:[1,3] junk", "cannot read 'junk'"),
    ("data:(1,3)", "cannot read 'data:(1,3)'"),
    ("data:[1,-1]", "input 'data': dimension '-1' is not a positive integer"),
    ("data:[1,0]", "dimension '0' is not a positive integer"),
    ("data:[1,,3]", "dimension '' is not a positive integer"),
    ("x:[1] x:[2]", "input 'x' is given twice"),
])
def test_parse_input_shapes_names_the_problem(text, message):
    with pytest.raises(KilnError, match="^--input-shapes: ") as info:
        parse_input_shapes(text)
    assert message in str(info.value)


def test_pass_names_are_split_and_checked():
    assert parse_pass_names(["FoldConstant,AlterOpLayout", " FuseOps "]) == ["FoldConstant", "AlterOpLayout", "FuseOps"]
    with pytest.raises(ValueError, match="unknown pass 'FuseOp'; did you mean 'FuseOps'"):
        parse_pass_names(["FuseOp"])


def test_one_line_names_unexpected_exception_classes():
    assert one_line(KilnError("bad\n  input")) == "bad input"
    assert one_line(KeyError("x")) == "KeyError: 'x'"
    assert one_line(ZeroDivisionError()) == "ZeroDivisionError: ZeroDivisionError"


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    for command in ("compile", "run", "tune", "opt"):
        assert command in out
