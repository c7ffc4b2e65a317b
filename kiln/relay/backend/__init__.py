"""kiln.relay.backend: from an optimized Relay module to something that runs (TVM's ``relay.backend``).

* :mod:`.call_lowered`: the ``call_lowered`` operator that calls a lowered PrimFunc from Relay;
* :mod:`.te_compiler`: one primitive function to one ``tir.PrimFunc`` through topi, with a cache;
* :mod:`.lower_te`: the ``LowerTE`` module pass;
* :mod:`.graph_codegen`: the graph executor's JSON, storage plan and parameters from a lowered ``@main``;
  :mod:`.graph_plan_memory` reports that plan per expression of a fused function;
* :mod:`.executor`: the ``Executor``/``Runtime`` descriptions ``relay.build`` accepts;
* :mod:`.vm`: the VM compiler (``relay.vm.compile``), for programs with control flow, recursion and closures.
"""

from . import _backend, call_lowered, graph_codegen, graph_plan_memory, lower_te, te_compiler
from .executor import Executor, Runtime
from .lower_te import LowerTE

__all__ = ["Executor", "LowerTE", "Runtime", "call_lowered", "graph_codegen", "lower_te", "te_compiler"]
