"""kiln.relay.analysis: analyses over Relay expressions."""

from ...ir.module import IRModule
from ...ir.op import Op
from ..expr import Call
from ..expr_functor import post_order_visit
from . import (
    managed,  # noqa: F401  (registers the Relay analyses with the AnalysisManager)
    sparse_conv2d,  # noqa: F401  (TVM's relay.analysis.sparse_conv2d, for data_dep_optimization)
)
from .annotated_regions import AnnotatedRegion, AnnotatedRegionSet
from .fc_transpose import search_fc_transpose
from .feature import Feature, detect_feature
from .flops import get_total_mac_number
from .free_vars import all_type_vars, all_vars, bound_type_vars, bound_vars, free_type_vars, free_vars
from .kind_check import check_kind
from .match_exhaustion import unmatched_cases
from .scope import check_basic_block_normal_form
from .use_counts import var_use_counts
from .well_formed import well_formed, well_formed_error


def list_op_freqs(mod) -> dict:
    """How many calls of each operator the Relay functions of ``mod`` (or an expression) make, by operator name
    (TVM's ``relay.analysis.list_op_freqs``)."""
    counts: dict = {}

    def count(node):
        if isinstance(node, Call) and isinstance(node.op, Op):
            counts[node.op.name] = counts.get(node.op.name, 0) + 1

    for func in (mod.functions.values() if isinstance(mod, IRModule) else [mod]):
        post_order_visit(func, count)
    return counts
