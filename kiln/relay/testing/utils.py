"""Helpers for testing passes: run passes on an expression, make random inputs, compare results with the
reference interpreter (TVM's ``relay.testing.run_opt_pass`` and friends)."""

import numpy as np

from ...ir.module import IRModule
from ...ir.transform import PassContext, Sequential
from ...ir.type import TensorType
from ..function import Function
from ..interpreter import create_executor
from ..transform.infer_type import infer_type


def as_module(expr_or_mod) -> IRModule:
    """An IRModule holding ``expr_or_mod`` as ``@main`` (a module is returned as is)."""
    if isinstance(expr_or_mod, IRModule):
        return expr_or_mod
    return IRModule.from_expr(expr_or_mod)


def run_opt_pass(expr, passes, opt_level=3, **ctx_args):
    """Apply ``passes`` (a pass or list of passes) to ``expr`` under a PassContext; returns ``@main``, typed.

    Examples
    --------
    >>> after = run_opt_pass(before, relay.transform.FoldConstant())   # doctest: +SKIP
    """
    seq = Sequential(list(passes) if isinstance(passes, list | tuple) else [passes])
    with PassContext(opt_level=opt_level, **ctx_args):
        mod = seq(as_module(expr))
    return infer_type(mod)["main"]


def random_inputs(func, seed=0) -> list:
    """Random numpy values for the parameters of ``func`` (floats in [-1, 1), ints in [0, 4), bools)."""
    rng = np.random.default_rng(seed)
    values = []
    for param in func.params:
        ttype = param.checked_type_ or param.type_annotation
        if not isinstance(ttype, TensorType):
            raise TypeError(f"random_inputs: parameter %{param.name_hint} is not a tensor ({ttype})")
        if ttype.dtype == "bool":
            values.append(rng.random(ttype.shape) < 0.5)
        elif ttype.dtype.startswith(("int", "uint")):
            values.append(rng.integers(0, 4, ttype.shape).astype(ttype.dtype))
        else:
            values.append(rng.uniform(-1, 1, ttype.shape).astype(ttype.dtype))
    return values


def evaluate(expr_or_mod, inputs):
    """Evaluate ``@main`` of ``expr_or_mod`` on ``inputs`` with the reference interpreter; numpy results."""
    result = create_executor("debug", mod=as_module(expr_or_mod)).evaluate()(*inputs)
    if isinstance(result, tuple):
        return tuple(r.numpy() for r in result)
    return result.numpy()


def assert_same_results(before, after, seed=0, rtol=1e-5, atol=1e-5, trials=2):
    """Check that two functions (or modules) compute the same values on random inputs."""
    main = as_module(before)["main"]
    for trial in range(trials):
        inputs = random_inputs(main if isinstance(main, Function) else before, seed + trial)
        want, got = evaluate(before, inputs), evaluate(after, inputs)
        for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
