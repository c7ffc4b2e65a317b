"""The ONNX frontend: ``relay.frontend.from_onnx`` (TVM's ``tvm.relay.frontend.from_onnx``).

The converters live in one module per operator family (``math``, ``nn``, ``normalization``, ``tensor``, ``pad``,
``indexing``, ``reduce``, ``image``, ``quantize``, ``control``, ``rnn``, ``signal``, ``random``; the dynamic forms in
``dynamic``); importing them fills the converter table of :mod:`.common`, and :mod:`.graph` walks the graph
(expanding operators defined as ONNX functions with :mod:`.functions`). The ``onnx`` package is imported only when a
model is converted.
"""

import datetime
import operator
import os
from collections.abc import Mapping

from ....error import ArgumentTypeError, KilnError
from . import (  # noqa: F401  (register the converters)
    control,
    image,
    indexing,
    math,
    nn,
    normalization,
    pad,
    quantize,
    random,
    reduce,
    rnn,
    signal,
    tensor,
)
from .common import CONVERTERS
from .graph import DEFAULT_DOMAINS, GraphProto, node_names
from .inputs import ModelInput, model_inputs
from .validate import check_supported, validate_model


def load_model(model):
    """The ``onnx.ModelProto`` of ``model``: a ModelProto (returned as is) or the path of an ``.onnx`` file.

    Raises
    ------
    KilnError
        Naming the file when it does not exist, cannot be read, or is not an ONNX model.
    """
    import onnx

    if isinstance(model, str | os.PathLike):
        path = os.fspath(model)
        if not os.path.exists(path):
            raise KilnError(f"from_onnx: no ONNX model file at {path!r}")
        try:
            loaded = onnx.load(path)
        except Exception as exc:  # protobuf decode errors: report the file
            raise KilnError(f"from_onnx: {path!r} is not a readable ONNX model: {exc}") from exc
        if not loaded.HasField("graph"):  # an empty file parses as an empty ModelProto
            raise KilnError(f"from_onnx: {path!r} is not an ONNX model (it holds no graph)")
        return loaded
    if not isinstance(model, onnx.ModelProto):
        raise KilnError(f"from_onnx takes an onnx.ModelProto or a path, not {type(model).__name__}")
    return model


def model_opset(model) -> int:
    """The opset the model imports for the default ONNX domain (1 when it declares none)."""
    for entry in model.opset_import:
        if entry.domain in DEFAULT_DOMAINS:
            return int(entry.version)
    return 1


def _check_arguments(shape, dtype, opset):
    """Refuse ``from_onnx`` arguments of the wrong kind up front, naming the argument (a float dimension would
    otherwise be truncated, a str ``opset`` fail deep inside)."""
    if shape is not None and not isinstance(shape, Mapping):
        raise ArgumentTypeError(f"from_onnx: shape must be a dict of input name to shape, got {type(shape).__name__}")
    for name, dims in (shape or {}).items():
        try:
            [operator.index(d) for d in dims]
        except TypeError:
            raise ArgumentTypeError(f"from_onnx: shape={{{name!r}: {dims!r}}} is not a tuple of integers") from None
    if not isinstance(dtype, str | Mapping):
        raise ArgumentTypeError(f"from_onnx: dtype must be a str or a dict of input name to dtype, got "
                                f"{type(dtype).__name__}")
    if opset is not None:
        try:
            operator.index(opset)
        except TypeError:
            raise ArgumentTypeError(f"from_onnx: opset must be an int, got {opset!r}") from None


def from_onnx(model, shape=None, dtype="float32", opset=None, freeze_params=True,
              export_node_renamed_model_path=None):
    """Convert an ONNX model into a Relay module.

    Parameters
    ----------
    model : onnx.ModelProto or str or os.PathLike
        The model, or the path of an ``.onnx`` file.
    shape : dict of str to tuple of int, optional
        Static shapes of graph inputs; needed for inputs whose shape in the model has symbolic dimensions.
    dtype : str or dict of str to str, optional
        Input dtypes: a dict overrides the model's element type per input (and must name every input whose element
        type the model leaves undefined); a str is ignored, the model's types are used (as in TVM).
    opset : int, optional
        Convert as this opset instead of the one the model imports.
    freeze_params : bool, optional
        Bind initializers as constants in the module (``params`` is then empty); with False they become named
        parameters of ``@main`` after the graph inputs, and ``params`` maps their names to NDArrays.
    export_node_renamed_model_path : str, optional
        A directory (created if missing) into which the model is written as ``kiln_exported_model_<time>.onnx``
        with every node named as kiln named it (``<OpType>_<k>`` for unnamed nodes), as TVM does.

    Returns
    -------
    mod : IRModule
        ``@main`` takes the graph inputs (then the parameters when not frozen) and returns the graph outputs (a
        tuple when there are several).
    params : dict of str to NDArray
        Parameter values (empty when ``freeze_params``).

    Raises
    ------
    OpNotImplemented
        Listing every operator of the model kiln cannot convert.

    Examples
    --------
    >>> mod, params = relay.frontend.from_onnx("resnet.onnx", shape={"data": (1, 3, 224, 224)})  # doctest: +SKIP
    """
    _check_arguments(shape, dtype, opset)
    model = validate_model(load_model(model), opset)
    graph = model.graph
    opset = model_opset(model) if opset is None else int(opset)
    names = node_names(graph)
    if export_node_renamed_model_path is not None:
        _export_renamed(model, names, export_node_renamed_model_path)
    return GraphProto(shape, dtype, freeze_params).from_onnx(graph, opset, names)


def _export_renamed(model, names, folder):
    """Write ``model`` with its nodes named ``names`` into the directory ``folder`` (TVM's ``export_model``)."""
    import onnx

    renamed = onnx.ModelProto()
    renamed.CopyFrom(model)
    for node, name in zip(renamed.graph.node, names, strict=True):
        node.name = name
    folder = os.fspath(folder)
    path = os.path.join(folder, f"kiln_exported_model_{datetime.datetime.now():%m_%d_%Y_%H_%M_%S}.onnx")
    try:
        os.makedirs(folder, exist_ok=True)
        onnx.save(renamed, path)
    except OSError as exc:
        raise KilnError(f"from_onnx: cannot write the renamed model into the directory {folder!r} "
                        f"(export_node_renamed_model_path names a directory): {exc}") from exc


__all__ = ["CONVERTERS", "GraphProto", "ModelInput", "check_supported", "from_onnx", "load_model", "model_inputs",
           "model_opset", "node_names", "validate_model"]
