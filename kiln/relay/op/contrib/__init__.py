"""``relay.op.contrib``: what external code generators (bring-your-own-codegen) declare about Relay operators:
which calls each one takes (the ``target.<compiler>`` operator attribute ``AnnotateTarget`` asks) and its pattern
table for ``MergeComposite`` (``register_pattern_table``)."""

from . import dnnl
from .register import get_pattern_table, register_pattern_table

__all__ = ["dnnl", "get_pattern_table", "register_pattern_table"]
