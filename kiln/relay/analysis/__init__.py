"""kiln.relay.analysis: analyses over Relay expressions."""

from ..expr_functor import post_order_visit
from .free_vars import all_vars, bound_vars, free_vars
from .well_formed import well_formed, well_formed_error
