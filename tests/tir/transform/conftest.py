"""Helpers for the TIR pass tests: build small PrimFuncs and compare them under the evaluator."""

import numpy as np
import pytest

from kiln import tir
from kiln.ir import IRModule
from kiln.tir.evaluator import evaluate


def make_func(params, body, buffers=None, name="main"):
    """A PrimFunc whose handle parameters map to ``buffers`` (``{param: buffer}``)."""
    return tir.PrimFunc(params, body, buffer_map=buffers or {}).with_attr("global_symbol", name)


def run_pass(pass_obj, func):
    """Apply a PrimFuncPass through an IRModule, as the pipeline does; return the new function."""
    return pass_obj(IRModule({"main": func}))["main"]


def random_args(func, seed=0, scalars=None):
    """Random arrays for the buffer parameters of ``func`` (scalars from ``scalars`` by name)."""
    rng = np.random.default_rng(seed)
    args = []
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is None:
            args.append((scalars or {})[p.name_hint])
            continue
        shape = [int(s.value) for s in buf.shape]
        if buf.dtype.startswith("float"):
            args.append(rng.standard_normal(shape).astype(buf.dtype))
        else:
            args.append(rng.integers(-50, 50, size=shape).astype(buf.dtype))
    return args


def assert_same_results(before, after, seed=0, scalars=None, rtol=1e-5, atol=1e-6):
    """Run both functions on the same random inputs; every buffer must end up equal."""
    args = random_args(before, seed, scalars)
    copy = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    evaluate(before, *args)
    evaluate(after, *copy)
    for a, b in zip(args, copy, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)


@pytest.fixture
def helpers():
    class H:
        pass

    h = H()
    h.make_func, h.run_pass, h.random_args, h.assert_same_results = make_func, run_pass, random_args, \
        assert_same_results
    return h
