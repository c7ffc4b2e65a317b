"""RemoveUnusedFunctions: drop the global functions no entry function can reach (TVM's pass).

A function is kept when an entry function (``main`` unless named) refers to it, directly or through functions it
keeps, whether it calls the global or passes it as a value. Type definitions stay: removing a data type would
orphan the constructors kept functions may build.
"""

from dataclasses import dataclass

from ...ir.expr import GlobalVar
from ...ir.module import IRModule
from ...ir.transform import ModulePass, PassInfo, register_pass
from ..expr_functor import post_order_visit


def reachable_functions(mod: IRModule, entries) -> set:
    """The global variables of ``mod`` reachable from the functions named in ``entries``."""
    todo = [mod.get_global_var(name) for name in entries if name in mod]
    seen = set(todo)

    def reach(node):
        if isinstance(node, GlobalVar) and node not in seen and node in mod.functions:
            seen.add(node)
            todo.append(node)

    while todo:
        post_order_visit(mod[todo.pop()], reach)
    return seen


@register_pass("RemoveUnusedFunctions")
@dataclass(frozen=True)
class RemoveUnusedFunctions(ModulePass):
    """Remove global functions unreachable from the entry functions.

    Parameters
    ----------
    entry_functions : list of str, optional
        The names kept as roots (default ``["main"]``).
    """

    entry_functions: tuple | list | None = None
    info = PassInfo(1, "RemoveUnusedFunctions")

    def transform_module(self, mod, ctx):
        keep = reachable_functions(mod, self.entry_functions or ("main",))
        out = IRModule(type_definitions=mod.type_definitions, attrs=mod.attrs)
        for gv, func in mod.functions.items():
            if gv in keep:
                out[gv] = func
        return out
