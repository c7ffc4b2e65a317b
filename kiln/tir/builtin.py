"""Builders of TVM's built-in TIR calls (``tvm.tir.tvm_struct_get``, ``address_of``, ``vectorlow``...): each returns
the ``Call`` of the ``tir.<name>`` operator with the result dtype TVM gives it. The operators are registered here with
their effect kinds (TVM's ``builtin.cc``): pure ones may be moved or dropped by passes, opaque ones may not.

Passes and code generators give these calls meaning (``MakePackedAPI`` reads arguments with ``tvm_struct_get``, the
LLVM backend lowers ``address_of``); a call no backend knows is refused where code is generated, as in TVM.
"""

from ..ir.op import Op, register_op, register_op_attr
from .expr import Call, CallEffectKind, StringImm

_EFFECTS = {
    "tvm_tuple": CallEffectKind.EXPR_ANNOTATION, "tvm_struct_get": CallEffectKind.READ_STATE,
    "tvm_struct_set": CallEffectKind.UPDATE_STATE,
    "address_of": CallEffectKind.PURE, "lookup_param": CallEffectKind.PURE, "assume": CallEffectKind.PURE,
    "undef": CallEffectKind.PURE, "tvm_thread_allreduce": CallEffectKind.OPAQUE,
    "type_annotation": CallEffectKind.PURE, "tvm_access_ptr": CallEffectKind.SPECIAL_CALL_ARG,
    "tvm_throw_last_error": CallEffectKind.OPAQUE, "vectorlow": CallEffectKind.PURE,
    "vectorhigh": CallEffectKind.PURE, "vectorcombine": CallEffectKind.PURE,
    "TVMBackendAllocWorkspace": CallEffectKind.OPAQUE, "TVMBackendFreeWorkspace": CallEffectKind.OPAQUE,
    "tvm_stack_make_shape": CallEffectKind.OPAQUE, "tvm_stack_make_array": CallEffectKind.OPAQUE,
}


def _register():
    for name, effect in _EFFECTS.items():
        register_op(f"tir.{name}")
        if Op.get(f"tir.{name}").get_attr("TCallEffectKind") is None:
            register_op_attr(f"tir.{name}", "TCallEffectKind", effect)


_register()


def _call(dtype, name, *args, span=None):
    return Call(dtype, Op.get(f"tir.{name}"), args, span=span)


def tvm_tuple(*value):
    """A tuple of values passed to an intrinsic that takes a list (``handle``)."""
    return _call("handle", "tvm_tuple", *value)


def tvm_stack_make_shape(*args, span=None):
    """A stack-allocated ``int64`` array holding ``args`` (a shape passed to a packed function), as a handle."""
    return _call("handle", "tvm_stack_make_shape", *args, span=span)


def tvm_stack_make_array(data, shape, strides, ndim, arr_dtype, elem_offset, span=None):
    """A stack-allocated DLTensor over ``data`` (a handle) with ``shape`` and ``strides`` (handles from
    :func:`tvm_stack_make_shape`, or 0), ``ndim`` dimensions, the element type of the constant ``arr_dtype`` and
    ``elem_offset``: how a buffer is passed to a packed function."""
    return _call("handle", "tvm_stack_make_array", data, shape, strides, ndim, arr_dtype, elem_offset, span=span)


def pack_buffer(buf, span=None):
    """The DLTensor handle describing buffer ``buf`` (TVM's ``_pack_buffer``): what ``call_packed`` passes for a
    Buffer argument."""
    from .expr_op import convert

    shape = tvm_stack_make_shape(*buf.shape, span=span)
    strides = tvm_stack_make_shape(*buf.strides, span=span) if buf.strides else convert(0)
    zero = convert(0, buf.dtype)
    return tvm_stack_make_array(buf.data, shape, strides, convert(len(buf.shape)), zero, buf.elem_offset, span=span)


def tvm_struct_get(arr, index, field, dtype):
    """Field ``field`` of the ``index``-th struct (a DLTensor, a TVMValue) behind the handle ``arr``, as ``dtype``."""
    return _call(dtype, "tvm_struct_get", arr, index, field)


def tvm_struct_set(arr, index, field, value):
    """Set field ``field`` of the ``index``-th struct behind ``arr`` to ``value``."""
    return _call("int32", "tvm_struct_set", arr, index, field, value)


def address_of(buffer_load, span=None):
    """The address of the element a ``BufferLoad`` reads (``handle``)."""
    return _call("handle", "address_of", buffer_load, span=span)


def lookup_param(param_name, span=None):
    """The linked parameter named ``param_name`` (``handle``)."""
    return _call("handle", "lookup_param", StringImm(str(param_name)), span=span)


def assume(cond=None):
    """A statement that ``cond`` holds, for the simplifier (``bool``)."""
    return _call("bool", "assume", cond)


def undef():
    """An undefined value (``int32``): a store of it may be dropped."""
    return _call("int32", "undef")


def tvm_thread_allreduce(*freduce_args):
    """A reduction across the threads of a group (``handle``)."""
    return _call("handle", "tvm_thread_allreduce", *freduce_args)


def type_annotation(dtype):
    """A value standing only for its dtype."""
    return _call(dtype, "type_annotation")


def tvm_access_ptr(ptype, data, offset, extent, rw_mask):
    """A pointer into ``data`` at ``offset`` (in elements of ``ptype``'s type) for ``extent`` elements, read (1)
    and/or written (2) as ``rw_mask`` says."""
    return _call("handle", "tvm_access_ptr", ptype, data, offset, extent, rw_mask)


def tvm_throw_last_error():
    """Return the last error set in the runtime to the caller (``handle``)."""
    return _call("handle", "tvm_throw_last_error")


def vectorlow(dtype, vec):
    """The lower half of the lanes of ``vec``, as ``dtype``."""
    return _call(dtype, "vectorlow", vec)


def vectorhigh(dtype, vec):
    """The upper half of the lanes of ``vec``, as ``dtype``."""
    return _call(dtype, "vectorhigh", vec)


def vectorcombine(dtype, vec1, vec2):
    """The lanes of ``vec1`` followed by those of ``vec2``, as ``dtype``."""
    return _call(dtype, "vectorcombine", vec1, vec2)


def TVMBackendAllocWorkspace(device_type, device_id, nbytes, dtype_code_hint, dtype_bits_hint):  # noqa: N802
    """Allocate ``nbytes`` of workspace on a device (TVM's runtime function; ``handle``)."""
    return _call("handle", "TVMBackendAllocWorkspace", device_type, device_id, nbytes, dtype_code_hint,
                 dtype_bits_hint)


def TVMBackendFreeWorkspace(device_type, device_id, ptr):  # noqa: N802
    """Free workspace ``ptr`` from :func:`TVMBackendAllocWorkspace` (``int32``: 0 on success)."""
    return _call("int32", "TVMBackendFreeWorkspace", device_type, device_id, ptr)
