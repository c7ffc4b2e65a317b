"""kiln.relay.analysis: analyses over Relay expressions."""

from ..expr_functor import post_order_visit
from . import managed  # noqa: F401  (registers the Relay analyses with the AnalysisManager)
from .free_vars import all_vars, bound_vars, free_vars
from .use_counts import var_use_counts
from .well_formed import well_formed, well_formed_error
