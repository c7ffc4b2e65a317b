"""Generic computes of the ``dyn.*`` operators (:mod:`kiln.relay.op.dyn`), merged into :data:`.generic.COMPUTES`.
Their results' ``relay.Any`` dimensions become size variables the kernel binds from its output buffer, which the VM
allocates with the shape the operator's shape function computed."""

from ....ir.type import is_any
from ....te import size_var
from ....topi import transform as T

__all__ = ["DYN_COMPUTES", "te_shape"]


def te_shape(ttype, name="out") -> tuple:
    """The TE shape of a result of type ``ttype``: static dimensions as they are, dynamic ones as size variables."""
    return tuple(size_var(f"{name}_dim{i}") if is_any(d) else d for i, d in enumerate(ttype.shape))


DYN_COMPUTES = {
    "dyn.reshape": lambda attrs, inputs, out_type: [T.dyn_reshape(inputs[0], te_shape(out_type))],
}
"""Relay operator name -> ``FTVMCompute``."""
