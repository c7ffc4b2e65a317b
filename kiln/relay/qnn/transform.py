"""Passes over quantized programs (TVM's ``relay.qnn.transform``)."""

from ..transform.legalize import Legalize as _Legalize
from ..transform.qnn_canonicalize import QnnCanonicalize

__all__ = ["CanonicalizeOps", "Legalize"]


def CanonicalizeOps():  # noqa: N802  (TVM's name)
    """The pass rewriting quantized operators in plain Relay operators (:class:`QnnCanonicalize`)."""
    return QnnCanonicalize()


def Legalize():  # noqa: N802  (TVM's name)
    """The pass applying the quantized operators' target-specific legalizations (``FTVMQnnLegalize``, registered
    with ``register_op_attr``), as TVM's: ``Legalize("FTVMQnnLegalize")``. Canonicalization is
    :func:`CanonicalizeOps`."""
    return _Legalize("FTVMQnnLegalize")
