"""kiln.tir: the loop-level IR."""
