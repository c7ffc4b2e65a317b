"""IR containers at TVM's module paths ``tvm.ir.container`` and ``tvm.container``: ``Array`` and ``Map``.

kiln's nodes hold tuples and dicts; these classes exist for values that TVM hands back as its containers (a graph
executor's input information is a pair of ``Map``), so ``isinstance`` checks in users' code hold. ``Array`` is a
tuple and ``Map`` a dict, with their usual behaviour. They are defined with the runtime's containers (the runtime
returns them and sits below the IR).
"""

from ..runtime.container import Array, Map

__all__ = ["Array", "Map"]
