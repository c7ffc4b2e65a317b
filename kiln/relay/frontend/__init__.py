"""Frontends: import models from other frameworks into Relay (``relay.frontend.from_onnx``)."""

from .onnx import from_onnx

__all__ = ["from_onnx"]
