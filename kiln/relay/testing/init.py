"""Parameters for a workload: ``create_workload`` and the initializers (TVM's ``relay.testing.init``).

An initializer is either a function ``(rng, name, shape, dtype) -> NDArray`` (kiln's :func:`init_value`, the
default) or, as in TVM, an :class:`Initializer` object filling a numpy array in place by the parameter's name
(``Xavier`` for weights, ``Constant``): ``initializer(name, arr)``.
"""

import inspect

import numpy as np

from ...error import KilnError
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


class Initializer:
    """Fills a parameter's array by its name's ending (TVM's ``Initializer``): ``weight`` by
    :meth:`_init_weight`, ``bias``, ``beta`` and ``mean`` with 0, ``gamma`` and ``var`` with 1."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self.rng = np.random.default_rng(0)  # create_workload replaces it by its seeded generator

    def __call__(self, desc, arr):
        for ending, value in (("bias", 0.0), ("gamma", 1.0), ("beta", 0.0), ("mean", 0.0), ("var", 1.0)):
            if desc.endswith(ending):
                arr[...] = value
                return
        if desc.endswith("weight"):
            self._init_weight(desc, arr)
            return
        raise KilnError(f"initializer: no initialization for parameter {desc!r} (names end in weight, bias, "
                        f"gamma, beta, mean or var)")

    def _init_weight(self, name, arr):
        raise NotImplementedError(f"{type(self).__name__} does not initialize weights")


class Xavier(Initializer):
    """Uniform values in ``[-s, s]``, ``s = sqrt(magnitude / factor)``, the factor the fan-in, fan-out or their
    mean (``factor_type`` "in", "out", "avg"); for depthwise weights the kernel size (TVM's ``Xavier``)."""

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        if rnd_type != "uniform":
            raise KilnError(f"Xavier: unknown random type {rnd_type!r} (uniform)")
        if factor_type not in ("avg", "in", "out"):
            raise KilnError(f"Xavier: unknown factor type {factor_type!r} (avg, in or out)")
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise KilnError(f"Xavier: the weight {name} has shape {shape}; it needs at least 2 dimensions")
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        if "depthwise" in name:
            factor = hw_scale
        scale = np.sqrt(self.magnitude / factor)
        arr[...] = self.rng.uniform(-scale, scale, size=shape)


class Constant(Initializer):
    """Every weight element ``1 / size``, so a weight sums to 1 (TVM's ``Constant``)."""

    def _init_weight(self, name, arr):
        arr[...] = 1.0 / arr.size


def _fills_in_place(func) -> bool:
    """Whether ``func`` is a TVM-style initializer ``(name, arr)`` filling ``arr`` in place (kiln's take four
    arguments)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return False
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) == 2


def create_workload(net, initializer=None, seed=0):
    """The typed module of ``net`` and a value for each of its parameters but ``data`` (TVM's helper).

    Parameters
    ----------
    net : relay.Function or IRModule
        The network; its parameter named ``data`` is the input, every other one a weight.
    initializer : Initializer or callable, optional
        An :class:`Initializer` (``Xavier()``, ``Constant()``) or, as in TVM, any ``(name, arr)`` filling the
        zero array ``arr`` in place; or ``(rng, name, shape, dtype) -> NDArray``; :func:`init_value` by default.
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
    if isinstance(init, Initializer) or _fills_in_place(init):
        if isinstance(init, Initializer):
            init.rng = rng
        filler = init

        def init(rng, name, shape, dtype):
            arr = np.zeros(shape, dtype=dtype)
            filler(name, arr)
            return nd_array(arr)

    params = {}
    for param in func.params:
        if param.name_hint == "data":
            continue
        ttype = param.checked_type_
        params[param.name_hint] = init(rng, param.name_hint, tuple(ttype.shape), ttype.dtype)
    return mod, params
