"""``TempOpAttr`` (TVM's ``relay.testing.temp_op_attr``): set an operator attribute for the length of a ``with``
block, then put the old one back.

Examples
--------
>>> from kiln.relay.testing.temp_op_attr import TempOpAttr
>>> with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", my_hook):   # doctest: +SKIP
...     mod = relay.transform.AlterOpLayout()(mod)
"""

from ...ir.op import Op

__all__ = ["TempOpAttr"]


class TempOpAttr:
    """Within the block, attribute ``attr_key`` of ``op_name`` is ``attr_value``; afterwards it is what it was (or
    unset, if it was)."""

    def __init__(self, op_name, attr_key, attr_value):
        self.op = Op.get(op_name)
        self.attr_key, self.attr_value = attr_key, attr_value
        self.older = None

    def __enter__(self):
        level = self.op.get_attr_level(self.attr_key)
        self.older = None if level is None else (level, self.op.get_attr(self.attr_key))
        self.op.reset_attr(self.attr_key)
        self.op.set_attr(self.attr_key, self.attr_value)
        return self

    def __exit__(self, *exc):
        self.op.reset_attr(self.attr_key)
        if self.older is not None:
            level, value = self.older
            self.op.set_attr(self.attr_key, value, level)
