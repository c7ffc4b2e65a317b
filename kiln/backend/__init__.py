"""Backends that let other frameworks' test suites drive kiln (``kiln.backend.onnx``: the ONNX backend API)."""
