"""kiln.relay.quantize: TVM's automatic quantization toolkit (``relay.quantize``).

``quantize(mod, params)`` rewrites a float model into 8-bit integer arithmetic under the configuration
``qconfig(...)`` sets: :mod:`._partition` marks the regions, :mod:`._annotate` simulates the rounding with
``simulated_quantize`` (:mod:`.simulated_quantize`), :mod:`._calibrate` chooses the scales, :mod:`._realize` turns
the simulation into integer operators. :mod:`.config` holds ``QConfig``, ``QAnnotateKind`` and the annotation
context; :mod:`.forward_rewrite` the rewriting driver the passes share.
"""

from . import _annotate, _calibrate, _partition, _realize
from ._annotate import QAnnotateExpr, QuantizeAnnotate, register_annotate_function
from ._calibrate import calibrate, collect_stats
from ._partition import QPartitionExpr, QuantizePartition, register_partition_function
from ._realize import QRealizeIntExpr, QuantizeRealize
from .config import QAnnotateKind, QConfig, QuantizeContext, current_qconfig, kind2str, qconfig, quantize_context
from .quantize import annotate, partition, prerequisite_optimize, quantize, realize
from .simulated_quantize import attach_simulated_quantize, simulated_quantize

__all__ = ["QAnnotateKind", "QConfig", "QuantizeContext", "current_qconfig", "kind2str", "qconfig",
           "quantize_context", "attach_simulated_quantize", "simulated_quantize", "quantize", "partition",
           "annotate", "realize", "calibrate", "collect_stats", "prerequisite_optimize", "QAnnotateExpr",
           "QPartitionExpr", "QRealizeIntExpr", "QuantizeAnnotate", "QuantizePartition", "QuantizeRealize",
           "register_annotate_function", "register_partition_function"]
