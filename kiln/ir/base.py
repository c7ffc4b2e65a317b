"""TVM's ``tvm.ir.base`` names: structural comparison helpers over IR objects."""

from .structural import assert_structural_equal, first_mismatch_paths, structural_equal, structural_hash

__all__ = ["assert_structural_equal", "get_first_structural_mismatch", "structural_equal", "structural_hash"]


def get_first_structural_mismatch(lhs, rhs, map_free_vars=False):
    """``None`` when ``lhs`` equals ``rhs`` structurally, else ``(lhs_path, rhs_path)``: the ObjectPaths of the first
    difference (a side that lacks an element has a missing-element step there)."""
    return first_mismatch_paths(lhs, rhs, map_free_vars)
