"""Target-specific legalizations of ``qnn.conv2d`` and ``qnn.dense`` (``FTVMQnnLegalize``, which
``relay.qnn.transform.Legalize`` applies), as TVM's ``relay.qnn.op.legalizations``.

Integer products run fastest in the operand dtypes each target's instructions take, so the operands are moved
there: a quantized tensor ``s * (q - z)`` equals ``s * ((q + 128) - (z + 128))``, which turns int8 into uint8
values (and back) without changing what it stands for.

* x86 with fast 8-bit products (SSE4.2 and up, judged from ``-mcpu``: ``pmaddubsw``/``vpdpbusd`` multiply uint8
  by int8): data to uint8, weights to int8;
* ARM with ``+dotprod`` (or an NHWC convolution): both operands of one dtype, the data's moved to the weights';
* CUDA and ROCm: both int8 (``dp4a``); Vulkan: one dtype;
* a CPU without fast 8-bit products (a plain ``llvm`` target names no CPU, as in TVM; ARM without dotprod): the
  centred operands in int16 through the plain ``nn.conv2d``/``nn.dense``, which such CPUs multiply well.
"""

import dataclasses

import numpy as np

from ....ir.op import register_op_attr
from ....target import Target
from ...expr import Constant, const
from ...op import tensor as _t
from ...op.attrs import BiasAddAttrs
from ...op.op import make_call

__all__ = ["legalize_qnn_conv2d", "legalize_qnn_dense", "hardswish_func"]

_FAST_INT8_X86 = ("sse4.2", "avx2", "avx512bw", "avx512vnni", "avxvnni")


def hardswish_func(x):
    """``x * relu6(x + 3) / 6`` in numpy (TVM's name: the real function ``qnn.hardswish`` quantizes)."""
    x = np.asarray(x)
    return x * np.minimum(np.maximum(x + 3, 0), 6) / 6


def _shift(data, zero_point, dtype):
    """``data`` and its zero point moved by 128 into ``dtype`` (``uint8`` up, ``int8`` down)."""
    shift = 128 if dtype == "uint8" else -128
    moved = _t.cast(_t.add(_t.cast(data, "int32"), const(shift, "int32")), dtype)
    if isinstance(zero_point, Constant) and zero_point.data.numpy().ndim == 0:
        return moved, const(int(zero_point.data.numpy()) + shift, "int32")
    return moved, _t.add(zero_point, const(shift, "int32"))


def _rebuild(name, attrs, data, kernel, inputs):
    return make_call(name, [data, kernel, *inputs[2:]], attrs)


def _with_dtypes(name, attrs, inputs, types, data_dtype, kernel_dtype):
    """The call with its operands moved to the wanted dtypes (None for either: keep it); None when nothing moves."""
    data, kernel, data_zp, kernel_zp = inputs[:4]
    moved = False
    if data_dtype and types[0].dtype != data_dtype:
        data, data_zp = _shift(data, data_zp, data_dtype)
        moved = True
    if kernel_dtype and types[1].dtype != kernel_dtype:
        kernel, kernel_zp = _shift(kernel, kernel_zp, kernel_dtype)
        moved = True
    return make_call(name, [data, kernel, data_zp, kernel_zp, *inputs[4:]], attrs) if moved else None


def _in_int16(plain, attrs, inputs, types, kernel_axis):
    """The centred operands in int16 through the plain operator ``plain`` (int32 result)."""
    data, kernel, data_zp, kernel_zp = inputs[:4]
    centred_data = _t.subtract(_t.cast(data, "int16"), _t.cast(data_zp, "int16"))
    if len(types[3].shape) == 0:
        centred_kernel = _t.subtract(_t.cast(kernel, "int16"), _t.cast(kernel_zp, "int16"))
    else:  # one zero point per output channel
        centred_kernel = make_call("nn.bias_add", [_t.cast(kernel, "int16"), _t.negative(_t.cast(kernel_zp, "int16"))],
                                   BiasAddAttrs(kernel_axis))
    return make_call(plain, [centred_data, centred_kernel], dataclasses.replace(attrs, out_dtype=attrs.out_dtype or
                                                                                "int32"))


def _target_kind():
    target = Target.current(allow_none=True)
    if target is None:
        return None, None
    return target, target.kind.name


def _is_arm(target):
    return target.attrs.get("device") == "arm_cpu" or "arm_cpu" in target.keys or \
        str(target.attrs.get("mtriple", "")).startswith(("aarch64", "arm"))


def _arm_features(target):
    mattr = set(target.mattr or ())
    has_asimd = str(target.attrs.get("mtriple", "")).startswith("aarch64") or "+neon" in mattr
    return has_asimd, "+dotprod" in mattr


def _fast_int8_on_x86(target):
    """Whether the target's CPU, as ``-mcpu``/``-mattr`` name it, multiplies 8-bit values fast (TVM asks for
    SSE4.2; a target without ``-mcpu`` is a generic x86-64 without it)."""
    from ....target.cpu import cpu_info

    mcpu, mattr = target.mcpu or "", tuple(target.mattr or ())
    if not mcpu or mcpu == "native":
        return any(a.lstrip("+") in _FAST_INT8_X86 for a in mattr if a.startswith("+"))
    return bool(set(cpu_info(mcpu, mattr).features) & set(_FAST_INT8_X86))


def _legalize(name, plain, kernel_axis):
    def legalize(attrs, inputs, types):
        target, kind = _target_kind()
        if target is None:
            return None
        if kind in ("cuda", "rocm"):
            return _with_dtypes(name, attrs, inputs, types, "int8", "int8")
        if kind == "vulkan":
            return _with_dtypes(name, attrs, inputs, types, types[1].dtype, None)
        if kind not in ("llvm", "c"):
            return None
        if _is_arm(target):
            has_asimd, has_dotprod = _arm_features(target)
            nhwc = name == "qnn.conv2d" and attrs.data_layout == "NHWC" and attrs.groups == 1
            if has_asimd and not (has_dotprod or nhwc):
                return _in_int16(plain, attrs, inputs, types, kernel_axis(attrs))
            return _with_dtypes(name, attrs, inputs, types, types[1].dtype, None)
        if _fast_int8_on_x86(target):
            return _with_dtypes(name, attrs, inputs, types, "uint8", "int8")
        return _in_int16(plain, attrs, inputs, types, kernel_axis(attrs))

    legalize.__name__ = legalize.__qualname__ = f"legalize_{name.replace('.', '_')}"
    legalize.__doc__ = f"``{name}`` in the operand dtypes the current target multiplies fastest (module docstring)."
    return legalize


legalize_qnn_conv2d = _legalize("qnn.conv2d", "nn.conv2d", lambda attrs: attrs.kernel_layout.index("O"))
legalize_qnn_dense = _legalize("qnn.dense", "nn.dense", lambda attrs: 0)
register_op_attr("qnn.conv2d", "FTVMQnnLegalize", legalize_qnn_conv2d)
register_op_attr("qnn.dense", "FTVMQnnLegalize", legalize_qnn_dense)
