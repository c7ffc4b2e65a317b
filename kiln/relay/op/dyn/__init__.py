"""The dynamic forms of shape-deciding operators (TVM's ``relay.op.dyn``): the shape arrives as a tensor computed at
run time rather than as an attribute, so the result's dimensions are ``relay.Any`` and each operator registers a
data-dependent shape function. ``relay.transform.DynamicToStatic`` turns a call whose shape tensor is a constant
back into the static operator."""

from . import transform
from .transform import reshape

__all__ = ["reshape", "transform"]
