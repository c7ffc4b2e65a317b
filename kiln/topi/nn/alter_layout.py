"""The target-generic layout hooks of convolution and dense (TVM's ``topi.nn.conv2d_alter_layout`` and
``topi.nn.dense_alter_layout``).

Each takes ``(attrs, inputs, tinfos, out_type)`` -- a Relay call's attributes, its inputs, their types and its type --
and returns the call to compute it with, or None to keep it. Their defaults keep every call; the x86 ones are
registered for the ``"cpu"`` key by the Relay operator strategies (``kiln.relay.op.strategy.x86``), since building
Relay calls is above topi. The operators' ``FTVMAlterOpLayout`` calls these, so ``.register("cpu", override=True)``
replaces what AlterOpLayout does on CPUs.
"""

from ...target.generic_func import generic_func

__all__ = ["conv2d_alter_layout", "dense_alter_layout", "conv2d_legalize", "dense_legalize"]


@generic_func
def conv2d_alter_layout(attrs, inputs, tinfos, out_type):
    """The layout alteration of a conv2d call for the current target (default: none).

    Parameters
    ----------
    attrs : Conv2DAttrs
        The call's attributes.
    inputs : list of relay.Expr
        Its data and weight.
    tinfos : list
        Their types (``shape``, ``dtype``).
    out_type : TensorType
        The call's type.

    Returns
    -------
    new : relay.Call or None
    """
    return None


@generic_func
def dense_alter_layout(attrs, inputs, tinfos, out_type):
    """The layout alteration of a dense call for the current target (default: none); arguments as
    :func:`conv2d_alter_layout`."""
    return None


@generic_func
def conv2d_legalize(attrs, inputs, types):
    """The legalization of a conv2d call for the current target (TVM's ``topi.nn.conv2d_legalize``; default: none).

    Parameters
    ----------
    attrs : Conv2DAttrs
    inputs : list of relay.Expr
        Its data and weight.
    types : list of TensorType
        Their types, then the call's.

    Returns
    -------
    new : relay.Expr or None
    """
    return None


@generic_func
def dense_legalize(attrs, inputs, types):
    """The legalization of a dense call for the current target (TVM's ``topi.nn.dense_legalize``; default: none);
    arguments as :func:`conv2d_legalize`."""
    return None
