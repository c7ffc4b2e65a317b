"""What the IR-level debugging instruments need from Relay (``kiln.ir.instrument.VerifyWellFormed`` and
``VerifySemantics``), registered here so the IR layer never imports Relay.

* A ``VerifyWellFormed`` check for Relay functions: every variable bound once and used in scope (the function
  analysis ``"relay.WellScoped"``, cached per function object, so unchanged functions are not re-checked after each
  pass), then type inference of the whole module (the ``"InferType"`` analysis, which a following ``InferType``
  pass reuses).
* ``"ir.instrument.random_inputs"`` and ``"ir.instrument.evaluate"`` for ``VerifySemantics``: arguments drawn from
  the entry function's parameter types (:func:`random_inputs`, also what the pass tests use), and evaluation with
  the reference interpreter (``create_executor("debug")``). Both sides share :mod:`kiln.ir.oracle`.
"""

from ...error import KilnError, TypeInferenceError
from ...ir.analysis import register_analysis
from ...ir.instrument import register_verifier
from ...ir.oracle import flatten_results, random_arguments
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


def random_inputs(func, seed=0, name="") -> list:
    """Random arguments for the parameters of the Relay function ``func`` (see :func:`kiln.ir.oracle.random_value`),
    reproducible with ``seed``; errors name the parameter (and ``@name`` when given).

    Examples
    --------
    >>> x = relay.var("x", shape=(2, 3))   # doctest: +SKIP
    >>> [a.shape for a in random_inputs(relay.Function([x], x))]
    [(2, 3)]
    """
    of = f" of @{name}" if name else ""
    return random_arguments(
        [(f"parameter %{p.name_hint}{of}", p.checked_type_ or p.type_annotation) for p in func.params], seed
    )


@register_func("ir.instrument.random_inputs")
def random_entry_inputs(mod, entry="main", seed=0):
    """Random arguments for ``mod[entry]``, reproducible with ``seed`` (what ``VerifySemantics`` evaluates on)."""
    return random_inputs(_entry(mod, entry), seed, entry)


@register_func("ir.instrument.evaluate")
def evaluate(mod, entry="main", inputs=()):
    """The outputs of ``mod[entry]`` on ``inputs`` (a list, or a dict by parameter name) as a flat list of arrays."""
    from ..interpreter import create_executor

    _entry(mod, entry)
    func = create_executor("debug", mod=mod).evaluate(entry)
    return flatten_results(func(**inputs) if isinstance(inputs, dict) else func(*inputs))
