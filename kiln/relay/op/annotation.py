"""Annotation operators (TVM's ``relay.annotation``, ``relay.op.annotation``): calls that leave values unchanged
but tell passes something. Each computes the identity (topi's ``identity``; the reference returns the argument) and
is opaque to fusion, so it stays visible in compiled code.

* ``annotation.checkpoint(data)`` marks ``data`` as a point where reverse-mode AD may recompute the forward
  computation instead of keeping it; kiln's AD keeps every forward value, so to ``gradient`` it is the identity too
  (its gradient passes ``grad`` through);
* ``annotation.stop_fusion(data)``: FuseOps ends a group here, so ``data``'s producer and its consumers are
  compiled as separate kernels (``data`` may be a tuple);
* ``annotation.cast_hint(data, dtype)``: quantization's hint that ``data`` will be converted to ``dtype`` (the
  quantize partition pass places it);
* ``annotation.bitpack_start(data)``/``annotation.bitpack_end(data)``: the bounds of a bit-packed region (TVM's VTA
  flow places them; no kiln pass reads them), registered so that programs carrying them compile.
"""

from dataclasses import dataclass

from ...error import OpAttributeInvalid
from ...ir.attrs import Attrs
from .device import on_device  # noqa: F401  (relay.annotation.on_device, as in TVM)
from .op import OpPattern, make_call, register_relay_op
from .type_relations import identity_rel

__all__ = ["on_device", "CastHintAttrs", "CompilerAttrs", "checkpoint", "stop_fusion", "cast_hint", "compiler_begin",
           "compiler_end"]


@dataclass(frozen=True, slots=True)
class CastHintAttrs(Attrs):
    """``dtype``: the dtype the value is expected to be converted to."""

    dtype: str = ""


@dataclass(frozen=True, slots=True)
class CompilerAttrs(Attrs):
    """``compiler``: the name of the external code generator a region belongs to (``"default"``: kiln's own)."""

    compiler: str = ""


register_relay_op("annotation.checkpoint", 1, identity_rel, OpPattern.OPAQUE)
def _same_type_rel(types, attrs):
    """The result has the argument's type, tensor or tuple (a fusion boundary may cut a tuple, as SplitArgs does)."""
    return types[0]


register_relay_op("annotation.stop_fusion", 1, _same_type_rel, OpPattern.OPAQUE)
register_relay_op("annotation.bitpack_start", 1, identity_rel, OpPattern.OPAQUE)
register_relay_op("annotation.bitpack_end", 1, identity_rel, OpPattern.OPAQUE)
register_relay_op("annotation.cast_hint", 1, identity_rel, OpPattern.OPAQUE, CastHintAttrs)
# a region's boundary may carry a tuple or a reference, not only a tensor
register_relay_op("annotation.compiler_begin", 1, _same_type_rel, OpPattern.OPAQUE, CompilerAttrs)
register_relay_op("annotation.compiler_end", 1, _same_type_rel, OpPattern.OPAQUE, CompilerAttrs)


def checkpoint(data):
    """Mark ``data`` (a tensor) as a checkpoint for automatic differentiation; the value is ``data`` itself."""
    return make_call("annotation.checkpoint", [data])


def stop_fusion(data):
    """``data`` unchanged, with fusion stopped at this point (TVM's ``relay.annotation.stop_fusion``)."""
    return make_call("annotation.stop_fusion", [data])


def cast_hint(data, dtype):
    """``data`` unchanged, annotated with the dtype quantization will convert it to (TVM's
    ``relay.annotation.cast_hint``)."""
    return make_call("annotation.cast_hint", [data], CastHintAttrs(str(dtype)))


def _compiler_name(compiler, where):
    if not isinstance(compiler, str):
        raise OpAttributeInvalid(f"{where}: compiler must be a str naming the external code generator, "
                                 f"got {type(compiler).__name__}")
    return compiler


def compiler_begin(data, compiler):
    """``data`` unchanged, marked as an input of a region compiled by the external code generator ``compiler``
    (TVM's ``relay.annotation.compiler_begin``)."""
    return make_call("annotation.compiler_begin", [data], CompilerAttrs(_compiler_name(compiler, "compiler_begin")))


def compiler_end(data, compiler):
    """``data`` unchanged, marked as an output of a region compiled by the external code generator ``compiler``
    (TVM's ``relay.annotation.compiler_end``)."""
    return make_call("annotation.compiler_end", [data], CompilerAttrs(_compiler_name(compiler, "compiler_end")))
