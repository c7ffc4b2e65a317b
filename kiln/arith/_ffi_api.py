"""The arith functions under the names TVM registers them with (``tvm.arith._ffi_api.NarrowPredicateExpression``):
TVM's tests call some of them that way."""

from .int_inequality import solve_inequalities_as_condition as SolveInequalitiesAsCondition  # noqa: F401,N812,E402
from .int_inequality import solve_inequalities_deskew_range as SolveInequalitiesDeskewRange  # noqa: F401,N812,E402
from .int_inequality import solve_inequalities_to_range as SolveInequalitiesToRange  # noqa: F401,N812,E402
from .narrow_predicate import narrow_predicate_expression as NarrowPredicateExpression  # noqa: F401,N812
from .touched_domain import domain_touched as DomainTouched  # noqa: F401,N812,E402
