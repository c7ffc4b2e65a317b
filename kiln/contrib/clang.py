"""Compile C or C++ sources to LLVM IR with clang (TVM's ``tvm.contrib.clang``): ``create_llvm`` returns the text
of the module, which can be linked into an LLVM build.

clang is not something kiln needs (its code generators print C for the system compiler or LLVM IR through
llvmlite), so it is looked up only when called: ``find_clang`` lists the ``clang`` executables on the path, newest
version first, and ``create_llvm`` raises :class:`kiln.error.KilnError` naming what it looked for when there is none.
"""

import os
import re
import shutil
import subprocess

from ..error import KilnError
from . import utils

__all__ = ["create_llvm", "find_clang"]


def find_clang(required=True):
    """The clang executables found on ``PATH`` (``clang``, ``clang-18``...), the highest version first.

    Parameters
    ----------
    required : bool
        Raise when none is found (else return an empty list).
    """
    names = {"clang"}
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if os.path.isdir(directory):
            names.update(n for n in os.listdir(directory) if re.fullmatch(r"clang-\d+", n))
    found = sorted((n for n in names if shutil.which(n)), key=lambda n: -int(n[6:]) if n != "clang" else 0)
    if required and not found:
        raise KilnError("contrib.clang: no clang executable (clang, clang-<version>) on PATH")
    return found


def create_llvm(inputs, output=None, options=None, cc=None):
    """Compile C/C++ source (code text, or a list of them) into LLVM IR text.

    Parameters
    ----------
    inputs : str or list of str
        Source code (anything that is not an existing file name is taken as code).
    output : str, optional
        Where to write the ``.ll`` file (a temporary file by default).
    options : list of str, optional
        Extra compiler options.
    cc : str, optional
        The clang to use (the first of :func:`find_clang` by default).

    Returns
    -------
    code : str
        The LLVM IR.
    """
    cc = cc or find_clang()[0]
    temp = utils.tempdir()
    sources = []
    for i, code in enumerate([inputs] if isinstance(inputs, str) else list(inputs)):
        if os.path.isfile(code):
            sources.append(code)
            continue
        path = temp.relpath(f"input{i}.cc")
        with open(path, "w") as f:
            f.write(code)
        sources.append(path)
    output = output or temp.relpath("output.ll")
    cmd = [cc, "-S", "-emit-llvm", "-o", output, *(options or []), *sources]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise KilnError(f"contrib.clang: compilation failed ({' '.join(cmd)}):\n{proc.stdout}{proc.stderr}")
    with open(output) as f:
        return f.read()
