"""contrib.clang: C compiled to LLVM IR when clang is there, a clear error when it is not."""

import shutil

import pytest

from kiln.contrib import clang
from kiln.error import KilnError


def test_find_clang_reports_what_is_on_the_path(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert clang.find_clang(required=False) == []
    with pytest.raises(KilnError, match="no clang"):
        clang.create_llvm("int f(void) { return 1; }")


@pytest.mark.skipif(shutil.which("clang") is None, reason="needs clang")
def test_create_llvm_compiles_c():
    ir = clang.create_llvm('extern "C" int add1(int x) { return x + 1; }')
    assert "define" in ir and "add1" in ir
