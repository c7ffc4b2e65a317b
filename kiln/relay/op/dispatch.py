"""How a static builder (``relay.reshape``, ``relay.broadcast_to``, ``relay.topk``...) tells a shape-deciding
argument known only at run time from one known now: a Relay expression other than a constant makes the ``dyn.*``
call (as TVM's builders do); a constant is read back as Python values and the static operator is built."""

from ...ir.expr import RelayExpr

__all__ = ["is_dynamic", "constant_value", "dyn_ops"]


def is_dynamic(value) -> bool:
    """Whether a shape-deciding argument is known only at run time: a Relay expression other than a constant (the
    static builders then make the ``dyn.*`` call, as TVM's do)."""
    from ..expr import Constant  # relay.expr imports the operators

    return isinstance(value, RelayExpr) and not isinstance(value, Constant)


def constant_value(value):
    """A shape-deciding argument as Python values: a Relay constant's entries as a list of ints (an int for a 0-d
    constant), anything else as given."""
    if isinstance(value, RelayExpr):
        array = value.data.numpy()
        return int(array) if array.ndim == 0 else [int(v) for v in array.reshape(-1)]
    return value


def dyn_ops():
    """The ``relay.op.dyn`` package (imported on first use: it builds on the static operator modules)."""
    from . import dyn

    return dyn
