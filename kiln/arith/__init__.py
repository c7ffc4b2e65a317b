"""kiln.arith: integer analysis of TIR expressions (TVM's ``tvm.arith``): ``Analyzer`` with constant bounds,
modular sets, interval sets, and the rewrite simplifier."""

# ruff: noqa: F401  (re-exports)

from . import _ffi_api
from .analyzer import Analyzer, Extension, ProofStrength
from .const_int_bound import ConstIntBound
from .detect_linear import detect_clip_bound, detect_linear_equation
from .int_set import IntervalSet, IntSet, estimate_region, eval_set
from .linear import expr_key, from_linear, linear_form
from .modular_set import ModularSet
from .narrow_predicate import narrow_predicate_expression
