"""Numpy semantics of the annotation operators: each returns its argument unchanged."""

from .common import register


@register("annotation.stop_fusion", "annotation.cast_hint", "annotation.compiler_begin", "annotation.compiler_end",
          "annotation.bitpack_start", "annotation.bitpack_end", "on_device", "device_copy")
def identity(attrs, data):
    """``data`` itself: annotations change what passes do, never values."""
    return data
