"""The ``dyn.*`` operators in numpy: the static operator's reference with the shape read from the tensor argument."""

from ...error import KilnError
from ..op.tensor import reshape_shape
from .common import register


@register("dyn.reshape")
def dyn_reshape(attrs, data, newshape):
    """Reshape to the values of ``newshape`` (TVM's 0 and -1 resolved as ``reshape`` resolves them)."""
    if any(v < -1 for v in newshape):
        raise KilnError(f"dyn.reshape: newshape {list(newshape)} has a negative entry other than -1")
    return data.reshape(reshape_shape(data.shape, [int(v) for v in newshape], attrs.allowzero))
