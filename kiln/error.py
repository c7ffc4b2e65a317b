"""Exceptions raised by kiln.

Every error a user can cause derives from :class:`KilnError`, so ``except kiln.error.KilnError`` catches them all.
Messages name what was wrong and where (operator, shape, pass, config key, file).
"""

import dataclasses


class KilnError(RuntimeError):
    """Base class of every kiln error; a ``RuntimeError``, as TVM's ``TVMError`` is (and reachable by that name:
    :data:`TVMError`)."""


TVMError = KilnError
"""TVM's name for the base error class (``tvm.error.TVMError``, ``tvm.TVMError``): ``except tvm.TVMError`` in a
TVM program catches kiln's errors."""


class InternalError(KilnError):
    """An invariant of kiln itself was broken (a bug in kiln, not in the user's input)."""


class DiagnosticError(KilnError):
    """Bad source text: the message carries the line and column.

    Parameters
    ----------
    message : str
        What is wrong.
    line, column : int, optional
        1-based position in the source text.
    """

    def __init__(self, message, line=None, column=None):
        self.line = line
        self.column = column
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(f"{where}{message}")


class TypeInferenceError(KilnError):
    """An expression is ill typed (or its type was read before inference ran)."""


class OpNotImplemented(KilnError):
    """An operator has no implementation (frontend conversion, lowering, or evaluation)."""


class OpAttributeInvalid(KilnError):
    """An operator attribute has a value the operator cannot accept."""


class TIRError(KilnError):
    """Malformed loop-level IR."""


class TIRValueError(TIRError, ValueError):
    """A TIR builder got a value it cannot take (a ValueError, as TVM raises: ``IntImm == None``, an unknown loop
    kind)."""


class ExprTruthValueError(TIRError, ValueError):
    """``and`` / ``or`` / ``not`` / ``if`` on a TIR expression, whose value is known only at run time (a ValueError,
    as TVM raises)."""


class CodegenError(KilnError):
    """Code generation or native compilation failed."""


class RuntimeArgumentError(KilnError, TypeError):
    """A compiled function was called with arguments of the wrong number, shape, dtype or alignment."""


class ArgumentTypeError(KilnError, TypeError):
    """An API was given a value of a kind it cannot use (where TVM raises ``TypeError``)."""


class ImmutableNodeError(KilnError, dataclasses.FrozenInstanceError):
    """An assignment to a field of an IR node, which are immutable (what Python raises for a frozen dataclass, an
    ``AttributeError``)."""


class RPCError(KilnError):
    """An RPC session failed: the connection, the protocol, or an error raised in the remote process (TVM's
    ``tvm.error.RPCError``); a remote error's message names its original type."""


class NestedScopeError(KilnError, ValueError):
    """A scope that cannot be nested (``te.tag_scope``) was entered inside another; a ``ValueError``, as TVM's."""


class InvalidIRError(KilnError, ValueError):
    """A pass met IR that contradicts itself (one value constrained to two devices, a schedule whose attachments form
    a cycle, a fake-quantized region whose scales are not scalars); a ``ValueError``, as TVM's checks raise. The
    message names the pass and the node."""
