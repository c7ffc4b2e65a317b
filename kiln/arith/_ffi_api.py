"""The arith functions under the names TVM registers them with (``tvm.arith._ffi_api.NarrowPredicateExpression``):
TVM's tests call some of them that way."""

from .narrow_predicate import narrow_predicate_expression as NarrowPredicateExpression  # noqa: F401,N812
from .touched_domain import domain_touched as DomainTouched  # noqa: F401,N812,E402
