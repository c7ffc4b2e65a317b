"""Infrastructure overhead per pass: 20 trivial passes over a 200-operator module (goal: under 10 ms per pass).

A trivial pass does no work of its own (module passes return their module, function passes their function), so what
is measured is the pass infrastructure: context lookup, enabling rules, hooks, the module copy, the unchanged-module
test and the analysis-manager bookkeeping. The time of calling the same pass functions directly is subtracted.

Also printed, for information: the same pipeline with a timing instrument and with VerifyWellFormed, and the cost
of InferType computed once versus reused from the analysis manager.

Run: ``python bench/bench_pass_overhead.py``
"""

import time

import kiln as tvm
from kiln import relay
from kiln.ir.instrument import PassTimingInstrument, VerifyWellFormed
from kiln.relay.transform import InferType, function_pass
from kiln.transform import PassContext, Sequential, module_pass

NUM_OPS = 200
NUM_PASSES = 20
REPEAT = 20


def build_module(num_ops=NUM_OPS):
    """A chain of ``num_ops`` element-wise operators over a (1, 64) input."""
    x = relay.var("x", shape=(1, 64))
    y = relay.var("y", shape=(1, 64))
    out = x
    for i in range(num_ops):
        out = relay.add(out, y) if i % 2 == 0 else relay.nn.relu(out)
    return tvm.IRModule.from_expr(relay.Function([x, y], out))


def module_identity(mod, ctx):
    return mod


def function_identity(func, mod, ctx):
    return func


def make_passes():
    passes = []
    for i in range(NUM_PASSES):
        if i % 2 == 0:
            passes.append(module_pass(module_identity, opt_level=0, name=f"ModuleNoop{i}"))
        else:
            passes.append(function_pass(function_identity, opt_level=0, name=f"FunctionNoop{i}"))
    return passes


def direct(mod):
    """The same work without the infrastructure: call each pass function once (per function for function passes)."""
    ctx = PassContext.current()
    for i in range(NUM_PASSES):
        if i % 2 == 0:
            mod = module_identity(mod, ctx)
        else:
            for func in mod.functions.values():
                function_identity(func, mod, ctx)
    return mod


def best_of(fn, repeat=REPEAT):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    mod = build_module()
    seq = Sequential(make_passes())
    with PassContext(opt_level=2):
        t_seq = best_of(lambda: seq(mod))
    t_direct = best_of(lambda: direct(mod))
    per_pass = (t_seq - t_direct) / NUM_PASSES
    print(f"{NUM_PASSES} trivial passes over {NUM_OPS} operators")
    print(f"  pipeline {t_seq * 1e3:.3f} ms, direct calls {t_direct * 1e3:.3f} ms")
    print(f"  infrastructure overhead per pass: {per_pass * 1e3:.4f} ms (goal < 10 ms): "
          f"{'OK' if per_pass < 0.010 else 'TOO SLOW'}")

    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        t_timed = best_of(lambda: seq(mod))
    with PassContext(instruments=[VerifyWellFormed()]):
        t_verified = best_of(lambda: seq(mod))
    print(f"  with PassTimingInstrument: {(t_timed - t_direct) / NUM_PASSES * 1e3:.4f} ms per pass")
    print(f"  with VerifyWellFormed: {(t_verified - t_direct) / NUM_PASSES * 1e3:.4f} ms per pass "
          f"(checks each distinct module once)")

    def cold():
        with PassContext():
            InferType()(mod)

    with PassContext():
        typed = InferType()(mod)
        t_cached = best_of(lambda: InferType()(mod))
        t_typed = best_of(lambda: InferType()(typed))
    print(f"InferType on {NUM_OPS} operators: computed {best_of(cold, 5) * 1e3:.3f} ms, "
          f"reused {t_cached * 1e3:.4f} ms, on its own result {t_typed * 1e3:.4f} ms")
    return per_pass


if __name__ == "__main__":
    main()
