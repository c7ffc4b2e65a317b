"""What the IR-level debugging instruments need from Relay (``kiln.ir.instrument.VerifyWellFormed`` and
``VerifySemantics``), registered here so the IR layer never imports Relay.

* A ``VerifyWellFormed`` check for Relay functions: every variable bound once and used in scope (the function
  analysis ``"relay.WellScoped"``, cached per function object, so unchanged functions are not re-checked after each
  pass), then type inference of the whole module (the ``"InferType"`` analysis, which a following ``InferType``
  pass reuses).
* ``"ir.instrument.random_inputs"`` and ``"ir.instrument.evaluate"`` for ``VerifySemantics``: arguments drawn from
  the entry function's parameter types, and evaluation with the reference interpreter (``create_executor("debug")``).
"""

import numpy as np

from ...error import KilnError, TypeInferenceError
from ...ir.analysis import register_analysis
from ...ir.instrument import register_verifier
from ...ir.type import TensorType, TupleType
from ...runtime.ndarray import NDArray
from ...runtime.packed_func import register_func
from ..analysis import well_formed_error
from ..function import Function


@register_analysis("relay.WellScoped", scope="function")
def well_scoped(func, mod=None):
    """Why ``func`` binds a variable twice or uses one out of scope, or None."""
    return well_formed_error(func)


@register_verifier
def verify_relay(mod, am):
    """The first scoping or typing problem of the Relay functions of ``mod``, or None."""
    has_relay = False
    for gv, func in mod.functions.items():
        if not isinstance(func, Function):
            continue
        has_relay = True
        problem = am.get("relay.WellScoped", func, mod)
        if problem:
            return f"in {gv}: {problem}"
    if not has_relay:
        return None
    try:
        am.get("InferType", mod)
    except TypeInferenceError as exc:
        return f"ill-typed: {exc}"
    return None


def _entry(mod, entry):
    func = mod[entry]
    if not isinstance(func, Function):
        raise KilnError(f"@{entry} is a {type(func).__name__}, not a Relay function: it cannot be evaluated")
    return func


def _random_value(ttype, rng, where):
    if isinstance(ttype, TupleType):
        return tuple(_random_value(t, rng, f"{where}[{i}]") for i, t in enumerate(ttype.fields))
    if not isinstance(ttype, TensorType):
        raise KilnError(f"cannot make a random value for {where} of type {ttype}")
    if not all(isinstance(d, int) for d in ttype.shape):
        raise KilnError(f"cannot make a random value for {where}: its shape {ttype.shape} is not static")
    dtype = np.dtype(ttype.dtype)
    if dtype.kind == "f":
        return rng.standard_normal(ttype.shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, ttype.shape).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 8, ttype.shape).astype(dtype)
    raise KilnError(f"cannot make a random value for {where} of dtype {ttype.dtype}")


@register_func("ir.instrument.random_inputs")
def random_inputs(mod, entry="main", seed=0):
    """Random arguments for ``mod[entry]`` (normal floats, small integers), reproducible with ``seed``."""
    rng = np.random.default_rng(seed)
    args = []
    for param in _entry(mod, entry).params:
        ttype = param.type_annotation or param.checked_type_
        args.append(_random_value(ttype, rng, f"parameter %{param.name_hint} of @{entry}"))
    return args


def _flatten(value, out):
    if isinstance(value, tuple | list):
        for v in value:
            _flatten(v, out)
    elif isinstance(value, NDArray):
        out.append(value.numpy())
    else:
        out.append(np.asarray(value))
    return out


@register_func("ir.instrument.evaluate")
def evaluate(mod, entry="main", inputs=()):
    """The outputs of ``mod[entry]`` on ``inputs`` (a list, or a dict by parameter name) as a flat list of arrays."""
    from ..interpreter import create_executor

    _entry(mod, entry)
    func = create_executor("debug", mod=mod).evaluate(entry)
    result = func(**inputs) if isinstance(inputs, dict) else func(*inputs)
    return _flatten(result, [])
