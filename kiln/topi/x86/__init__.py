"""kiln.topi.x86: computes and schedules tuned for x86 CPUs with vector units (TVM's ``topi.x86``).

Every schedule takes ``(outs, target=None)``: the outputs of a fused group (the anchor operation's outputs, or the
element-wise chain after it) and the target, whose vector width sets block sizes.
"""

# ruff: noqa: F401  (re-exports)

from . import conv2d_avx_common, dense_alter_op
from .conv2d import (
    conv2d_alter_layout,
    conv2d_nchw,
    conv2d_NCHWc,
    conv_blocking,
    flat_map_preferred,
    pointwise_tile,
    register_tile,
    schedule_conv2d_nchw,
    schedule_conv2d_NCHWc,
)
from .conv2d_direct import schedule_conv2d_direct
from .conv2d_int8 import conv2d_nchw_int8, int8_conv2d_supported, int8_dot_lanes, schedule_conv2d_nchw_int8
from .dense import (
    NOPACK_MAX_ROWS,
    batch_matmul_pack,
    dense_alter_layout,
    dense_form,
    dense_nopack,
    dense_pack,
    gemm_blocking,
    matmul_tile,
    schedule_dense_nopack,
    schedule_gemm,
)
from .dense_int8 import dense_int8, int8_dense_supported, schedule_dense_int8
from .dispatch import anchor_tag, schedule_auto
from .injective import schedule_concatenate, schedule_injective, schedule_injective_from_existing
from .pooling import schedule_pool
from .reduction import schedule_generic, schedule_reduce
from .softmax import schedule_softmax
from .sparse import schedule_sparse_dense

schedule_adaptive_pool = schedule_generic
schedule_dense_pack = schedule_gemm
schedule_batch_matmul = schedule_gemm
