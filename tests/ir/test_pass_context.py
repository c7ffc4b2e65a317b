"""Tests of kiln/ir/pass_context.py: loading the built-in passes loudly, and the one coercion rule of option values."""

import re
from collections.abc import Callable

import pytest

from kiln.ir import pass_context
from kiln.ir.pass_context import ConfigError, coerce_value
from kiln.transform import get_pass, list_passes


@pytest.fixture
def broken_pass_package(tmp_path, monkeypatch):
    """A package of pass modules, one of which fails to import, installed as the only built-in pass package."""
    package = tmp_path / "kiln_test_broken_passes"
    package.mkdir()
    (package / "__init__.py").write_text("from . import good_pass, bad_pass\n")
    (package / "good_pass.py").write_text("VALUE = 1\n")
    (package / "bad_pass.py").write_text("from kiln.relay.no_such_module import SomePass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(pass_context, "_BUILTIN_PASS_PACKAGES", ("kiln_test_broken_passes",))
    monkeypatch.setattr(pass_context, "_BUILTINS_LOADED", False)
    return "kiln_test_broken_passes"


def test_a_broken_pass_module_is_an_import_error_naming_it(broken_pass_package):
    with pytest.raises(ImportError, match="kiln.relay.no_such_module") as info:
        get_pass("NoSuchPassAnywhere")  # without the fix this read as "unknown pass 'NoSuchPassAnywhere'"
    assert any(f"{broken_pass_package}.bad_pass" in note for note in info.value.__notes__)
    with pytest.raises(ImportError):  # still loud on the next lookup, not "loaded" after a failure
        list_passes()


def test_builtin_passes_load_when_the_modules_are_sound():
    assert {"InferType", "FuseOps", "tir.Simplify"} <= set(list_passes())


@pytest.mark.parametrize(
    "value,type_,expected",
    [
        (1, bool, True), (0, bool, False), (2, float, 2.0), ([1, 2], tuple, (1, 2)), ((1, 2), list, [1, 2]),
        (None, int | None, None), (3, int | None, 3), ("x", object, "x"), ({"a": [1]}, dict[str, list], {"a": [1]}),
        (len, Callable[[object], int] | None, len),
    ],
)
def test_coerce_value_widens(value, type_, expected):
    out = coerce_value(value, type_, "option o")
    assert out == expected and type(out) is type(expected)


@pytest.mark.parametrize(
    "value,type_,shown",
    [
        ("0", int, "int, got str '0'"), (True, int, "int, got bool True"), (2, bool, "bool, got int 2"),
        (1.5, int, "int, got float 1.5"), ("a", int | None, "int | None, got str 'a'"),
        (3, Callable | None, "collections.abc.Callable | None, got int 3"),
        ([1], dict[str, list], "dict[str, list], got list [1]"),
    ],
)
def test_coerce_value_rejects_with_the_option_named(value, type_, shown):
    with pytest.raises(ConfigError, match=re.escape(f"pass P option o expects a value of type {shown}")):
        coerce_value(value, type_, "pass P option o")
    assert issubclass(ConfigError, ValueError)


def test_coerce_value_refuses_an_annotation_it_cannot_check():
    with pytest.raises(TypeError, match="cannot check values against the annotation 'int'"):
        coerce_value(1, "int", "pass P option o")
