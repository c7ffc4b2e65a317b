"""kiln.relay.transform: Relay passes, one per file."""

from .infer_type import infer_type
