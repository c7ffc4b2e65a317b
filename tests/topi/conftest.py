"""Test harness for topi: lower Relay operator calls the way LowerTE will, build them, compare with the reference.

A :class:`Case` is one call: an operator name, numpy arguments (a tuple of arrays for a tuple argument) and the
attrs record. :func:`run_cases` types each call with the operator's ``FTypeRelation``, makes one placeholder per
tensor, builds the outputs with ``ScheduleBuilder`` (kiln/relay/backend/schedule_builder.py) (the operator's strategy and the schedule of its
anchor), lowers every case into one IRModule, compiles that module once (so a test of many variants costs one
compiler run), runs each function and compares every output with the numpy reference (``FEvaluate``).
A ``consumers`` function adds element-wise calls after the operator, testing the schedule with a fused chain.
"""

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pytest

import kiln
from kiln import te
from kiln.ir import IRModule, Op, TensorType, TupleType
from kiln.relay.backend.schedule_builder import ScheduleBuilder
from kiln.runtime.host import host_cpu_features


@dataclass
class Case:
    """One operator call to check; ``label`` names it in failures."""

    op: str
    args: list
    attrs: object = None
    label: str = ""
    rtol: float = 1e-5
    atol: float = 1e-5
    consumers: list = field(default_factory=list)  # [(op_name, attrs, extra numpy args)] applied to output 0


def rand(shape, dtype="float32", low=-1.0, high=1.0, seed=0):
    """Random data of ``shape``/``dtype`` (integers in ``[low, high)``)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(int(low), int(high), size=shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.random(size=shape) < 0.5
    return rng.uniform(low, high, size=shape).astype(dtype)


def _type_of(arg):
    if isinstance(arg, tuple):
        return TupleType([_type_of(a) for a in arg])
    return TensorType(arg.shape, str(arg.dtype))


def _flat(args):
    out = []
    for a in args:
        out.extend(_flat(a) if isinstance(a, tuple) else [a])
    return out


def _fields(t):
    return list(t.fields) if isinstance(t, TupleType) else [t]


def lower_case(case, name, target):
    """Lower ``case`` as LowerTE would; return (IRModule, placeholders, outputs, output types, reference args)."""
    op = Op.get(case.op)
    out_type = op.get_attr("FTypeRelation")([_type_of(a) for a in case.args], case.attrs)
    flat = _flat(case.args)
    params = [te.placeholder(a.shape, str(a.dtype), name=f"p{k}") for k, a in enumerate(flat)]
    builder = ScheduleBuilder(target)
    outs = builder.call(case.op, case.attrs, params, out_type)
    ref_fn = op.get_attr("FEvaluate")
    ref = ref_fn(case.attrs, *case.args)
    ref = list(ref) if isinstance(ref, tuple) else [ref]
    for k, (cname, cattrs, extra) in enumerate(case.consumers):
        cop = Op.get(cname)
        extra_params = [te.placeholder(a.shape, str(a.dtype), name=f"c{k}_{j}") for j, a in enumerate(extra)]
        types = [_fields(out_type)[0]] + [_type_of(a) for a in extra]
        out_type = cop.get_attr("FTypeRelation")(types, cattrs)
        outs = builder.call(cname, cattrs, [outs[0]] + extra_params, out_type)
        params += extra_params
        ref = [cop.get_attr("FEvaluate")(cattrs, ref[0], *extra)]
        flat = flat + list(extra)
    s = builder.schedule(outs)
    mod = kiln.lower(s, params + outs, name=name)
    return mod, flat, outs, ref


def run_cases(cases, target="llvm"):
    """Build every case into one module for ``target``, run each and compare with the reference."""
    mod = IRModule()
    lowered = []
    for k, case in enumerate(cases):
        name = f"case{k}"
        m, flat, outs, ref = lower_case(case, name, target)
        mod.update(m)
        lowered.append((name, case, flat, outs, ref))
    lib = kiln.build(mod, target=target)
    failures = []
    for name, case, flat, outs, ref in lowered:
        results = [kiln.nd.array(np.zeros([int(d) for d in o.shape], o.dtype)) for o in outs]
        lib[name](*[kiln.nd.array(np.array(a, order="C")) for a in flat], *results)
        assert len(results) == len(ref), f"{case.label or case.op}: {len(results)} outputs, reference {len(ref)}"
        for got, want in zip(results, ref, strict=True):
            got = got.numpy()
            want = np.asarray(want)
            try:
                assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
                assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
                np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)
            except AssertionError as exc:
                failures.append(f"{case.label or case.op} ({case.op}): {exc}")
    assert not failures, "\n".join(failures)


@pytest.fixture
def harness():
    """The harness (``harness.Case``, ``harness.rand``, ``harness.run_cases``): test modules cannot import this
    conftest under ``--import-mode=importlib``."""
    return SimpleNamespace(Case=Case, rand=rand, run_cases=run_cases, lower_case=lower_case)


# Schedules size their tiles by the target's register file: on a host with AVX-512 every case also runs built for an
# AVX2 CPU (which the host can run), so both widths are proven here and the AVX2 one on every host.
HOST_TARGETS = ["llvm"] + (["llvm -mcpu=haswell"] if "avx512f" in host_cpu_features() else [])


@pytest.fixture(params=HOST_TARGETS)
def target(request):
    """The targets every operator is checked on: the host, and an AVX2 CPU where the host has AVX-512 (a
    representative subset is also built for "c", explicitly)."""
    return request.param
