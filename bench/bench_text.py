"""Benchmark of the Relay text format: print and parse ResNet-50 and a 10,000-operator chain.

Run: ``python bench/bench_text.py`` (prints best-of-N wall times in milliseconds). Goal: each under one second for
ResNet-50.
"""

import time

from kiln import relay
from kiln.ir import IRModule, assert_structural_equal
from kiln.relay.testing import resnet


def best_of(func, repeat):
    """The smallest wall time of ``repeat`` calls of ``func`` (seconds) and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return best, result


def chain(length):
    """``relu(add(relu(...), c))``: a chain of ``length`` operators with scalar constants."""
    x = relay.var("x", shape=(1, 16))
    y = x
    for i in range(length):
        y = relay.add(y, relay.const(float(i))) if i % 2 else relay.nn.relu(y)
    return IRModule.from_expr(y)


def bench(name, mod, repeat):
    """Time printing and parsing ``mod``, check the round trip, and print one result line."""
    t_print, text = best_of(lambda: str(mod), repeat)
    t_parse, parsed = best_of(lambda: relay.parse(text), repeat)
    assert_structural_equal(parsed, mod)
    print(f"{name:<28} {len(text) / 1024:8.1f} KiB  print {t_print * 1e3:8.1f} ms  parse {t_parse * 1e3:8.1f} ms")


def main():
    mod, _ = resnet.get_workload(num_layers=50)
    bench("resnet-50 (typed)", mod, 5)
    untyped = IRModule({gv: f.with_fields(ret_type=None) for gv, f in mod.functions.items()})
    bench("resnet-50 (untyped)", relay.parse(str(untyped)), 5)
    bench("chain of 10,000 operators", chain(10000), 3)
    bench("typed chain of 10,000", relay.infer_type(chain(10000)), 3)


if __name__ == "__main__":
    main()
