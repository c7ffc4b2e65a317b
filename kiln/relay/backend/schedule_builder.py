"""Building the tensor expressions and the schedule of one fused group (TVM's ``ScheduleBuilder`` in
``te_compiler.cc``), what LowerTE does for each ``Primitive`` function.

Usage, for a group whose calls are visited in dataflow order::

    builder = ScheduleBuilder(target)
    x = te.placeholder(shape, dtype, name="p0")                      # one per parameter
    y = builder.call("nn.conv2d", attrs, [x, w], out_type)[0]        # one per call, in order
    z = builder.call("nn.relu", None, [y], relu_type)[0]
    s = builder.schedule([z])                                        # the group's outputs
    mod = kiln.lower(s, [x, w, z], name="fused_nn_conv2d_nn_relu")

Each call goes through :func:`select_implementation` (the operator's ``FTVMStrategy``). The *anchor* is the call
with the highest ``TOpPattern`` (the last of equals, as in TVM); its implementation's schedule receives all the
group's outputs and inlines the injective calls around it. A group without calls (a tuple of parameters) gets the
injective schedule.
"""

from ...ir.op import Op
from ...target.target import resolve_target
from ...te.tensor import Tensor
from ...topi.x86 import schedule_injective
from ..op.op import OpPattern
from ..op.strategy.base import op_name, select_implementation

__all__ = ["ScheduleBuilder"]


class ScheduleBuilder:
    """Accumulates the computes of a fused group and schedules it by its anchor (see the module docstring).

    Parameters
    ----------
    target : Target or str, optional
        The target (the current one, else ``llvm``).

    Attributes
    ----------
    anchor_op : str or None
        The name of the anchor operator so far.
    anchor_implementation : OpImplementation or None
    anchor_attrs : Attrs or None
    """

    def __init__(self, target=None):
        self.target = resolve_target(target)
        self.anchor_op = None
        self.anchor_pattern = -1
        self.anchor_implementation = None
        self.anchor_attrs = None

    def call(self, op, attrs, inputs, out_type) -> list:
        """The outputs of calling ``op`` on ``inputs`` (te tensors; a tuple argument flattened into its fields).

        Returns
        -------
        outputs : list of te.Tensor
            One per output of the call (several for ``split``, ``nn.batch_norm``, ``nn.dropout``).
        """
        name = op_name(op)
        impl, outputs = select_implementation(name, attrs, inputs, out_type, self.target)
        pattern = Op.get(name).get_attr("TOpPattern")
        pattern = OpPattern.OPAQUE if pattern is None else int(pattern)
        if pattern >= self.anchor_pattern:
            self.anchor_op, self.anchor_pattern = name, pattern
            self.anchor_implementation, self.anchor_attrs = impl, attrs
        return outputs

    def schedule(self, outs):
        """The schedule of the group whose outputs are ``outs`` (a tensor or a list of tensors).

        Returns
        -------
        s : te.Schedule
        """
        outs = [outs] if isinstance(outs, Tensor) else list(outs)
        if self.anchor_implementation is None:
            return schedule_injective(outs, self.target)
        return self.anchor_implementation.schedule(self.anchor_attrs, outs, self.target)
