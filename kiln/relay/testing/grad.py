"""Gradient checking: the gradients ``relay.transform.gradient`` computes against central differences (TVM's
``relay.testing.check_grad``).

For every element ``x[i]`` of every tested input, the numerical derivative of ``sum(f(...))`` is
``(sum f(x[i] + eps) - sum f(x[i] - eps)) / (2 eps)``; it must match the analytical gradient within
``atol``/``rtol``. Inputs are drawn around ``mean`` with standard deviation ``scale`` (``10 * eps`` by default, so the
function is near-linear over ``2 eps``).
"""

import numpy as np

from ...runtime.device import cpu
from ...target.compiler import have_cc
from ...target.llvm_compile import have_llvmlite
from ..interpreter import create_executor
from ..transform.gradient import gradient
from ..transform.legalize import Legalize
from .utils import run_infer_type, run_opt_pass


def _np_randn_from_type(t, scale=1, mean=0):
    """Normal random values of TensorType ``t``'s shape and dtype (TVM's helper of the same name)."""
    values = mean + scale * np.random.randn(*(int(d) for d in t.shape))
    return np.asarray(values).astype(t.dtype)


def _default_targets(executor_kind):
    """Where to run: the interpreter ignores the target, so it runs once; compiled executors run on every CPU
    target this machine can build for."""
    if executor_kind in ("debug", "interpreter"):
        return [("llvm", cpu(0))]
    targets = (["llvm"] if have_llvmlite() and have_cc() else []) + (["c"] if have_cc() else [])
    return [(t, cpu(0)) for t in targets]


def _as_float64(value):
    """A result as float64 numbers (a tuple result: all its tensors, flattened and joined)."""
    if isinstance(value, tuple | list):
        return np.concatenate([_as_float64(v).ravel() for v in value]) if value else np.zeros(0)
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value).astype("float64")


def check_grad(func, inputs=None, test_inputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, scale=None, mean=0,
               mode="higher_order", target_devices=None, executor_kind="debug"):
    """Check the gradient of ``func`` against central differences.

    Parameters
    ----------
    func : relay.Function
        The function to check; its result is summed to a scalar.
    inputs : list of numpy.ndarray, optional
        The arguments (random normal ones of each parameter's type by default).
    test_inputs : list of numpy.ndarray, optional
        The arguments whose gradients are checked (the same objects as in ``inputs``; all by default). Useful when
        some arguments are not differentiable (indices, conditions).
    eps : float
        The step of the central differences.
    atol, rtol : float
        Tolerances of the comparison.
    scale, mean : float
        Standard deviation (``10 * eps`` by default) and mean of the random inputs.
    mode : str
        The mode of :func:`kiln.relay.transform.gradient`.
    target_devices : list of (target, device), optional
        Where to run (see above).
    executor_kind : str
        ``"debug"`` (the reference interpreter), ``"graph"`` or ``"vm"``.

    Raises
    ------
    AssertionError
        When an analytical gradient differs from the numerical one.
    """
    fwd_func = run_infer_type(func)
    bwd_func = run_opt_pass(run_infer_type(gradient(fwd_func, mode=mode)), Legalize())
    if scale is None:
        scale = 10 * eps
    if inputs is None:
        inputs = [_np_randn_from_type(p.checked_type, scale=scale, mean=mean) for p in fwd_func.params]
    if test_inputs is None:
        test_inputs = inputs
    for target, dev in target_devices or _default_targets(executor_kind):
        bwd = create_executor(executor_kind, device=dev, target=target).evaluate(bwd_func)
        fwd = create_executor(executor_kind, device=dev, target=target).evaluate(fwd_func)
        _, grads = bwd(*inputs)
        grads = [_as_float64(g) for g in grads]
        if test_inputs is not inputs:  # keep the gradients of the tested inputs, matched by identity
            grads = [grads[next(i for i, x in enumerate(inputs) if x is t)] for t in test_inputs]
        assert grads, "check_grad: at least one gradient must be tested"
        for grad, x in zip(grads, test_inputs, strict=True):
            numeric = np.zeros(x.shape)
            for i in np.ndindex(*x.shape):
                saved = x[i]
                x[i] = saved + eps
                plus = _as_float64(fwd(*inputs))
                x[i] = saved - eps
                minus = _as_float64(fwd(*inputs))
                x[i] = saved
                numeric[i] = np.sum((plus - minus) / (2 * eps))
            np.testing.assert_allclose(grad, numeric, atol=atol, rtol=rtol)
