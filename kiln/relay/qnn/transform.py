"""Passes over quantized programs (TVM's ``relay.qnn.transform``)."""

from ..transform.qnn_canonicalize import QnnCanonicalize

__all__ = ["CanonicalizeOps", "Legalize"]


def CanonicalizeOps():  # noqa: N802  (TVM's name)
    """The pass rewriting quantized operators in plain Relay operators (:class:`QnnCanonicalize`)."""
    return QnnCanonicalize()


def Legalize():  # noqa: N802  (TVM's name)
    """TVM's QNN legalization then canonicalization; kiln's quantized operators need only the canonicalization."""
    return QnnCanonicalize()
