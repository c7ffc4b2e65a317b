"""A helper for the gradient tests: each case builds a function of float64 variables and checks the gradient the
operator registered (through ``relay.transform.gradient``) against central differences (``check_grad``).

float64 keeps the numerical derivative exact to ~1e-9, so the tolerances can be tight. Inputs are chosen by the case
(``inputs``), away from kinks and outside the domain's edges, or drawn by ``check_grad`` around ``mean``.
"""

from dataclasses import dataclass, field

import numpy as np

from kiln import relay
from kiln.relay.testing import check_grad


@dataclass
class GradCase:
    """``build(*vars)`` gives the body; ``shapes`` the parameters (float64 unless ``dtypes`` says otherwise);
    ``inputs(rng)`` optional concrete arguments; ``tested`` the indices of the arguments whose gradients are
    compared (all by default)."""

    op: str
    build: object
    shapes: tuple
    dtypes: tuple = ()
    inputs: object = None
    tested: tuple | None = None
    options: dict = field(default_factory=dict)


def case(op, build, *shapes, dtypes=(), inputs=None, tested=None, **options):
    """A :class:`GradCase`."""
    return GradCase(op, build, shapes, tuple(dtypes), inputs, tested, options)


def run_case(c: GradCase, seed=0):
    """Check ``c``'s gradients numerically (AssertionError on a mismatch)."""
    dtypes = c.dtypes or ("float64",) * len(c.shapes)
    params = [relay.var(f"p{i}", shape=s, dtype=d) for i, (s, d) in enumerate(zip(c.shapes, dtypes, strict=True))]
    func = relay.Function(params, c.build(*params))
    options = {"eps": 1e-6, "atol": 1e-6, "rtol": 1e-5, **c.options}
    inputs = None
    if c.inputs is not None:
        inputs = [np.asarray(x, dtype=d) for x, d in zip(c.inputs(np.random.default_rng(seed)), dtypes, strict=True)]
    tested = None if c.tested is None or inputs is None else [inputs[i] for i in c.tested]
    check_grad(func, inputs=inputs, test_inputs=tested, **options)


def uniform(*shapes, low=-1.0, high=1.0):
    """``inputs`` drawing each argument uniformly from ``[low, high)``."""
    return lambda rng: [rng.uniform(low, high, s) for s in shapes]


def away_from(points, *shapes, margin=0.2, spread=2.0):
    """``inputs`` drawing each argument at least ``margin`` away from every value in ``points`` (kinks, steps)."""

    def draw(rng):
        out = []
        for s in shapes:
            x = rng.uniform(-spread, spread, s)
            for p in points:
                close = np.abs(x - p) < margin
                x = np.where(close, p + np.copysign(margin, x - p + 1e-12), x)
            out.append(x)
        return out

    return draw
