"""External code generators (bring-your-own-codegen): what becomes of a function ``PartitionGraph`` marked
``Compiler=<name>``.

TVM hands such a function to the global function ``relay.ext.<name>``, which returns a runtime module defining the
function's ``global_symbol``. In kiln, ``relay.ext.<name>`` takes the Relay function and returns the Relay function
kiln's own lowering is to compile in its place (``LowerTE`` compiles it with the build's target and names the kernel
by the ``global_symbol``, so the graph executor and the VM call the external symbol). A function for a compiler with
no ``relay.ext.<name>`` cannot be built: :func:`external_function` says so.

``"ccompiler"``, TVM's example C code generator, is kiln's own: the region is compiled by kiln's code generator for
the build's target (``c`` or ``llvm``), exactly as a fused group would be.
"""

from ...error import CodegenError
from ...runtime.packed_func import get_global_func, register_func

__all__ = ["external_function"]


def external_function(func):
    """The Relay function to compile for ``func`` (marked ``Compiler``) and its kernel's symbol."""
    compiler = str(func.attrs.get("Compiler", ""))
    codegen = get_global_func(f"relay.ext.{compiler}", allow_missing=True)
    if codegen is None:
        raise CodegenError(f"the function {func.attrs.get('global_symbol', '')!s} was partitioned for the external "
                           f"compiler {compiler!r}, but no code generator relay.ext.{compiler} is registered")
    lowered = codegen(func)
    symbol = func.attrs.get("global_symbol", None)
    return lowered, None if symbol is None else str(symbol)


@register_func("relay.ext.ccompiler")
def ccompiler(func):
    """TVM's example C code generator: kiln compiles the region itself, as one kernel."""
    return func
