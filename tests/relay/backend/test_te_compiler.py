"""The TE compiler (kiln/relay/backend/te_compiler.py): one primitive function to one PrimFunc, checked by running
the PrimFunc; names; the structural cache and its parallel prefetch."""

import os
import warnings

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import CodegenError
from kiln.relay.backend import te_compiler
from kiln.relay.backend.te_compiler import TECompiler, fused_name, lower_primitive
from kiln.target import parallel

RNG = np.random.default_rng(3)


def primitive(params, body):
    return relay.infer_type(relay.Function(params, body, attrs={"Primitive": 1}))


def run_prim(cached, *inputs):
    """Compile the PrimFunc and run it on ``inputs``; returns the outputs."""
    lib = kiln.build(cached.prim_func, target="llvm", name="kernel")
    outs = [kiln.nd.empty(t.shape, t.dtype) for t in cached.outputs]
    lib["kernel"](*[kiln.nd.array(x) for x in inputs], *outs)
    return [o.numpy() for o in outs]


def test_fused_conv_group():
    x, w, b = relay.var("p0", shape=(1, 3, 6, 6)), relay.var("p1", shape=(4, 3, 3, 3)), relay.var("p2", shape=(4, 1, 1))
    func = primitive([x, w, b], relay.nn.relu(relay.add(relay.nn.conv2d(x, w, padding=(1, 1)), b)))
    cached = lower_primitive(func, "llvm")
    assert cached.name == "fused_nn_conv2d_add_nn_relu"
    assert len(cached.prim_func.params) == 4 and [t.shape for t in cached.outputs] == [(1, 4, 6, 6)]
    xs, ws, bs = (RNG.uniform(-1, 1, t.shape).astype("float32") for t in cached.inputs)
    want = relay.create_executor().evaluate(func)(xs, ws, bs).numpy()
    np.testing.assert_allclose(run_prim(cached, xs, ws, bs)[0], want, rtol=1e-5, atol=1e-5)


def test_tuple_parameters_and_results():
    pair = relay.var("p0", relay.TupleType([relay.TensorType((2, 3)), relay.TensorType((2, 3))]))
    y = relay.var("p1", shape=(2, 3))
    cat = relay.concatenate([relay.TupleGetItem(pair, 0), relay.TupleGetItem(pair, 1)], axis=0)
    body = relay.Tuple([relay.exp(cat), y, relay.exp(cat), relay.add(y, relay.const(2.0))])
    cached = lower_primitive(primitive([pair, y], body), "llvm")
    assert len(cached.inputs) == 3 and [t.shape for t in cached.outputs] == [(4, 3), (2, 3), (4, 3), (2, 3)]
    a, b, c = (RNG.uniform(-1, 1, (2, 3)).astype("float32") for _ in range(3))
    e, copy, e2, plus = run_prim(cached, a, b, c)
    np.testing.assert_allclose(e, np.exp(np.concatenate([a, b])), rtol=1e-6)
    assert np.array_equal(copy, c) and np.array_equal(e2, e)  # a parameter and a repeated tensor are copied
    np.testing.assert_allclose(plus, c + 2, rtol=1e-6)


def test_split_group_outputs():
    x = relay.var("p0", shape=(6, 2))
    parts = relay.split(relay.nn.relu(x), 3, axis=0)
    cached = lower_primitive(primitive([x], parts.astuple()), "c")
    assert cached.name == "fused_nn_relu_split" and len(cached.outputs) == 3
    xs = RNG.uniform(-1, 1, (6, 2)).astype("float32")
    for got, want in zip(run_prim(cached, xs), np.split(np.maximum(xs, 0), 3), strict=True):
        np.testing.assert_array_equal(got, want)


def test_errors():
    x = relay.var("p0", shape=(2,))
    with pytest.raises(CodegenError, match="not typed"):
        lower_primitive(relay.Function([x], relay.exp(x), attrs={"Primitive": 1}))
    inner = primitive([x], relay.add(x, relay.const(np.ones(2, "float32"))))
    with pytest.raises(CodegenError, match="constant of shape \\(2,\\)"):
        lower_primitive(inner)
    t = relay.var("t")
    with pytest.raises(CodegenError, match="cannot contain a Let"):
        lower_primitive(primitive([x], relay.Let(t, relay.exp(x), t)))


def test_fused_names():
    assert fused_name(["nn.conv2d", "add", "nn.relu"]) == "fused_nn_conv2d_add_nn_relu"
    assert fused_name([]) == "fused"
    long = fused_name(["nn.conv2d"] + ["add"] * 40)
    assert long.startswith("fused_nn_conv2d_add_add") and len(long) == 80 + 18 and long.endswith("_")
    assert long != fused_name(["nn.conv2d"] + ["add"] * 41)


def test_cache_shares_structurally_equal_functions():
    compiler = TECompiler()

    def make(shape):
        x = relay.var("p0", shape=shape)  # a fresh variable each time: equal up to names
        return primitive([x], relay.sigmoid(relay.exp(x)))

    first = compiler.lower(make((3, 4)), "llvm")
    assert compiler.lower(make((3, 4)), "llvm") is first and compiler.hits == 1
    assert compiler.lower(make((4, 3)), "llvm") is not first
    assert compiler.lower(make((3, 4)), "c") is not first  # the target is part of the key
    with kiln.transform.PassContext(config={"tir.disable_vectorize": True}):
        assert compiler.lower(make((3, 4)), "llvm") is not first  # so is the lowering configuration
    assert len(compiler) == 4 and compiler.misses == 4
    compiler.clear()
    assert len(compiler) == 0 and compiler.hits == 0
    assert isinstance(te_compiler.get(), TECompiler)


def test_cache_evicts_least_recently_used():
    compiler = TECompiler(capacity=2)
    funcs = [primitive([x], relay.exp(x)) for x in (relay.var("p0", shape=(n,)) for n in (1, 2, 3))]
    a = compiler.lower(funcs[0], "llvm")
    compiler.lower(funcs[1], "llvm")
    assert compiler.lower(funcs[0], "llvm") is a  # touched: the (2,) function is now the oldest
    compiler.lower(funcs[2], "llvm")
    assert len(compiler) == 2 and compiler.lower(funcs[0], "llvm") is a


def _distinct_functions(count):
    """``count`` primitive functions that differ in shape, and two repeats of the first (structurally equal)."""
    funcs = []
    for n in (*range(1, count + 1), 1, 1):
        x = relay.var("p0", shape=(n, 5))
        funcs.append(primitive([x], relay.sigmoid(relay.multiply(relay.exp(x), relay.const(0.5)))))
    return funcs


@pytest.fixture
def two_idle_cores(monkeypatch):
    """Lowering sees two idle cores whatever the machine's load (a test run keeps every core busy)."""
    monkeypatch.setattr(parallel, "idle_cores", lambda: 2)


def test_prefetch_lowers_in_two_processes_what_one_would(two_idle_cores):
    funcs = _distinct_functions(9)
    serial, parallel = TECompiler(), TECompiler()
    want = [serial.lower(f, "llvm") for f in funcs]
    assert parallel.prefetch(funcs, "llvm") == 2
    assert len(parallel) == 9 and parallel.hits == parallel.misses == 0
    got = [parallel.lower(f, "llvm") for f in funcs]
    assert (parallel.hits, parallel.misses) == (serial.hits, serial.misses) == (2, 9)  # as if lowered on first use
    assert got[-1] is got[0]  # the repeats share one entry
    for g, w in zip(got, want, strict=True):
        assert kiln.ir.structural_equal(g.prim_func, w.prim_func) and g.name == w.name
        assert g.source_func is not None
    xs = RNG.uniform(-1, 1, (9, 5)).astype("float32")
    np.testing.assert_allclose(run_prim(got[8], xs)[0], 1 / (1 + np.exp(-np.exp(xs) * 0.5)), rtol=1e-5)
    assert parallel.prefetch(funcs, "llvm") == 0  # all cached: nothing to lower


def test_prefetch_stays_in_this_process_when_something_watches(two_idle_cores):
    from kiln.autotvm.task.relay_integration import TaskExtractor

    funcs = _distinct_functions(9)
    with TaskExtractor():  # records the workloads its queries ask for
        assert TECompiler().prefetch(funcs, "llvm") == 0
    with kiln.transform.PassContext(instruments=[kiln.ir.instrument.PassTimingInstrument()]):
        assert TECompiler().prefetch(funcs, "llvm") == 0
    with kiln.autotvm.apply_history_best([]):  # only answers
        assert TECompiler().prefetch(funcs, "llvm") == 2
    assert TECompiler().prefetch(funcs[:7], "llvm") == 0  # too few to split


@pytest.mark.parametrize("child_dies", [False, True])
def test_prefetch_passes_on_warnings_and_survives_a_dying_child(two_idle_cores, monkeypatch, child_dies):
    parent = os.getpid()
    real = te_compiler.lower_primitive

    def lower(func, target=None, name=None):
        n = func.params[0].checked_type_.shape[0]
        if child_dies and os.getpid() != parent and n == 4:
            os._exit(3)  # the child lowering the second part crashes: that part is lowered here again
        warnings.warn(f"lowering {n} in {'this' if os.getpid() == parent else 'a child'} process", UserWarning,
                      stacklevel=1)
        return real(func, target, name)

    monkeypatch.setattr(te_compiler, "lower_primitive", lower)
    funcs = _distinct_functions(9)
    compiler = TECompiler()
    with pytest.warns(UserWarning) as caught:
        assert compiler.prefetch(funcs, "llvm") == 2
    # round-robin: this process lowers 1, 3, 5, 7, 9, the child 2, 4, 6, 8
    where = "this" if child_dies else "a child"
    assert {str(w.message) for w in caught} >= {f"lowering {n} in {where} process" for n in (2, 4, 6, 8)}
    assert len(compiler) == 9 and {compiler.lower(f, "llvm").name for f in funcs} == {"fused_exp_multiply_sigmoid"}
