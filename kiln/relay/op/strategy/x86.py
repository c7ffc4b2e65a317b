"""x86 strategies (TVM's ``relay/op/strategy/x86.py``): which compute and schedule each call gets on a CPU, and the
x86 layout alteration of ``nn.conv2d``.

Every implementation names the topi compute and the topi schedule it pairs (``conv2d_NCHWc.x86`` is
``topi.nn.conv2d_NCHWc`` with ``topi.x86.schedule_conv2d_NCHWc``); an operator without an x86 form of its own keeps
its generic compute with the schedule of its group's anchor tag (:func:`.generic.fschedule_by_tag`), the fallback.
The forms, at a higher plevel (15) than the generic one (10) when the call fits:

* ``nn.conv2d``: uint8 x int8 -> int32 NCHW/OIHW without groups on a CPU with an 8-bit dot product ->
  ``topi.x86.conv2d_nchw_int8``; NCHW/OIHW without groups -> ``topi.x86.conv2d_nchw`` (packed at run time); the
  packed layouts
  themselves -> ``conv2d_NCHWc`` (grouped too, each group whole blocks); packed depthwise ->
  ``depthwise_conv2d_NCHWc``; every other layout -> the direct computes, all with their x86 schedules;
* ``nn.dense``/``nn.matmul`` with a ``(N, K)`` weight on 2-D data -> ``dense_int8`` for uint8 x int8 -> int32 on
  a CPU with an 8-bit dot product, else ``dense_nopack`` for at most
  :data:`NOPACK_MAX_ROWS` rows, else ``dense_pack``; ``nn.matmul`` with a ``(K, N)`` operand -> ``matmul_tile``;
  ``nn.batch_matmul`` -> ``batch_matmul_pack``; ``nn.contrib_dense_pack`` -> its generic compute with the GEMM
  schedule;
* pooling, softmax, reductions and injective operators -> their generic computes with their x86 schedules.

The tunable forms (the blocked and packed-depthwise convolutions, packed and unpacked dense) go through the
schedule templates of :mod:`kiln.autotvm` (:func:`_template`): the call's tensors and attributes make the workload,
whose config the current dispatch context gives (the default one outside ``autotvm.apply_history_best``: the
hand-chosen schedule).

The layout hook (``FTVMAlterOpLayout`` of ``nn.conv2d`` calls the target-generic ``topi.nn.conv2d_alter_layout``,
whose ``"cpu"`` entry is :func:`alter_conv2d_layout`; AlterOpLayout runs it at opt_level 3 while a CPU target is
current) turns a float32 NCHW/OIHW convolution into its blocked form in the layouts
:func:`kiln.topi.x86.conv2d_alter_layout` picks for the target, as TVM's x86 hook does::

    nn.contrib_conv2d_NCHWc(data, weight, data_layout="NCHW{ic_bn}c", kernel_layout="OIHW{ic_bn}i{oc_bn}o",
                            out_layout="NCHW{oc_bn}c")

(depthwise convolutions: ``nn.contrib_depthwise_conv2d_NCHWc`` with ``OIHW1i{b}o``; grouped ones when each group's
channels are whole blocks of at least half a vector, else they stay NCHW, where a 1-wide kernel vectorizes over the
flattened map). The layout rewriter
transforms the inputs (the weight's ``layout_transform`` of a constant folds: weights are packed once, at compile
time) and carries the blocked result through the layout-agnostic operators that follow, so consecutive convolutions
exchange blocked tensors and layouts change only at the boundaries of the blocked region. The hook of ``nn.dense``
(:func:`alter_dense_layout`) likewise turns a product computed packed into ``nn.contrib_dense_pack`` of a weight
transformed to ``NC{b}n``.
"""

from ....autotvm.task import template_implementation
from ....ir.op import register_op_attr
from ....target.target import Target
from ....topi import nn as topi_nn
from ....topi import x86
from ....topi.utils import get_const_tuple
from .. import nn as _nn
from . import generic
from .base import OpStrategy

__all__ = ["STRATEGIES", "alter_conv2d_layout", "alter_dense_layout", "alter_op_layout_conv2d",
           "alter_op_layout_dense", "CPU_TARGET_KINDS", "BLOCKED_DTYPES", "NOPACK_MAX_ROWS"]

CPU_TARGET_KINDS = ("llvm", "c")
"""Target kinds whose conv2d is altered to the blocked layouts."""

BLOCKED_DTYPES = ("float32",)
"""Data/weight dtypes the blocked x86 convolution is used for (others keep their layout, as in TVM's float path)."""

NOPACK_MAX_ROWS = x86.NOPACK_MAX_ROWS


def _schedule(fschedule):
    """``FTVMSchedule``-style ``(attrs, outs, target)`` of a topi schedule ``(outs, target)``."""
    return lambda attrs, outs, target: fschedule(outs, target)


def _out_dtype(attrs, out_type):
    return getattr(attrs, "out_dtype", "") or out_type.dtype


def _generic_with(name, fschedule, impl_name):
    """The generic compute of ``name`` with the topi schedule ``fschedule``."""
    def fstrategy(attrs, inputs, out_type, target):
        return OpStrategy().add_implementation(generic.COMPUTES[name], _schedule(fschedule), impl_name, 15)

    return fstrategy


def _template(strategy, task_name, args, target, impl_name=None):
    """Add the autotvm template ``task_name`` on ``args`` (the call's tensors and attributes) to ``strategy``."""
    fcompute, fschedule = template_implementation(task_name, args, target)
    return strategy.add_implementation(fcompute, fschedule, impl_name or task_name, 15)


def _conv2d_strategy(attrs, inputs, out_type, target):
    strategy = OpStrategy()
    data_layout, kernel_layout = attrs.data_layout, attrs.kernel_layout
    out_layout = attrs.out_layout or data_layout
    nchw = attrs.groups == 1 and (data_layout, kernel_layout, out_layout) == ("NCHW", "OIHW", "NCHW")
    if nchw and x86.int8_conv2d_supported(inputs[0].dtype, inputs[1].dtype, _out_dtype(attrs, out_type), target):
        def fcompute_int8(attrs, inputs, out_type):
            return [x86.conv2d_nchw_int8(inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.dilation,
                                         _out_dtype(attrs, out_type), target)]

        return strategy.add_implementation(fcompute_int8, _schedule(x86.schedule_conv2d_nchw_int8),
                                           "conv2d_nchw_int8.x86", 15)
    if attrs.groups == 1 and (data_layout, kernel_layout, out_layout) == ("NCHW", "OIHW", "NCHW") and \
            not x86.flat_map_preferred(inputs[1].shape, attrs.strides, attrs.padding, target):
        def fcompute(attrs, inputs, out_type):
            return [x86.conv2d_nchw(inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.dilation,
                                    _out_dtype(attrs, out_type), target)]

        return strategy.add_implementation(fcompute, _schedule(x86.schedule_conv2d_NCHWc), "conv2d_nchw.x86", 15)
    conv = generic.COMPUTES["nn.conv2d"]  # dispatches on the layouts to the topi computes named below
    args = (inputs[0], inputs[1], attrs.strides, attrs.padding, attrs.dilation, data_layout, kernel_layout,
            _out_dtype(attrs, out_type))
    if topi_nn.is_packed_depthwise(inputs[0], data_layout, kernel_layout, attrs.groups):
        return _template(strategy, "depthwise_conv2d_NCHWc.x86", (*args, attrs.groups, out_layout), target)
    if topi_nn.is_packed(data_layout, kernel_layout) and attrs.groups == 1:
        return _template(strategy, "conv2d_NCHWc.x86", (*args, out_layout), target)
    if topi_nn.is_packed(data_layout, kernel_layout):  # grouped too, each group whole blocks
        return _template(strategy, "group_conv2d_NCHWc.x86", (*args, attrs.groups, out_layout), target,
                         "conv2d_NCHWc.x86")
    if (data_layout, kernel_layout) in (("NCHW", "OIHW"), ("NHWC", "HWIO")):
        name, fschedule = f"conv2d_{data_layout.lower()}_direct.x86", x86.schedule_conv2d_direct
    else:  # another layout pair: computed through NCHW, scheduled by the anchor's tag
        return generic.default_strategy("nn.conv2d")(attrs, inputs, out_type, target)
    return strategy.add_implementation(conv, _schedule(fschedule), name, 15)


def _dense_like(data, weight, out_dtype, target):
    """The x86 dense compute and schedule for 2-D ``data`` and a ``(N, K)`` weight, or None when the generic one is
    better (:func:`kiln.topi.x86.dense_form`). The unpacked form is the template ``dense_nopack.x86``."""
    if x86.int8_dense_supported(data.dtype, weight.dtype, out_dtype, target) and \
            all(isinstance(d, int) for d in (*get_const_tuple(data.shape), *get_const_tuple(weight.shape))):
        return x86.dense_int8(data, weight, out_dtype, target), x86.schedule_dense_int8
    rows, reduced = get_const_tuple(data.shape)
    form = x86.dense_form(rows, reduced, get_const_tuple(weight.shape)[0], target, out_dtype)
    if form == "nopack":
        fcompute, fschedule = template_implementation("dense_nopack.x86", (data, weight, out_dtype), target)
        return fcompute(None, [data, weight], None)[0], lambda outs, target_: fschedule(None, outs, target_)
    if form == "pack":
        return x86.dense_pack(data, weight, out_dtype, target), x86.schedule_gemm
    return None


def _dense_strategy(attrs, inputs, out_type, target):
    strategy = generic.default_strategy("nn.dense")(attrs, inputs, out_type, target)
    if len(inputs[0].shape) != 2:
        return strategy
    found = _dense_like(inputs[0], inputs[1], _out_dtype(attrs, out_type), target)
    if found is not None:
        out, fschedule = found
        strategy.add_implementation(lambda attrs, inputs, out_type: [out], _schedule(fschedule), "dense.x86", 15)
    return strategy


def _matmul_strategy(attrs, inputs, out_type, target):
    strategy = generic.default_strategy("nn.matmul")(attrs, inputs, out_type, target)
    if len(inputs[0].shape) != 2:
        return strategy
    a, b = inputs[0], inputs[1]
    dtype = _out_dtype(attrs, out_type)
    if not attrs.transpose_b:
        out = x86.matmul_tile(a, b, attrs.transpose_a, dtype)
        return strategy.add_implementation(lambda attrs, inputs, out_type: [out], _schedule(x86.schedule_gemm),
                                           "matmul_tile.x86", 15)
    found = None if attrs.transpose_a else _dense_like(a, b, dtype, target)
    if found is not None:
        out, fschedule = found
        strategy.add_implementation(lambda attrs, inputs, out_type: [out], _schedule(fschedule), "matmul.x86", 15)
    return strategy


def _batch_matmul_strategy(attrs, inputs, out_type, target):
    args = (inputs[0], inputs[1], attrs.transpose_a, attrs.transpose_b, _out_dtype(attrs, out_type))
    return _template(OpStrategy(), "batch_matmul_pack.x86", args, target)


_POOLS = ("nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.global_max_pool2d")
_REDUCTIONS = ("sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin")


def _pool_strategy(name):
    """The template ``pool2d.x86`` (or ``global_pool.x86``) on the call of pooling operator ``name``."""
    pool_type = "max" if "max" in name else "avg"

    def fstrategy(attrs, inputs, out_type, target):
        if name.startswith("nn.global"):
            global_args = (inputs[0], pool_type, attrs.layout, attrs.out_layout)
            return _template(OpStrategy(), "global_pool.x86", global_args, target, f"{name}.x86")
        args = (inputs[0], attrs.pool_size, attrs.strides, attrs.dilation, attrs.padding, pool_type, attrs.ceil_mode,
                attrs.layout, getattr(attrs, "count_include_pad", False), attrs.out_layout)
        return _template(OpStrategy(), "pool2d.x86", args, target, f"{name}.x86")

    return fstrategy


def _reduce_strategy(name):
    """The template ``reduce.x86`` on the call of reduction operator ``name``."""
    def fstrategy(attrs, inputs, out_type, target):
        args = (inputs[0], name, attrs.axis, attrs.keepdims, attrs.exclude, getattr(attrs, "select_last_index", False))
        return _template(OpStrategy(), "reduce.x86", args, target, f"{name}.x86")

    return fstrategy


STRATEGIES = {
    **{name: generic.default_strategy(name) for name in generic.COMPUTES},
    **{name: _pool_strategy(name) for name in _POOLS},
    **{name: _reduce_strategy(name) for name in _REDUCTIONS},
    "nn.softmax": _generic_with("nn.softmax", x86.schedule_softmax, "softmax.x86"),
    "nn.log_softmax": _generic_with("nn.log_softmax", x86.schedule_softmax, "log_softmax.x86"),
    "nn.conv2d": _conv2d_strategy,
    "nn.contrib_conv2d_NCHWc": _conv2d_strategy,  # the blocked forms AlterOpLayout makes: the same templates
    "nn.contrib_depthwise_conv2d_NCHWc": _conv2d_strategy,
    "nn.dense": _dense_strategy,
    "nn.contrib_dense_pack": lambda attrs, inputs, out_type, target: _template(
        OpStrategy(), "dense_pack.x86", (inputs[0], inputs[1], attrs.units, _out_dtype(attrs, out_type)), target),
    "nn.matmul": _matmul_strategy,
    "nn.batch_matmul": _batch_matmul_strategy,
}
"""Relay operator name -> ``FTVMStrategy`` on CPU targets."""


def alter_conv2d_layout(attrs, inputs, tinfos, out_type):
    """``FTVMAlterOpLayout`` of ``nn.conv2d`` for CPU targets (see the module docstring).

    Parameters
    ----------
    attrs : Conv2DAttrs
        The call's attributes.
    inputs : list of relay.Expr
        ``[data, weight]`` (the data in the layout the rewritten producer computes it in).
    tinfos : list of TensorType
        Their types.
    out_type : TensorType
        The call's type.

    Returns
    -------
    new : relay.Call or None
        The blocked convolution, or None to keep the call (no CPU target is current, another dtype, groups of
        partial blocks, or a layout other than NCHW/OIHW).
    """
    target = Target.current()
    if target is None or target.kind.name not in CPU_TARGET_KINDS:
        return None
    data_type, weight_type = tinfos
    out_dtype = attrs.out_dtype or out_type.dtype
    if data_type.dtype not in BLOCKED_DTYPES or weight_type.dtype != data_type.dtype or out_dtype != data_type.dtype:
        return None
    new = x86.conv2d_alter_layout(attrs, data_type.shape, weight_type.shape, target)
    if new is None:
        return None
    # as TVM's: the blocked operator with the channels set; the rewriter transforms the inputs to its layouts
    depthwise = attrs.groups != 1 and attrs.groups == int(data_type.shape[1]) == int(weight_type.shape[0]) and \
        int(weight_type.shape[1]) == 1
    build = _nn.contrib_depthwise_conv2d_nchwc if depthwise else _nn.contrib_conv2d_nchwc
    return build(*inputs, **dict(attrs, **new, channels=int(weight_type.shape[0])))


def alter_dense_layout(attrs, inputs, tinfos, out_type):
    """``FTVMAlterOpLayout`` of ``nn.dense`` for CPU targets: a product the x86 strategy computes packed becomes
    ``nn.contrib_dense_pack`` of the weight transformed to ``NC{b}n`` (a constant weight is packed once, at compile
    time, instead of on every call). Returns None to keep the call (no CPU target, a dtype other than float32, or a
    product computed unpacked: :func:`kiln.topi.x86.dense_alter_layout`)."""
    target = Target.current()
    if target is None or target.kind.name not in CPU_TARGET_KINDS:
        return None
    data_type, weight_type = tinfos
    out_dtype = attrs.out_dtype or out_type.dtype
    if data_type.dtype not in BLOCKED_DTYPES or weight_type.dtype != data_type.dtype or out_dtype != data_type.dtype:
        return None
    weight_layout = x86.dense_alter_layout(data_type.shape, weight_type.shape, target, out_dtype)
    if weight_layout is None:
        return None
    data, weight = inputs
    units, block = weight_type.shape[0], int(weight_layout[2:-1])
    if units % block == 0:  # as TVM's: the rewriter transforms the weight to weight_layout
        return _nn.contrib_dense_pack(data, weight, weight_layout, None, out_dtype)
    # the last panel padded with zero columns, left out of the output (units=)
    weight = _nn.pad(weight, ((0, -units % block), (0, 0)))
    return _nn.contrib_dense_pack(data, weight, weight_layout, units, out_dtype)


def alter_op_layout_conv2d(attrs, inputs, tinfos, out_type):
    """``FTVMAlterOpLayout`` of ``nn.conv2d``: the current target's ``topi.nn.conv2d_alter_layout`` (TVM's)."""
    return topi_nn.conv2d_alter_layout(attrs, inputs, tinfos, out_type)


def alter_op_layout_dense(attrs, inputs, tinfos, out_type):
    """``FTVMAlterOpLayout`` of ``nn.dense``: the current target's ``topi.nn.dense_alter_layout`` (TVM's)."""
    return topi_nn.dense_alter_layout(attrs, inputs, tinfos, out_type)


topi_nn.conv2d_alter_layout.register("cpu", alter_conv2d_layout)
topi_nn.dense_alter_layout.register("cpu", alter_dense_layout)
register_op_attr("nn.conv2d", "FTVMAlterOpLayout", alter_op_layout_conv2d)
register_op_attr("nn.dense", "FTVMAlterOpLayout", alter_op_layout_dense)

# strategies whose computes and schedules take sizes known only at run time (a dynamic batch keeps the packed GEMM)
for _name in ("nn.dense", "nn.contrib_dense_pack"):
    register_op_attr(_name, "TDynamicStrategy", True)
