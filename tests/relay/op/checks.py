"""A helper for operator tests: run a Relay expression through the reference interpreter and compiled for both
targets, and compare every result with the numpy value the test computed itself."""

import numpy as np

import kiln
from kiln import relay
from kiln.contrib import graph_executor


def _compare(got, want, rtol, what):
    assert got.dtype == want.dtype and got.shape == want.shape, f"{what}: got {got.dtype}{got.shape}, " \
                                                                 f"expected {want.dtype}{want.shape}"
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def check(expr, inputs, expected, targets=("llvm", "c"), rtol=1e-5):
    """``expr`` (over variables named as the keys of ``inputs``) evaluates to ``expected`` (an array or a tuple of
    them) in the reference interpreter and compiled for each of ``targets``."""
    params = relay.analysis.free_vars(expr)
    mod = kiln.IRModule.from_expr(relay.Function(params, expr))
    expected = expected if isinstance(expected, tuple) else (expected,)
    out = relay.create_executor("debug", mod=mod).evaluate()(**inputs)
    out = out if isinstance(out, tuple) else (out,)
    for k, (got, want) in enumerate(zip(out, expected, strict=True)):
        _compare(got.numpy(), np.asarray(want), rtol, f"output {k} of the reference interpreter")
    for target in targets:
        with kiln.transform.PassContext(opt_level=3):
            lib = relay.build(mod, target=target)
        module = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
        module.run(**inputs)
        for k, want in enumerate(expected):
            _compare(module.get_output(k).numpy(), np.asarray(want), rtol, f"output {k} on {target}")
