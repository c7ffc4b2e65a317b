"""TVM's module path ``relay.quantize._annotate``: ``attach_simulated_quantize`` and ``QAnnotateKind``."""

from .config import QAnnotateKind
from .simulated_quantize import attach_simulated_quantize

__all__ = ["QAnnotateKind", "attach_simulated_quantize"]
