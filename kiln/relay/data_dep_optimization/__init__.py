"""Optimizations that depend on the values of the weights (TVM's ``relay.data_dep_optimization``): ``bsr_conv2d``
makes convolutions with sparse weights block-sparse."""

from . import bsr_conv2d

__all__ = ["bsr_conv2d"]
