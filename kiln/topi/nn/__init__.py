"""kiln.topi.nn: neural-network operator computes (TVM's ``topi.nn``)."""

# ruff: noqa: F401  (re-exports)

from ..image.resize_nd import upsampling, upsampling3d
from ..transform import flatten
from .alter_layout import conv2d_alter_layout, conv2d_legalize, dense_alter_layout, dense_legalize
from .conv2d import (
    conv2d,
    conv2d_nchw,
    conv2d_NCHWc,
    conv2d_nhwc,
    conv_out_size,
    depthwise_conv2d_nchw,
    depthwise_conv2d_NCHWc,
    group_conv2d_nchw,
    group_conv2d_nhwc,
    is_packed,
    is_packed_depthwise,
    pad_tuple,
)
from .conv_gemm import conv2d_gemm_weight_transform
from .conv_winograd import (
    conv2d_winograd_nchw,
    conv2d_winograd_nchw_without_weight_transform,
    conv2d_winograd_nhwc,
    conv2d_winograd_nhwc_without_weight_transform,
    conv2d_winograd_weight_transform,
    conv3d_winograd_weight_transform,
)
from .dense import batch_matmul, dense, dense_pack, matmul
from .elemwise import batch_flatten, bias_add, dropout, leaky_relu, relu
from .extra import prelu
from .norm import batch_norm, layer_norm, lrn
from .pad import pad
from .pool_api import adaptive_pool, adaptive_pool3d, pool1d, pool3d, pool_grad
from .pooling import global_pool, pool2d, pool_out_size
from .softmax import log_softmax, softmax
from .sparse import sparse_add, sparse_conv2d, sparse_dense, sparse_transpose
from .utils import get_pad_tuple, get_pad_tuple1d, get_pad_tuple3d
