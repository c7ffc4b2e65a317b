"""Relay analyses registered with the pass infrastructure's AnalysisManager, so passes share and reuse them.

A pass asks ``ctx.analysis_manager.get(name, func)``; results are cached per function object (functions are
immutable) and recomputed only for functions a pass changed.

* ``relay.FreeVars``: :func:`free_vars` of a function;
* ``relay.VarUseCounts``: :func:`var_use_counts` of a function (callers must not modify the Counter);
* ``relay.PostDominatorTree``: ``(graph, dom_tree)`` of a typed function's body, what FuseOps partitions.
"""

from ...ir.analysis import register_analysis
from .free_vars import free_vars
from .indexed_graph import create_indexed_graph
from .post_dominator import post_dominator_tree
from .use_counts import var_use_counts


def _free_vars(func, mod):
    return free_vars(func)


def _use_counts(func, mod):
    return var_use_counts(func)


def _post_dominator_tree(func, mod):
    graph = create_indexed_graph(func.body)
    return graph, post_dominator_tree(graph)


register_analysis("relay.FreeVars", _free_vars)
register_analysis("relay.VarUseCounts", _use_counts)
register_analysis("relay.PostDominatorTree", _post_dominator_tree)
