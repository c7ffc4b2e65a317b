"""kiln.arith: integer analysis of TIR expressions (TVM's ``tvm.arith``): ``Analyzer`` with constant bounds,
modular sets, interval sets, and the rewrite simplifier; iterator maps, region bounds, bound deduction."""

# ruff: noqa: F401  (re-exports)

from . import _ffi_api, int_set
from .analyzer import Analyzer, Extension, ProofStrength
from .bound_deducer import deduce_bound
from .common_subexpr import detect_common_subexpr
from .const_int_bound import ConstIntBound
from .detect_linear import detect_clip_bound, detect_linear_equation
from .int_inequality import IntGroupBounds, solve_linear_inequalities
from .int_set import IntervalSet, IntSet, estimate_region, eval_set
from .int_solver import IntConstraints, IntConstraintsTransform, solve_linear_equations
from .iter_affine_map import (
                              IterMapExpr,
                              IterMapLevel,
                              IterMapResult,
                              IterMark,
                              IterSplitExpr,
                              IterSumExpr,
                              detect_iter_map,
                              inverse_affine_iter_map,
                              iter_map_simplify,
                              normalize_iter_map_to_expr,
                              normalize_to_iter_sum,
                              subspace_divide,
)
from .linear import expr_key, from_linear, linear_form
from .modular_set import ModularSet
from .narrow_predicate import narrow_predicate_expression
from .region_bound import estimate_region_lower_bound, estimate_region_strict_bound, estimate_region_upper_bound
from .touched_domain import domain_touched
