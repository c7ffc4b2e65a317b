"""kiln.script: TVMScript for TIR (TVM's ``tvm.script``): ``from kiln.script import tir as T``, ``ir as I``.

``@T.prim_func`` parses a Python function into a ``tir.PrimFunc``, ``@I.ir_module`` (or ``@kiln.script.ir_module``)
a class of them into an IRModule, and :func:`from_source` parses the text ``PrimFunc.script()`` prints.
"""

from . import ir, tir
from .function import from_source
from .ir import ir_module
from .parser import ScriptError

__all__ = ["from_source", "ir", "ir_module", "tir", "ScriptError"]
