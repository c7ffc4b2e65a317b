"""The inputs a caller feeds an ONNX model, with static shapes to compile it for.

An ONNX graph lists its inputs in ``graph.input``, but older exporters list the weights there too (every
initializer doubles as an input that may override it); the inputs a caller feeds are the graph inputs that are not
initializers, the ones :func:`~kiln.relay.frontend.from_onnx` makes parameters of ``@main``. A dimension the model
leaves symbolic (``"batch"``, or unnamed) has no size to compile for: :func:`model_inputs` takes it from the
caller's shapes, else sets it to ``symbolic_dim`` (1) and records it, so tools can say what they chose.
"""

from dataclasses import dataclass

from ....error import KilnError, OpNotImplemented
from .common import onnx_dtype

__all__ = ["ModelInput", "model_inputs"]


@dataclass(frozen=True)
class ModelInput:
    """A graph input to feed.

    Attributes
    ----------
    name : str
        The input's name.
    shape : tuple of int
        Its static shape: the caller's, else the model's with symbolic dimensions set.
    dtype : str
        Its element type (``"float32"``).
    chosen : tuple of (int, str)
        ``(axis, symbol)`` of each symbolic dimension that was set to ``symbolic_dim`` (empty when none was).
    """

    name: str
    shape: tuple
    dtype: str
    chosen: tuple = ()


def model_inputs(model, shape=None, symbolic_dim=1) -> list:
    """The graph inputs of ``model`` that are not initializers, with static shapes (see the module docstring).

    Parameters
    ----------
    model : onnx.ModelProto
        The model (:func:`~kiln.relay.frontend.onnx.load_model` reads one from a file).
    shape : dict of str to tuple of int, optional
        Shapes chosen by the caller, by input name; they win over the model's.
    symbolic_dim : int
        The size given to a symbolic dimension without a shape from the caller.

    Returns
    -------
    list of ModelInput
        In the model's order.

    Raises
    ------
    KilnError
        When ``shape`` names an input the model does not have; OpNotImplemented for an input that is not a tensor.

    Examples
    --------
    >>> [(i.name, i.shape, i.chosen) for i in model_inputs(model)]     # doctest: +SKIP
    [('data', (1, 3, 224, 224), ((0, 'batch'),))]
    """
    shape = dict(shape or {})
    weights = {init.name for init in model.graph.initializer}
    fed = [info for info in model.graph.input if info.name not in weights]
    unknown = [name for name in shape if name not in {info.name for info in fed}]
    if unknown:
        raise KilnError(f"input shapes name {', '.join(map(repr, unknown))}, which the model does not have as an "
                        f"input (its inputs: {', '.join(repr(i.name) for i in fed) or 'none'})")
    inputs = []
    for info in fed:
        if not info.type.HasField("tensor_type"):
            raise OpNotImplemented(f"graph input {info.name!r} is not a tensor (sequences, maps and optionals are not "
                                   f"supported)")
        tensor = info.type.tensor_type
        dtype = onnx_dtype(tensor.elem_type, f"graph input {info.name!r}") if tensor.elem_type else "float32"
        if info.name in shape:
            inputs.append(ModelInput(info.name, tuple(int(d) for d in shape[info.name]), dtype))
            continue
        if not tensor.HasField("shape"):
            raise KilnError(f"graph input {info.name!r} has no shape in the model: give its shape")
        dims, chosen = [], []
        for axis, dim in enumerate(tensor.shape.dim):
            if dim.HasField("dim_value") and dim.dim_value >= 0:
                dims.append(int(dim.dim_value))
            else:
                dims.append(int(symbolic_dim))
                chosen.append((axis, dim.dim_param or "?"))
        inputs.append(ModelInput(info.name, tuple(dims), dtype, tuple(chosen)))
    return inputs
