"""kiln.relay.transform: Relay passes, one per file."""

from ...ir.transform import ModulePass, Pass, PassContext, PassInfo, Sequential, module_pass
from . import verify  # noqa: F401  (registers the Relay checks of the verification instruments)
from .alter_op_layout import AlterOpLayout
from .annotate_spans import AnnotateSpans, SpanCheck
from .annotate_target import AnnotateTarget
from .canonicalize_cast import CanonicalizeCast
from .canonicalize_ops import CanonicalizeOps
from .capture_post_dfs_index import CapturePostDfsIndexInSpans
from .combine_parallel_batch_matmul import CombineParallelBatchMatmul
from .combine_parallel_conv2d import CombineParallelConv2D
from .combine_parallel_dense import CombineParallelDense
from .combine_parallel_op_batch import CombineParallelOpBatch
from .common_subexpr import EliminateCommonSubexpr
from .convert_layout import ConvertLayout, LayoutConfig
from .convert_sparse_conv2d import Conv2dToSparse, Conv2dToSparse2
from .convert_sparse_dense import DenseToSparse
from .dead_code import DeadCodeElimination
from .defunctionalization import Defunctionalization
from .div_to_mul import DivToMul
from .dynamic_to_static import DynamicToStatic
from .eta_expand import EtaExpand
from .fake_quantization_to_integer import FakeQuantizationToInteger
from .fast_math import FastMath
from .flatten_atrous_conv import FlattenAtrousConv
from .flexible_shape import FlexibleShapeDispatch
from .fold_constant import FoldConstant, FoldConstantExpr
from .fold_explicit_padding import FoldExplicitPadding
from .fold_scale_axis import BackwardFoldScaleAxis, FoldScaleAxis, ForwardFoldScaleAxis
from .function_pass import FunctionPass, function_pass
from .fuse_ops import FuseOps
from .gradient import FirstOrderGradient, gradient
from .infer_type import InferType, InferTypeLocal, infer_type
from .inline import DefuseOps, Inline
from .lambda_lift import LambdaLift
from .lazy_gradient_init import LazyGradientInit
from .legalize import Legalize
from .manifest_alloc import ManifestAlloc
from .manifest_lifetimes import ManifestLifetimes
from .memory_plan import MemoryPlan
from .merge_compiler_regions import MergeCompilerRegions
from .merge_composite import MergeComposite
from .normal_form import ToANormalForm, ToBasicBlockNormalForm, ToGraphNormalForm
from .partial_eval import PartialEvaluate
from .partition_graph import PartitionGraph
from .plan_devices import PlanDevices
from .plan_devices_capture import recover_virtual_device_map  # noqa: F401  (registers RecoverVirtualDeviceMap)
from .qnn_canonicalize import QnnCanonicalize
from .remove_unused_functions import RemoveUnusedFunctions
from .simplify_expr import SimplifyExpr
from .simplify_fc_transpose import SimplifyFCTranspose
from .simplify_inference import SimplifyInference
from .split_args import SplitArgs
from .to_cps import ToCPS, UnCPS, to_cps, un_cps
