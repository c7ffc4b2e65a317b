"""Time of the standard opt_level=3 Relay pipeline (what relay.build runs) per pass, on ResNet-50 with its
parameters bound, on a transformer encoder, and on a 1,000-layer module (goal: ResNet-50 in under 2 s, and every
pass linear or n log n in the number of operators: compare the 500- and 1,000-layer times).

Run: ``python bench/bench_optimize.py``
"""

import time

import kiln
from kiln import relay
from kiln.ir.instrument import PassTimingInstrument
from kiln.relay.testing import resnet, transformer


def deep_module(layers):
    """``layers`` conv2d + bias_add + relu blocks (3 operators each) over a small image."""
    import numpy as np

    rng = np.random.default_rng(0)
    x = relay.var("data", shape=(1, 8, 8, 8))
    y = x
    for _ in range(layers):
        w = relay.const(rng.standard_normal((8, 8, 1, 1)).astype("float32"))
        b = relay.const(rng.standard_normal(8).astype("float32"))
        y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(y, w), b))
    return kiln.IRModule.from_expr(relay.Function([x], y))


def run(name, mod, params=None):
    timing = PassTimingInstrument()
    with kiln.transform.PassContext(opt_level=3, instruments=[timing]):
        start = time.perf_counter()
        relay.optimize(mod, params=params)
        total = time.perf_counter() - start
        report = timing.render()
    ops = []
    relay.post_order_visit(mod["main"], lambda e: ops.append(e) if isinstance(e, relay.Call) else None)
    print(f"== {name}: {len(ops)} operators, pipeline {total:.3f} s")
    print(report)
    return total


def main():
    mod, params = resnet.get_workload(num_layers=50)
    resnet_time = run("ResNet-50 (params bound)", mod, params)
    mod, params = transformer.get_workload(seq=128, hidden=256, heads=4, ffn=1024, num_layers=2)
    run("transformer encoder, 2 layers", mod, params)
    half = run("500-layer module", deep_module(500))
    full = run("1,000-layer module", deep_module(1000))
    print(f"ResNet-50 pipeline: {resnet_time:.3f} s (goal < 2 s); 1,000 / 500 layers time ratio: {full / half:.2f}"
          " (2.0 = linear)")


if __name__ == "__main__":
    main()
