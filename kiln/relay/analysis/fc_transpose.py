"""``search_fc_transpose`` (TVM's ``relay.analysis.search_fc_transpose``): the weights used transposed by a dense
layer, ``nn.dense(x, transpose(w))``, which ``relay.data_dep_optimization.simplify_fc_transpose`` stores
pre-transposed."""

from ...ir.op import Op
from ..expr import Call, Var
from ..expr_functor import post_order_visit

__all__ = ["is_transposed_weight", "search_fc_transpose"]


def is_transposed_weight(weight) -> bool:
    """Whether ``weight`` (a dense layer's second argument) is ``transpose(w)`` of a 2-D variable ``w`` (axes
    ``None`` or ``[1, 0]``: any other permutation of two axes is no transpose)."""
    if not (isinstance(weight, Call) and weight.op == Op.get("transpose") and isinstance(weight.args[0], Var)):
        return False
    axes = weight.attrs.axes
    return axes is None or [int(a) for a in axes] in ([1, 0], [-1, 0], [1, -2], [-1, -2])


def search_fc_transpose(expr) -> list:
    """The names of the variables ``w`` of every ``nn.dense(x, transpose(w))`` in ``expr``, in the order met."""
    dense, names = Op.get("nn.dense"), []

    def visit(node):
        if isinstance(node, Call) and node.op == dense and is_transposed_weight(node.args[1]):
            names.append(node.args[1].args[0].name_hint)

    post_order_visit(expr, visit)
    return names
