"""kiln.relay.quantize: TVM's automatic quantization toolkit (``relay.quantize``).

* :mod:`.config`: ``qconfig``/``QConfig``/``current_qconfig``, ``QAnnotateKind``, the annotation context;
* :mod:`.simulated_quantize`: the operator ``relay.op.annotation.simulated_quantize`` and
  ``attach_simulated_quantize``;
* :mod:`._annotate`: TVM's module path for the annotation functions.
"""

from . import _annotate
from .config import QAnnotateKind, QConfig, QuantizeContext, current_qconfig, kind2str, qconfig, quantize_context
from .simulated_quantize import attach_simulated_quantize, simulated_quantize

__all__ = ["QAnnotateKind", "QConfig", "QuantizeContext", "current_qconfig", "kind2str", "qconfig",
           "quantize_context", "attach_simulated_quantize", "simulated_quantize"]
