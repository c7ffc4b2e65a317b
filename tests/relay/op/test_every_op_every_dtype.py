"""The property of issue #10: every registered Relay operator, in every dtype its type relation accepts, compiled
for both targets, gives what the reference interpreter gives.

Each operator has a sample call in :data:`SAMPLES`, built from variables whose dtypes the test chooses: arguments
that accept the same dtypes (``add``'s two operands) share one dtype, and each such group runs through every dtype it
accepts (the op attribute ``dtypes``, the same table the type relation checks) while the others keep a default. A
sample that also takes a result dtype (``cast``, ``zeros``, ``argsort``...) runs through those as well. All calls of
all operators go into one Relay function per target, built once at opt_level 0 (each call its own kernel); when that
build fails, each operator is built alone so the failure names every operator and dtype at fault. Inputs stay inside
the domain where kiln defines the result (:mod:`kiln.tir.dtype_semantics`): positive for ``log``, divisors other than
0 and -1, in-range indices.
"""

import itertools
from dataclasses import dataclass

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.ir import Op
from kiln.ir.op import list_op_names
from kiln.relay.op.type_relations import ALL, INTEGER, NUMERIC

from ...target.conftest import TARGETS
from .qnn_samples import qnn_samples


@dataclass(frozen=True)
class Sample:
    """``build(v, out_dtype)`` makes the call; ``v(index, shape)`` a variable of argument ``index``'s dtype.
    ``out_dtypes`` are the result dtypes to run through (``product``: with every input dtype, as for ``cast``)."""

    build: object
    out_dtypes: tuple = ()
    product: bool = False


def s(build, out_dtypes=(), product=False):
    return Sample(build, tuple(out_dtypes), product)


def c(value, dtype):
    return relay.const(np.array(value, dtype))


def _unary(name, shape=(2, 5)):
    return s(lambda v, o: getattr(relay, name)(v(0, shape)))


def _binary(name):
    return s(lambda v, o: getattr(relay, name)(v(0, (2, 3)), v(1, (3,))))


_UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_not", "ceil", "cos", "cosh", "erf", "exp",
          "floor", "isfinite", "isinf", "isnan", "log", "logical_not", "negative", "round", "rsqrt", "sigmoid", "sign",
          "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]
_BINARY = ["add", "bitwise_and", "bitwise_or", "bitwise_xor", "divide", "equal", "floor_divide", "floor_mod", "greater",
           "greater_equal", "left_shift", "less", "less_equal", "logical_and", "logical_or", "logical_xor", "maximum",
           "minimum", "mod", "multiply", "not_equal", "power", "right_shift", "subtract", "trunc_divide", "trunc_mod"]
_REDUCE = {"sum": (1,), "mean": (0, 2), "max": None, "min": (-1,), "prod": (1,), "all": (0,), "any": (2,)}

SAMPLES = {
    **{name: _unary(name) for name in _UNARY},
    **{name: _binary(name) for name in _BINARY},
    **{name: s(lambda v, o, n=name, a=axis: getattr(relay, n)(v(0, (2, 3, 2)), axis=a, keepdims=a == (0, 2)))
       for name, axis in _REDUCE.items()},
    "argmax": s(lambda v, o: relay.argmax(v(0, (3, 4)), axis=1)),
    "argmin": s(lambda v, o: relay.argmin(v(0, (3, 4)), axis=0, keepdims=True)),
    "clip": s(lambda v, o: relay.clip(v(0, (2, 5)), 1.5, 3.0)),
    "cast": s(lambda v, o: relay.cast(v(0, (2, 3)), o), ALL, product=True),
    "where": s(lambda v, o: relay.where(v(0, (2, 1)), v(1, (2, 3)), v(2, (3,)))),
    "zeros": s(lambda v, o: relay.zeros((2, 2), o), ALL),
    "ones": s(lambda v, o: relay.ones((3,), o), ALL),
    "full": s(lambda v, o: relay.full(v(0, ()), (2, 3), o), ALL),
    "reshape": s(lambda v, o: relay.reshape(v(0, (2, 3, 2)), (3, -1))),
    "dyn.reshape": s(lambda v, o: relay.reshape(v(0, (2, 3, 2)), v(1, (3,), "values:0,-1,3"))),
    "dyn.broadcast_to": s(lambda v, o: relay.broadcast_to(v(0, (3, 1)), v(1, (3,), "values:2,3,4"))),
    "dyn.tile": s(lambda v, o: relay.tile(v(0, (2, 3)), v(1, (3,), "values:2,1,2"))),
    "dyn.arange": s(lambda v, o: relay.arange(v(0, (), "values:1"), v(0, (), "values:7"), v(0, (), "values:2"),
                                              o), ("float32", "int32", "int64")),
    "dyn.sparse_to_dense": s(lambda v, o: relay.sparse_to_dense(v(0, (2, 2), "values:0,1,2,0"),
                                                                v(3, (2,), "values:3,4"), v(1, (2,)), v(2, ()))),
    "dyn.expand_dims": s(lambda v, o: relay.expand_dims(v(0, (2, 3)), v(1, (), "values:-2"), 2)),
    "dyn.squeeze": s(lambda v, o: relay.squeeze(v(0, (2, 1, 3, 1)), v(1, (2,), "values:3,-3"))),
    "dyn.strided_slice": s(lambda v, o: relay.strided_slice(v(0, (3, 4, 5)), v(1, (2,), "values:2,-1"),
                                                            v(1, (2,), "values:0,0"), v(1, (2,), "values:-1,-2"))),
    "dyn.one_hot": s(lambda v, o: relay.one_hot(v(0, (3,), "index4"), v(1, ()), v(1, ()), v(3, (), "values:4"), 0, o),
                     ALL),
    "dyn.zeros": s(lambda v, o: relay.zeros(v(0, (2,), "values:2,3"), o), ALL),
    "dyn.ones": s(lambda v, o: relay.ones(v(0, (2,), "values:3,1"), o), ALL),
    "dyn.full": s(lambda v, o: relay.full(v(0, ()), v(1, (2,), "values:2,3"), o), ALL),
    "argwhere": s(lambda v, o: relay.argwhere(v(0, (3, 4)), o), ("int32", "int64")),
    "vision.all_class_non_max_suppression": s(lambda v, o: relay.vision.all_class_non_max_suppression(
        v(0, (1, 5, 4)), v(0, (1, 2, 5)), v(2, (), "values:2"), v(3, (), "positive"), v(3, ()))[0]),
    "dyn.topk": s(lambda v, o: relay.topk(v(0, (2, 5)), v(1, (), "values:3"), axis=1, ret_type="indices", dtype=o),
                  INTEGER),
    "dyn.nn.pad": s(lambda v, o: relay.nn.pad(v(0, (2, 2)), v(1, (2, 2), "values:1,0,0,2"), v(2, ()))),
    "dyn.nn.upsampling": s(lambda v, o: relay.nn.upsampling(v(0, (1, 1, 2, 3)), v(1, (), "values:2"),
                                                            v(1, (), "values:3"), method="bilinear")),
    "dyn.nn.upsampling3d": s(lambda v, o: relay.nn.upsampling3d(v(0, (1, 2, 2, 1, 2)), v(1, (), "values:2"), 1.0,
                                                                v(1, (), "values:3"), "NDHWC", "trilinear")),
    "dyn.image.resize2d": s(lambda v, o: relay.image.resize2d(v(0, (1, 1, 2, 3)), v(1, (2,), "values:4,5"),
                                                              v(2, (4,), "values:0,0,0,0"), method="nearest_neighbor")),
    "dyn.image.resize_nd": s(lambda v, o: relay.op.dyn.image.resize_nd(
        v(0, (1, 2, 3)), v(1, (2,), "values:4,5"), v(2, (2,), "values:2,2"), (1, 2), v(3, (4,), "values:0,0,1,1"),
        method="linear")),
    "transpose": s(lambda v, o: relay.transpose(v(0, (2, 3, 4)), (1, 2, 0))),
    "squeeze": s(lambda v, o: relay.squeeze(v(0, (2, 1, 3)), (1,))),
    "expand_dims": s(lambda v, o: relay.expand_dims(v(0, (2, 3)), 1, 2)),
    "concatenate": s(lambda v, o: relay.concatenate([v(0, (2, 3)), v(0, (1, 3))], 0)),
    "split": s(lambda v, o: relay.split(v(0, (4, 3)), [1, 3], 0)[2]),
    "take": s(lambda v, o: relay.take(v(0, (3, 4)), v(1, (2, 2), "index3"), axis=0)),
    "strided_slice": s(lambda v, o: relay.strided_slice(v(0, (5, 4)), [4, 1], [0, 4], [-2, 2])),
    "layout_transform": s(lambda v, o: relay.layout_transform(v(0, (1, 4, 2, 2)), "NCHW", "NCHW2c")),
    "shape_of": s(lambda v, o: relay.shape_of(v(0, (2, 3)), o), INTEGER),
    "broadcast_to": s(lambda v, o: relay.broadcast_to(v(0, (3, 1)), (2, 3, 4))),
    "tile": s(lambda v, o: relay.tile(v(0, (2, 3)), (2, 1))),
    "repeat": s(lambda v, o: relay.repeat(v(0, (2, 3)), 2, 1)),
    "reverse": s(lambda v, o: relay.reverse(v(0, (2, 3)), 1)),
    "gather": s(lambda v, o: relay.gather(v(0, (3, 4)), 1, v(1, (3, 2), "index4"))),
    "gather_nd": s(lambda v, o: relay.gather_nd(v(0, (3, 4)), v(1, (2, 3), "index3"))),
    "one_hot": s(lambda v, o: relay.one_hot(v(0, (3,), "index4"), v(1, ()), v(1, ()), 4, -1, o), ALL),
    "cumsum": s(lambda v, o: relay.cumsum(v(0, (2, 3)), axis=1)),
    "cumprod": s(lambda v, o: relay.cumprod(v(0, (2, 3)), axis=0, exclusive=True)),
    "scatter_elements": s(lambda v, o: relay.scatter_elements(v(0, (3, 3)), v(1, (1, 3), "index3"), v(2, (1, 3)), 0)),
    "scatter_nd": s(lambda v, o: relay.scatter_nd(v(0, (3, 2)), v(1, (1, 2), "index3"), v(2, (2, 2)), "add")),
    "topk": s(lambda v, o: relay.topk(v(0, (2, 5)), 3, axis=1, ret_type="indices", dtype=o), INTEGER),
    "argsort": s(lambda v, o: relay.argsort(v(0, (2, 5)), axis=1, is_ascend=False, dtype=o), INTEGER),
    "unique": s(lambda v, o: relay.unique(v(0, (6,)), False, True)[0]),
    "sparse_fill_empty_rows": s(lambda v, o: relay.sparse_fill_empty_rows(
        relay.cast_like(c([[0, 1], [2, 0]], "int32"), v(0, (2, 2))), v(1, (2,)),
        relay.cast_like(c([4, 3], "int32"), v(2, (2,))), v(1, (1,)))[1]),
    "nn.conv2d": s(lambda v, o: relay.nn.conv2d(v(0, (1, 2, 4, 4)), v(1, (3, 2, 3, 3)), padding=1)),
    "nn.bias_add": s(lambda v, o: relay.nn.bias_add(v(0, (2, 3, 2)), v(1, (3,)))),
    "nn.relu": s(lambda v, o: relay.nn.relu(v(0, (2, 5)))),
    "nn.leaky_relu": s(lambda v, o: relay.nn.leaky_relu(v(0, (2, 5)), 0.25)),
    "nn.max_pool2d": s(lambda v, o: relay.nn.max_pool2d(v(0, (1, 2, 4, 4)), (2, 2), (2, 2), padding=1)),
    "nn.avg_pool2d": s(lambda v, o: relay.nn.avg_pool2d(v(0, (1, 1, 4, 4)), (3, 3), padding=1, ceil_mode=True)),
    "nn.global_avg_pool2d": s(lambda v, o: relay.nn.global_avg_pool2d(v(0, (1, 2, 3, 3)))),
    "nn.global_max_pool2d": s(lambda v, o: relay.nn.global_max_pool2d(v(0, (1, 2, 3, 3)))),
    "nn.dense": s(lambda v, o: relay.nn.dense(v(0, (2, 3)), v(1, (4, 3)))),
    "nn.contrib_dense_pack": s(lambda v, o: relay.nn.contrib_dense_pack(v(0, (2, 3)), v(1, (2, 3, 2)), "NC2n")),
    "nn.matmul": s(lambda v, o: relay.nn.matmul(v(0, (2, 3)), v(1, (3, 4)))),
    "nn.batch_matmul": s(lambda v, o: relay.nn.batch_matmul(v(0, (1, 2, 3)), v(1, (2, 4, 3)))),
    "nn.batch_norm": s(lambda v, o: relay.nn.batch_norm(v(0, (1, 2, 3)), *(v(1, (2,), "positive") for _ in range(4)))[0]),
    "nn.layer_norm": s(lambda v, o: relay.nn.layer_norm(v(0, (2, 4)), v(1, (4,)), v(1, (4,)))),
    "nn.softmax": s(lambda v, o: relay.nn.softmax(v(0, (2, 5)))),
    "nn.log_softmax": s(lambda v, o: relay.nn.log_softmax(v(0, (2, 5)), axis=0)),
    "nn.batch_flatten": s(lambda v, o: relay.nn.batch_flatten(v(0, (2, 2, 3)))),
    "nn.dropout": s(lambda v, o: relay.nn.dropout(v(0, (2, 3)))),
    "nn.pad": s(lambda v, o: relay.nn.pad(v(0, (2, 2)), ((1, 0), (0, 2)), v(1, ()))),
    "nn.lrn": s(lambda v, o: relay.nn.lrn(v(0, (1, 3, 2, 2)), size=3)),
    "image.resize2d": s(lambda v, o: relay.image.resize2d(v(0, (1, 1, 2, 3)), (4, 5), method="nearest_neighbor")),
    "zeros_like": s(lambda v, o: relay.zeros_like(v(0, (2, 3)))),
    "ones_like": s(lambda v, o: relay.ones_like(v(0, (3,)))),
    "full_like": s(lambda v, o: relay.full_like(v(0, (2, 2)), v(0, ()))),
    "cast_like": s(lambda v, o: relay.cast_like(v(0, (2, 3)), v(1, (1,)))),
    "reshape_like": s(lambda v, o: relay.reshape_like(v(0, (2, 3, 2)), v(0, (3, 4)))),
    "broadcast_to_like": s(lambda v, o: relay.broadcast_to_like(v(0, (3, 1)), v(0, (2, 3, 2)))),
    "collapse_sum_like": s(lambda v, o: relay.collapse_sum_like(v(0, (2, 3, 2)), v(1, (3, 1)))),
    "collapse_sum_to": s(lambda v, o: relay.collapse_sum_to(v(0, (2, 3, 2)), (2,))),
    "slice_like": s(lambda v, o: relay.slice_like(v(0, (3, 4)), v(0, (2, 2)), axes=(1,))),
    "variance": s(lambda v, o: relay.variance(v(0, (2, 3, 2)), axis=(0, 2), unbiased=True)),
    "stack": s(lambda v, o: relay.stack([v(0, (2, 3)), v(0, (2, 3))], 1)),
    "arange": s(lambda v, o: relay.arange(c(1, o), c(7, o), c(2, o), dtype=o), NUMERIC),
    "meshgrid": s(lambda v, o: relay.meshgrid([v(0, (2,)), v(0, (3,))], "xy")[1]),
    "trilu": s(lambda v, o: relay.trilu(v(0, (3, 4)), v(1, ()), upper=False)),
    "unravel_index": s(lambda v, o: relay.unravel_index(v(0, (3,), "index6"), v(0, (2,), "positive"))),
    "sequence_mask": s(lambda v, o: relay.sequence_mask(v(0, (3, 2)), v(1, (2,)), 2)),
    "reverse_sequence": s(lambda v, o: relay.reverse_sequence(v(0, (2, 4)), v(1, (2,)))),
    "ndarray_size": s(lambda v, o: relay.ndarray_size(v(0, (2, 3)), o), INTEGER),
    "searchsorted": s(lambda v, o: relay.searchsorted(v(0, (2, 4)), v(0, (2, 3)), right=True)),
    "sparse_to_dense": s(lambda v, o: relay.sparse_to_dense(v(0, (3, 2), "index3"), (3, 3), v(1, (3,)),
                                                            v(1, ()))),
    "einsum": s(lambda v, o: relay.einsum([v(0, (2, 3)), v(0, (3, 2))], "ij,jk->ik")),
    "nn.conv1d": s(lambda v, o: relay.nn.conv1d(v(0, (1, 2, 5)), v(1, (2, 1, 3)), padding=1, groups=2)),
    "nn.conv3d": s(lambda v, o: relay.nn.conv3d(v(0, (1, 2, 3, 3, 2)), v(1, (2, 2, 2, 2, 1)))),
    "nn.conv1d_transpose": s(lambda v, o: relay.nn.conv1d_transpose(v(0, (1, 2, 3)), v(1, (2, 2, 2)), (2,))),
    "nn.conv2d_transpose": s(lambda v, o: relay.nn.conv2d_transpose(v(0, (1, 2, 2, 3)), v(1, (2, 1, 2, 2)), (2, 1),
                                                                    (1, 0, 0, 0))),
    "nn.conv3d_transpose": s(lambda v, o: relay.nn.conv3d_transpose(v(0, (1, 1, 2, 2, 2)), v(1, (1, 2, 2, 1, 2)))),
    "nn.max_pool1d": s(lambda v, o: relay.nn.max_pool1d(v(0, (1, 2, 5)), (2,), (2,), padding=(1,))),
    "nn.avg_pool1d": s(lambda v, o: relay.nn.avg_pool1d(v(0, (1, 2, 5)), (3,), padding=(1,))),
    "nn.max_pool3d": s(lambda v, o: relay.nn.max_pool3d(v(0, (1, 1, 3, 3, 3)), (2, 2, 2))),
    "nn.avg_pool3d": s(lambda v, o: relay.nn.avg_pool3d(v(0, (1, 1, 3, 2, 3)), (2, 1, 2), (1, 1, 2),
                                                        padding=(1, 0, 0))),
    **{f"nn.adaptive_{k}_pool{n}d": s(lambda v, o, k=k, n=n: getattr(relay.nn, f"adaptive_{k}_pool{n}d")(
        v(0, (1, 2) + (5, 3, 4)[:n]), (2, 3, 2)[:n])) for k in ("avg", "max") for n in (1, 2, 3)},
    "image.resize1d": s(lambda v, o: relay.image.resize1d(v(0, (1, 2, 3)), 5, method="nearest_neighbor")),
    "image.resize3d": s(lambda v, o: relay.image.resize3d(v(0, (1, 1, 2, 3, 2)), (3, 2, 4), method="cubic")),
    "nn.upsampling": s(lambda v, o: relay.nn.upsampling(v(0, (1, 1, 2, 3)), 2, 1.5, method="bilinear")),
    "nn.upsampling3d": s(lambda v, o: relay.nn.upsampling3d(v(0, (1, 1, 2, 2, 2)), 2, 1, 2, method="trilinear")),
    "nn.prelu": s(lambda v, o: relay.nn.prelu(v(0, (2, 3)), v(0, (3,)))),
    "nn.depth_to_space": s(lambda v, o: relay.nn.depth_to_space(v(0, (1, 4, 1, 2)), 2, mode="CRD")),
    "nn.space_to_depth": s(lambda v, o: relay.nn.space_to_depth(v(0, (1, 2, 4, 1)), 2, layout="NHWC")),
    "nn.l2_normalize": s(lambda v, o: relay.nn.l2_normalize(v(0, (2, 3)), 0.5, [1])),
    "nn.instance_norm": s(lambda v, o: relay.nn.instance_norm(v(0, (1, 2, 3)), v(0, (2,)), v(0, (2,)))),
    "nn.group_norm": s(lambda v, o: relay.nn.group_norm(v(0, (1, 4, 2)), v(0, (4,)), v(0, (4,)), 2)),
    "nn.mirror_pad": s(lambda v, o: relay.nn.mirror_pad(v(0, (2, 3)), ((1, 1), (0, 2)), "REFLECT")),
    "nn.fast_softmax": s(lambda v, o: relay.nn.fast_softmax(v(0, (2, 4)))),
    "vision.roi_align": s(lambda v, o: relay.vision.roi_align(v(0, (1, 2, 4, 5)), relay.concatenate(
        [v(0, (2, 1), "index1"), v(0, (2, 4), "positive")], 1), (2, 2), 1.0)),
    "vision.roi_pool": s(lambda v, o: relay.vision.roi_pool(v(0, (1, 2, 4, 5)), relay.concatenate(
        [v(0, (2, 1), "index1"), v(0, (2, 4), "positive")], 1), (2, 1), 1.0)),
    "image.crop_and_resize": s(lambda v, o: relay.image.crop_and_resize(v(0, (2, 2, 4, 3)), v(1, (3, 4)),
                                                                      v(2, (3,), "index2"), (2, 3))),
    "image.dilation2d": s(lambda v, o: relay.image.dilation2d(v(0, (1, 2, 4, 4)), v(0, (2, 2, 2)), padding=(1, 0))),
    "nn.contrib_conv2d_winograd_weight_transform": s(
        lambda v, o: relay.nn.contrib_conv2d_winograd_weight_transform(v(0, (2, 2, 3, 3)), 2)),
    "nn.contrib_conv2d_winograd_without_weight_transform": s(
        lambda v, o: relay.nn.contrib_conv2d_winograd_without_weight_transform(v(0, (1, 2, 5, 4)), v(1, (4, 4, 3, 2)),
                                                                             2, padding=(1, 1))),
    "nn.contrib_conv3d_winograd_weight_transform": s(
        lambda v, o: relay.nn.contrib_conv3d_winograd_weight_transform(v(0, (2, 2, 3, 3, 3)), 2)),
    "nn.contrib_conv3d_winograd_without_weight_transform": s(
        lambda v, o: relay.nn.contrib_conv3d_winograd_without_weight_transform(
            v(0, (1, 2, 4, 4, 3)), v(1, (4, 4, 4, 3, 2)), 2, padding=(1, 1, 1), kernel_size=(3, 3, 3))),
    "nn.contrib_conv2d_gemm_weight_transform": s(
        lambda v, o: relay.nn.contrib_conv2d_gemm_weight_transform(v(0, (2, 2, 3, 5)), 4, 4)),
    "nn.contrib_conv2d_gemm_without_weight_transform": s(
        lambda v, o: relay.nn.contrib_conv2d_gemm_without_weight_transform(
            v(0, (1, 5, 4, 3)), v(1, (2, 4, 4, 4)), padding=(1, 0), channels=5, kernel_size=(2, 2),
            data_layout="NHWC", kernel_layout="HWIO")),
    "nn.deformable_conv2d": s(lambda v, o: relay.nn.deformable_conv2d(v(0, (1, 2, 3, 3)), v(0, (1, 8, 2, 2)),
                                                                      v(0, (2, 2, 2, 2)))),
    "log2": _unary("log2"),
    "log10": _unary("log10"),
    "fast_exp": _unary("fast_exp"),
    "fast_tanh": _unary("fast_tanh"),
    "fast_erf": _unary("fast_erf"),
    "copy": _unary("copy"),
    "annotation.checkpoint": s(lambda v, o: relay.annotation.checkpoint(v(0, (2, 5)))),
    "annotation.stop_fusion": s(lambda v, o: relay.annotation.stop_fusion(v(0, (2, 5)))),
    "annotation.bitpack_start": s(lambda v, o: relay.Call(relay.op.get("annotation.bitpack_start"), [v(0, (2, 3))])),
    "annotation.bitpack_end": s(lambda v, o: relay.Call(relay.op.get("annotation.bitpack_end"), [v(0, (4,))])),
    "annotation.cast_hint": s(lambda v, o: relay.annotation.cast_hint(v(0, (3,)), "int8")),
    "annotation.compiler_begin": s(lambda v, o: relay.annotation.compiler_begin(v(0, (2, 3)), "default")),
    "annotation.compiler_end": s(lambda v, o: relay.annotation.compiler_end(v(0, (2, 3)), "default")),
    "on_device": s(lambda v, o: relay.annotation.on_device(v(0, (2, 3)), "cpu")),
    "device_copy": s(lambda v, o: relay.device_copy(v(0, (2, 3)), "cpu", "cpu")),
    "relay.op.annotation.simulated_quantize": s(lambda v, o: relay.quantize.simulated_quantize(
        v(0, (2, 3)), c(0.25, "float32"), c(-8, "float32"), c(7, "float32"), kind=1)),
    "reinterpret": s(lambda v, o: _reinterpret(v(0, (2, 3)))),
    **qnn_samples(s, c),
    "sort": s(lambda v, o: relay.sort(v(0, (2, 5)), axis=0, is_ascend=False)),
    "nn.dilate": s(lambda v, o: relay.nn.dilate(v(0, (2, 3)), (2, 1), 1)),
    "nn.space_to_batch_nd": s(lambda v, o: relay.nn.space_to_batch_nd(v(0, (1, 3, 2)), (2,), ((1, 0),))),
    "nn.batch_to_space_nd": s(lambda v, o: relay.nn.batch_to_space_nd(v(0, (4, 2, 1)), (2, 2), ((0, 1), (1, 0)))),
    "nn.cross_entropy": s(lambda v, o: relay.nn.cross_entropy(v(0, (2, 3), "positive"), v(0, (2, 3)))),
    "nn.cross_entropy_with_logits": s(lambda v, o: relay.nn.cross_entropy_with_logits(v(0, (2, 3)), v(0, (2, 3)))),
    "nn.nll_loss": s(lambda v, o: relay.nn.nll_loss(v(0, (2, 3, 2)), v(1, (2, 2), "index3"), v(0, (3,), "positive"))),
    "stft": s(lambda v, o: relay.stft(v(0, (10,)), 4, 3, 3, v(0, (3,)), onesided=False)),
    "dft": s(lambda v, o: relay.dft(v(0, (2, 4)), v(0, (2, 4)), True)[1]),
    "sliding_window": s(lambda v, o: relay.sliding_window(v(0, (2, 5)), 1, (2,), (2,))),
    "adv_index": s(lambda v, o: relay.adv_index([v(0, (3, 4)), c([[2, 0]], "int32"), c([1], "int64")])),
    "matrix_set_diag": s(lambda v, o: relay.matrix_set_diag(v(0, (2, 3)), v(0, (2, 2)), (0, 1))),
    "image.affine_grid": s(lambda v, o: relay.image.affine_grid(v(0, (1, 2, 3)), (2, 3))),
    "image.grid_sample": s(lambda v, o: relay.image.grid_sample(v(0, (1, 1, 3, 3)), v(0, (1, 2, 2, 2)),
                                                                padding_mode="border")),
    "vision.yolo_reorg": s(lambda v, o: relay.vision.yolo_reorg(v(0, (1, 4, 2, 2)), 2)),
    "invert_permutation": s(lambda v, o: relay.invert_permutation(relay.cast_like(c([2, 0, 3, 1], "int32"),
                                                                                  v(0, (1,))))),
    "contrib_reverse_reshape": s(lambda v, o: relay.contrib_reverse_reshape(v(0, (2, 3, 2)), (-1, 0))),
    "strided_set": s(lambda v, o: relay.strided_set(v(0, (4, 3)), v(0, (2, 2)), *[relay.cast_like(
        c(x, "int32"), v(2, (1,))) for x in ([1, 0], [4, 3], [2, 2])])),
    "sparse_reshape": s(lambda v, o: relay.sparse_reshape(*[relay.cast_like(c(x, "int32"), v(0, (1,))) for x in (
        [[0, 1], [1, 2]], [2, 3], [3, 2])])[0]),
    "fixed_point_multiply": s(lambda v, o: relay.fixed_point_multiply(v(0, (2, 3)), 1395864371, 2)),
    "nn.fifo_buffer": s(lambda v, o: relay.nn.fifo_buffer(v(0, (2, 1)), v(0, (2, 3)), 1)),
    "vision.multibox_prior": s(lambda v, o: relay.vision.multibox_prior(v(0, (1, 1, 2, 2)), (0.5, 0.3), (1.0, 2.0),
                                                                         clip=True)),
    "nn.contrib_conv2d_NCHWc": s(lambda v, o: relay.nn.contrib_conv2d_nchwc(
        v(0, (1, 1, 3, 3, 2)), v(1, (1, 1, 2, 2, 2, 2)), data_layout="NCHW2c", kernel_layout="OIHW2i2o")),
    "nn.contrib_depthwise_conv2d_NCHWc": s(lambda v, o: relay.nn.contrib_depthwise_conv2d_nchwc(
        v(0, (1, 1, 3, 3, 2)), v(1, (1, 1, 2, 2, 1, 2)), groups=2, data_layout="NCHW2c", kernel_layout="OIHW1i2o")),
    "nn.correlation": s(lambda v, o: relay.nn.correlation(v(0, (1, 2, 4, 4)), v(0, (1, 2, 4, 4)), 1, 1, 1, 1, 0,
                                                          False, "NCHW")),
    "vision.get_valid_counts": s(lambda v, o: relay.vision.get_valid_counts(v(0, (1, 4, 3)), v(1, ()))[1]),
    "nn.conv2d_backward_weight": s(lambda v, o: relay.nn.conv2d_backward_weight(
        v(0, (1, 2, 2, 2)), v(0, (1, 2, 3, 3)), channels=2, kernel_size=(2, 2))),
    "nn.max_pool2d_grad": s(lambda v, o: relay.nn.max_pool2d_grad(v(0, (1, 1, 2, 2)), v(0, (1, 1, 4, 4)), (2, 2),
                                                                  (2, 2))),
    "nn.avg_pool2d_grad": s(lambda v, o: relay.nn.avg_pool2d_grad(v(0, (1, 1, 3, 3)), v(0, (1, 1, 4, 4)), (2, 2),
                                                                  padding=(1, 0))),
    "nn.sparse_dense": s(lambda v, o: relay.nn.sparse_dense(v(0, (2, 3)), (v(0, (3,)), relay.cast_like(
        c([0, 2, 1], "int32"), v(2, (1,))), relay.cast_like(c([0, 2, 2, 3], "int32"), v(2, (1,)))))),
    "nn.sparse_conv2d": s(lambda v, o: relay.nn.sparse_conv2d(v(0, (1, 2, 2, 1)), v(0, (2, 1, 3)), v(2, (2,), "values:2,0"),
                                                              v(2, (3,), "values:0,1,2"), "NHWC", 3)),
    "nn.sparse_transpose": s(lambda v, o: relay.nn.sparse_transpose((v(0, (3,)), v(1, (3,), "values:2,0,2"), v(
        1, (4,), "values:0,1,1,3")))[1]),
    "debug": s(lambda v, o: relay.debug(v(0, (2, 3)))),
    "fixed_point_multiply_per_axis": s(lambda v, o: relay.fixed_point_multiply_per_axis(
        v(0, (2, 3)), c([1395864371, 1073741824, 7], "int32"), v(0, (3,)), True, True, [1])),
    "nn.sparse_add": s(lambda v, o: relay.nn.sparse_add(v(0, (3, 3)), (v(0, (3,)), relay.cast_like(
        c([0, 2, 1], "int32"), v(2, (1,))), relay.cast_like(c([0, 2, 2, 3], "int32"), v(2, (1,)))))),
    "nn.bitpack": s(lambda v, o: relay.nn.bitpack(v(0, (2, 8, 1)), bits=2, bit_axis=0, pack_type="uint8")),
    "nn.bitserial_conv2d": s(lambda v, o: relay.nn.bitserial_conv2d(v(0, (1, 2, 3, 3)), v(0, (2, 2, 2, 2)),
                                                                    kernel_size=(2, 2), weight_bits=2)),
    "nn.bitserial_dense": s(lambda v, o: relay.nn.bitserial_dense(v(0, (2, 3)), v(0, (4, 3)), 4, unipolar=False)),
    "vision.multibox_transform_loc": s(lambda v, o: relay.vision.multibox_transform_loc(
        v(0, (1, 3, 4), "positive"), v(0, (1, 16)), v(0, (1, 4, 4)), threshold=1.0)[0]),
    "vision.non_max_suppression": s(lambda v, o: relay.vision.non_max_suppression(
        v(0, (1, 4, 6)), v(1, (1,), "values:3"), v(2, (1, 4), "index4"), v(3, (), "values:2"), v(4, (), "positive"),
        return_indices=False, invalid_to_bottom=True)),
    "vision.regular_non_max_suppression": s(lambda v, o: _all_fields(relay.vision.regular_non_max_suppression(
        v(0, (1, 5, 4), "positive"), v(0, (1, 5, 3), "positive"), 2, 3, 2, 0.1, 0.5))),
    "random.threefry_generate": s(lambda v, o: relay.TupleGetItem(relay.random.threefry_generate(v(0, (10,)), (2, 3)),
                                                                  1)),
    "random.threefry_split": s(lambda v, o: relay.TupleGetItem(relay.random.threefry_split(v(0, (10,))), 1)),
    "random.uniform": s(lambda v, o: _random_distribution(relay.random.uniform, v(0, (10,)), v(1, ()), v(1, ()))),
    "random.normal": s(lambda v, o: _random_distribution(relay.random.normal, v(0, (10,)), v(1, ()),
                                                         v(1, (), "positive"))),
    "random.multinomial": s(lambda v, o: relay.TupleGetItem(relay.random.multinomial(
        v(0, (10,)), v(1, (2, 4), "positive"), 3), 1)),
    "vision.proposal": s(lambda v, o: relay.vision.proposal(
        v(0, (1, 2, 2, 2), "positive"), v(0, (1, 4, 2, 2)), v(0, (1, 3), "values:32,24,1"), (1.0,), (1.0,), 16, 0.7,
        4, 3, 4, False)),
}


def _all_fields(nms):
    """The four results of a regular NMS as one float32 row per batch (each sample gives one tensor)."""
    return relay.concatenate([relay.reshape(nms[0], (1, -1)), nms[1], nms[2],
                              relay.cast(relay.reshape(nms[3], (1, 1)), "float32")], axis=1)


def _random_distribution(op, key, a, b):
    """``op(key, (2, 3), dtype, a, b)``'s numbers, in the dtype of the bounds ``a`` and ``b``."""
    return relay.TupleGetItem(op(key, (2, 3), a.type_annotation.dtype, a, b), 1)


def _reinterpret(x):
    """``reinterpret`` to the other type of ``x``'s width (float to int, int to uint, uint to int)."""
    dtype = x.type_annotation.dtype
    bits = np.dtype(dtype).itemsize * 8
    kind = {"f": "int", "i": "uint", "u": "int"}[np.dtype(dtype).kind]
    return relay.reinterpret(x, f"{kind}{bits}")


EXCLUDED = {"call_lowered": "LowerTE's internal call of a lowered PrimFunc, never written in a program"}

# inputs inside the domain where each result is defined; (low, high) per kind, the default being DEFAULT_DOMAIN
POSITIVE = {"i": (1, 6), "u": (1, 6), "f": (0.25, 4.0)}
DOMAINS = {
    "log": POSITIVE, "log2": POSITIVE, "log10": POSITIVE, "sqrt": POSITIVE, "rsqrt": POSITIVE, "acosh": {"i": (1, 4), "u": (1, 4), "f": (1.0, 3.0)},
    "asin": {"i": (-1, 2), "u": (0, 2), "f": (-0.75, 0.75)}, "acos": {"i": (-1, 2), "u": (0, 2), "f": (-0.75, 0.75)},
    "atanh": {"i": (0, 1), "u": (0, 1), "f": (-0.75, 0.75)}, "power": {"i": (0, 3), "u": (0, 3), "f": (0.25, 2.0)},
    "left_shift": {"i": (0, 4), "u": (0, 4)}, "right_shift": {"i": (-8, 8), "u": (0, 16)},
    "tan": {"i": (-3, 4), "u": (0, 2), "f": (-1.0, 1.0)},  # tan(2) < 0 is outside an unsigned type
}
DIVISORS = {"divide", "floor_divide", "floor_mod", "mod", "trunc_divide", "trunc_mod"}
DEFAULT_DOMAIN = {"i": (-3, 4), "u": (0, 7), "f": (-2.0, 2.0)}
TOLERANCE = {"float16": 2e-2, "float32": 2e-5, "float64": 1e-12}


def _groups(per_argument):
    """The distinct accepted-dtype tuples, in argument order: arguments accepting the same dtypes share one."""
    return list(dict.fromkeys(per_argument))


def _default(accepted):
    return next((d for d in ("float32", "int32", "bool") if d in accepted), accepted[0])


def dtype_cases(name):
    """``(group -> dtype, out_dtype)`` assignments covering every accepted dtype of every argument group of ``name``
    (and every result dtype of its sample)."""
    sample, groups = SAMPLES[name], _groups(Op.get(name).get_attr("dtypes"))
    defaults = {g: _default(g) for g in groups}
    out_default = _default(sample.out_dtypes) if sample.out_dtypes else None
    cases = {(tuple(defaults.items()), out_default)}
    for g in groups:
        for dtype in g:
            outs = sample.out_dtypes if sample.product else (out_default,)
            cases.update((tuple({**defaults, g: dtype}.items()), out) for out in outs)
    cases.update((tuple(defaults.items()), out) for out in sample.out_dtypes)
    return sorted(cases, key=str)


class Inputs:
    """Makes the variables of every sample call and random values for them inside each operator's domain."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.values: dict = {}

    def variable(self, name, dtype, shape, role, index, out_dtype):
        var = relay.var(f"a{len(self.values)}", shape=shape, dtype=dtype)
        self.values[var] = self.random(name, dtype, shape, role, index, out_dtype)
        return var

    def random(self, name, dtype, shape, role, index, out_dtype):
        kind = np.dtype(dtype).kind
        if role and role.startswith("values:"):  # a shape-deciding argument of a dyn operator
            return np.array([int(v) for v in role[7:].split(",")], dtype).reshape(shape)
        if role and role.startswith("index"):
            return self.rng.integers(0, int(role[5:]), shape).astype(dtype)
        if kind == "b":
            return self.rng.random(shape) < 0.5
        low, high = (POSITIVE if role == "positive" else DOMAINS.get(name, DEFAULT_DOMAIN)).get(kind, (0, 2))
        if out_dtype and out_dtype.startswith("uint"):  # a negative float converted to it is undefined
            low = max(low, 0)
        if name in DIVISORS and index == 1:
            low, high = POSITIVE[kind]
            signs = self.rng.choice([-1, 1] if kind != "u" else [1], shape)
            return (signs * self.rng.integers(2 if kind != "f" else 1, 5, shape) / (1 if kind != "f" else 2)).astype(dtype)
        if kind == "f":  # quarters: sums and products of them are exact, so only the operation itself can differ
            return (self.rng.integers(int(low * 4), int(high * 4) + 1, shape) / 4).astype(dtype)
        return self.rng.integers(low, high, shape).astype(dtype)


def build_calls(names, inputs):
    """The outputs of every case of ``names``: ``[(name, dtypes, out_dtype, expr)]``."""
    calls = []
    for name in names:
        per_argument = Op.get(name).get_attr("dtypes")
        for assignment, out_dtype in dtype_cases(name):
            dtypes = dict(assignment)

            def v(index, shape, role=None, name=name, dtypes=dtypes, groups=per_argument, out_dtype=out_dtype):
                dtype = dtypes[groups[min(index, len(groups) - 1)]]
                return inputs.variable(name, dtype, shape, role, index, out_dtype)

            expr = SAMPLES[name].build(v, out_dtype)
            calls.append((name, sorted(set(dtypes.values())), out_dtype, expr))
    return calls


def _run(calls, inputs, target):
    """Build the calls into one function for ``target``, run it and the reference; the list of mismatches."""
    outputs = [expr for _, _, _, expr in calls]
    func = relay.Function(list(inputs.values), relay.Tuple(outputs))
    mod = kiln.IRModule.from_expr(func)
    args = list(inputs.values.values())
    want = relay.create_executor("debug", mod=mod).evaluate()(*args)
    with kiln.transform.PassContext(opt_level=0):
        if any(needs_vm(name) for name, *_ in calls):
            results = relay.create_executor("vm", mod=mod, target=target).evaluate()(*args)
            outputs = [r.numpy() for r in results]
        else:
            lib = relay.build(mod, target=target)
            module = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
            module.run(**{var.name_hint: value for var, value in inputs.values.items()})
            outputs = [module.get_output(k).numpy() for k in range(len(calls))]
    failures = []
    for k, (name, dtypes, out_dtype, _) in enumerate(calls):
        expected, got = want[k].numpy(), outputs[k]
        problem = _compare(got, expected)
        if problem:
            failures.append(f"{name} {'/'.join(dtypes)}{' -> ' + out_dtype if out_dtype else ''} on {target}: "
                            f"{problem}")
    return failures


def needs_vm(name) -> bool:
    """Whether operator ``name``'s result shape depends on values (a ``dyn`` operator): only the VM runs it."""
    return Op.get(name).get_attr("FShapeFunc") is not None


def _compare(got, want):
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"got {got.dtype}{got.shape}, expected {want.dtype}{want.shape}"
    if want.dtype.kind == "f":
        tol = TOLERANCE[want.dtype.name]
        ok = np.isclose(got.astype("float64"), want.astype("float64"), rtol=tol, atol=tol, equal_nan=True)
    else:
        ok = got == want
    if not np.all(ok):
        return f"got {got.ravel()[:8]}, expected {want.ravel()[:8]}"
    return ""


def operators():
    # the memory and VM dialects' ops (TNonComputational) are VM instructions, never kernels: tests/runtime/vm runs them
    return [name for name in list_op_names() if Op.get(name).get_attr("FTypeRelation") is not None
            and name not in EXCLUDED and not Op.get(name).get_attr("TNonComputational")]


def test_every_operator_has_a_sample():
    missing = sorted(set(operators()) - set(SAMPLES))
    assert not missing, f"operators without a sample call in {__name__}.SAMPLES: {missing}"
    assert not set(SAMPLES) - set(operators()), "samples of operators that are not registered"


def test_cases_cover_every_accepted_dtype():
    for name in operators():
        per_argument = Op.get(name).get_attr("dtypes")
        seen = {g: set() for g in _groups(per_argument)}
        for assignment, _ in dtype_cases(name):
            for g, dtype in assignment:
                seen[g].add(dtype)
        assert all(seen[g] == set(g) for g in seen), name
    assert len(dtype_cases("cast")) == len(ALL) ** 2
    assert sum(len(dtype_cases(name)) for name in operators()) > 10 * len(operators())


# the operators are built in parts so that the suite's workers share the longest test
SHARDS = 3


@pytest.mark.parametrize("shard", range(SHARDS))
@pytest.mark.parametrize("target", TARGETS)
def test_every_operator_in_every_dtype(target, shard):
    names = operators()[shard::SHARDS]
    failures, cases = [], 0
    for group in ([n for n in names if not needs_vm(n)], [n for n in names if needs_vm(n)]):
        group_failures, group_cases = _run_group(group, target)
        failures += group_failures
        cases += group_cases
    assert cases == sum(len(dtype_cases(name)) for name in names)
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures)


def _run_group(names, target):
    """The failures of ``names`` and the number of cases run: built together, or each alone when that fails (to
    name every one at fault). The operators whose shapes depend on values run on the VM."""
    inputs = Inputs()
    calls = build_calls(names, inputs)
    try:
        failures = _run(calls, inputs, target)
    except kiln.error.KilnError:
        failures = []
        for name in names:
            alone = Inputs()
            try:
                failures += _run(build_calls([name], alone), alone, target)
            except kiln.error.KilnError as exc:
                failures.append(f"{name} on {target}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
    return failures, len(calls)


def test_numeric_dtypes_are_what_relations_check():
    """The dtype tables the fuzzer and this test read are the relations' own: an undeclared dtype is refused."""
    x = relay.var("x", shape=(2,), dtype="bool")
    with pytest.raises(kiln.error.TypeInferenceError, match="subtract: argument 0 has dtype bool, but subtract "
                                                           "needs a numeric dtype"):
        relay.infer_type(relay.Function([x], relay.subtract(x, x)))
    assert Op.get("subtract").get_attr("dtypes") == (NUMERIC,)
    assert list(itertools.chain(*Op.get("take").get_attr("dtypes"))) == [*ALL, *INTEGER]
