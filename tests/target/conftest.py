"""Fixtures for the code generator tests: the targets to compile for, skipped when their tools are missing."""

import pytest

from kiln.target.compiler import have_cc
from kiln.target.llvm_compile import have_llvmlite

HAVE_CC = have_cc()
HAVE_LLVM = HAVE_CC and have_llvmlite()

TARGETS = [
    pytest.param("c", marks=[pytest.mark.needs_cc,
                             pytest.mark.skipif(not HAVE_CC, reason="no system C compiler")]),
    pytest.param("llvm", marks=[pytest.mark.needs_cc, pytest.mark.needs_llvmlite,
                                pytest.mark.skipif(not HAVE_LLVM, reason="needs llvmlite and a C compiler to link")]),
]


@pytest.fixture(params=TARGETS)
def target(request):
    """Each target kind kiln generates code for: "c" and "llvm"."""
    return request.param
