"""Optimizations that depend on the values of the weights (TVM's ``relay.data_dep_optimization``): ``bsr_dense``
and ``bsr_conv2d`` make dense layers and convolutions with sparse weights block-sparse; ``simplify_fc_transpose``
stores transposed dense weights pre-transposed."""

from . import bsr_conv2d, bsr_dense, simplify_fc_transpose

__all__ = ["bsr_conv2d", "bsr_dense", "simplify_fc_transpose"]
