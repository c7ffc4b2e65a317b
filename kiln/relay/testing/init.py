"""Parameters for a workload: ``create_workload`` (TVM's ``relay.testing.init.create_workload``)."""

import numpy as np

from ...ir.module import IRModule
from ...runtime.ndarray import array as nd_array
from ..function import Function
from ..transform.infer_type import infer_type


def init_value(rng, name, shape, dtype):
    """Seeded values that keep activations in range: positive variances and scales, small shifts and biases,
    Xavier-scaled weights (by the parameter's name, as TVM's initializer chooses)."""
    if name.endswith(("_gamma", "_moving_var")):
        value = rng.uniform(0.5, 1.5, size=shape)
    elif name.endswith(("_beta", "_moving_mean", "_bias")):
        value = rng.uniform(-0.1, 0.1, size=shape)
    else:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        fan_out = shape[0] * (int(np.prod(shape[2:])) if len(shape) > 2 else 1) if shape else 1
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        value = rng.uniform(-limit, limit, size=shape)
    return nd_array(np.asarray(value).astype(dtype))


def create_workload(net, initializer=None, seed=0):
    """The typed module of ``net`` and a value for each of its parameters but ``data`` (TVM's helper).

    Parameters
    ----------
    net : relay.Function or IRModule
        The network; its parameter named ``data`` is the input, every other one a weight.
    initializer : callable, optional
        ``(rng, name, shape, dtype) -> NDArray``; :func:`init_value` by default.
    seed : int
        Seed of the random values.

    Returns
    -------
    mod : IRModule
    params : dict of str to NDArray
    """
    mod = infer_type(net if isinstance(net, IRModule) else IRModule.from_expr(net))
    func = mod["main"]
    if not isinstance(func, Function):
        raise TypeError(f"create_workload: @main is a {type(func).__name__}, not a Relay function")
    rng = np.random.default_rng(seed)
    init = initializer or init_value
    params = {}
    for param in func.params:
        if param.name_hint == "data":
            continue
        ttype = param.checked_type_
        params[param.name_hint] = init(rng, param.name_hint, tuple(ttype.shape), ttype.dtype)
    return mod, params
