"""Helpers for testing passes: run passes on an expression, make random inputs, compare results with the
reference interpreter (TVM's ``relay.testing.run_opt_pass`` and friends)."""

from ...ir.module import IRModule
from ...ir.oracle import compare_results
from ...ir.transform import PassContext, Sequential
from ..function import Function
from ..interpreter import create_executor
from ..transform.infer_type import infer_type
from ..transform.verify import random_inputs


def as_module(expr_or_mod) -> IRModule:
    """An IRModule holding ``expr_or_mod`` as ``@main`` (a module is returned as is)."""
    if isinstance(expr_or_mod, IRModule):
        return expr_or_mod
    return IRModule.from_expr(expr_or_mod)


def run_opt_pass(expr, passes, import_prelude=False, *, opt_level=None, **ctx_args):
    """Apply ``passes`` (a pass or list of passes) to ``expr``, typed before and after (TVM's helper); returns
    ``@main`` for a function or module, else the body ``expr`` became.

    As TVM's, the passes are called one by one under the current PassContext (so a pass runs whatever its opt_level,
    and its required passes do not run first); with ``opt_level`` or PassContext arguments (``config=``,
    ``required=``...) they run as a ``Sequential`` (required passes first, opt levels checked) under a new context made
    of those. ``import_prelude`` adds the prelude's data types and functions to the module first.

    Examples
    --------
    >>> after = run_opt_pass(before, relay.transform.FoldConstant())   # doctest: +SKIP
    """
    mod = as_module(expr)
    if import_prelude:
        mod = mod.shallow_copy()
        mod.import_from_std("prelude.rly")
    mod = infer_type(mod)
    passes = list(passes) if isinstance(passes, list | tuple) else [passes]
    if opt_level is None and not ctx_args:
        for opt_pass in passes:
            mod = opt_pass(mod)
    else:
        with PassContext(opt_level=3 if opt_level is None else opt_level, **ctx_args):
            mod = Sequential(passes)(mod)
    entry = infer_type(mod)["main"]
    return entry if isinstance(expr, Function | IRModule) else entry.body


def run_infer_type(expr):
    """``expr`` typed (TVM's ``relay.testing.run_infer_type``): a function or module's ``@main``, else the typed
    expression."""
    entry = infer_type(as_module(expr))["main"]
    return entry if isinstance(expr, Function | IRModule) else entry.body


def evaluate(expr_or_mod, inputs):
    """Evaluate ``@main`` of ``expr_or_mod`` on ``inputs`` with the reference interpreter; numpy results."""
    result = create_executor("debug", mod=as_module(expr_or_mod)).evaluate()(*inputs)
    if isinstance(result, tuple):
        return tuple(r.numpy() for r in result)
    return result.numpy()


def assert_same_results(before, after, seed=0, rtol=1e-5, atol=1e-5, trials=2):
    """Check that two functions (or modules) compute the same results on random inputs: the same number of outputs,
    each of the same shape and dtype, with values within ``rtol``/``atol`` (:func:`kiln.ir.oracle.compare_results`).

    Raises
    ------
    AssertionError
        Naming the first difference and the seed of the inputs that show it.

    Examples
    --------
    >>> assert_same_results(before, run_opt_pass(before, relay.transform.FoldConstant()))   # doctest: +SKIP
    """
    main = as_module(before)["main"]
    for trial in range(trials):
        inputs = random_inputs(main, seed + trial)
        problem = compare_results(evaluate(before, inputs), evaluate(after, inputs), rtol, atol)
        if problem:
            raise AssertionError(f"different results on random inputs (seed {seed + trial}): {problem}")


def rand(dtype, *shape):
    """An NDArray of ``shape`` with uniform random values in [0, 1) of ``dtype`` (TVM's ``relay.testing.rand``)."""
    import numpy as np

    from ...runtime.ndarray import array

    return array(np.random.rand(*shape).astype(dtype))


def count_ops(expr) -> dict:
    """How many calls of each operator ``expr`` makes, by operator name (TVM's ``relay.testing.count_ops``; a
    dict that reads 0 for an operator never called)."""
    from collections import Counter

    from ..analysis import list_op_freqs

    return Counter(list_op_freqs(expr))
