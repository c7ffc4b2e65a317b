"""Tuned against default schedules for single convolution kernels (kiln.autotvm, issue 17).

For each layer: build a one-convolution model, extract its task (the blocked ``conv2d_NCHWc.x86`` kernel after
AlterOpLayout), measure every config of its space (or ``--trials`` of them with ``--tuner``), and print the default
config's GFLOP/s, the best one's, and which config that is. The default config is measured in the same run, so
the ratio is what tuning buys on this CPU.

    .venv/bin/python bench/bench_tune.py                       # ResNet-style 3x3 layers, every config
    .venv/bin/python bench/bench_tune.py --tuner xgb --trials 8 --log records.json
"""

import argparse
import time

import numpy as np

import kiln
from kiln import autotvm, relay

LAYERS = {  # name: (in channels, out channels, size, kernel, stride)
    "resnet_56x56_3x3": (64, 64, 56, 3, 1),
    "resnet_28x28_3x3": (128, 128, 28, 3, 1),
    "resnet_14x14_3x3": (256, 256, 14, 3, 1),
    "resnet_7x7_3x3": (512, 512, 7, 3, 1),
    "odd_13x13_3x3": (96, 96, 13, 3, 1),
    "small_14x14_16_32": (16, 32, 14, 3, 1),
}


def conv_task(c, o, size, k, stride, target):
    x = relay.var("x", shape=(1, c, size, size))
    w = relay.var("w", shape=(o, c, k, k))
    y = relay.nn.conv2d(x, w, strides=(stride, stride), padding=(k // 2, k // 2), channels=o, kernel_size=(k, k))
    mod = kiln.IRModule.from_expr(relay.Function([x, w], y))
    params = {"w": np.random.default_rng(0).uniform(-1, 1, (o, c, k, k)).astype("float32")}
    (task,) = autotvm.task.extract_from_program(mod, params, target=target, ops=["nn.conv2d"])
    return task


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default=",".join(LAYERS), help="comma-separated names among " + ", ".join(LAYERS))
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--tuner", default="gridsearch", choices=("gridsearch", "random", "ga", "xgb"))
    parser.add_argument("--trials", type=int, default=0, help="measurements per layer (0: the whole space)")
    parser.add_argument("--number", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--log", help="append the records to this file")
    args = parser.parse_args(argv)
    option = autotvm.measure_option(builder=autotvm.LocalBuilder(timeout=60),
                                    runner=autotvm.LocalRunner(number=args.number, repeat=args.repeat, timeout=60))
    tuners = {"gridsearch": autotvm.tuner.GridSearchTuner, "random": autotvm.tuner.RandomTuner,
              "ga": autotvm.tuner.GATuner, "xgb": autotvm.tuner.XGBTuner}
    print(f"{'layer':<22}{'space':>6}{'trials':>7}{'default':>10}{'best':>10}{'ratio':>7}  best config")
    for name in args.layers.split(","):
        task = conv_task(*LAYERS[name], args.target)
        results = {}

        def collect(tuner, inputs, outs, results=results):
            for inp, res in zip(inputs, outs, strict=True):
                results[inp.config.index] = inp.task.flop / res.mean_cost / 1e9 if res.error_no == 0 else 0.0

        callbacks = [collect] + ([autotvm.callback.log_to_file(args.log)] if args.log else [])
        start = time.time()
        tuner = tuners[args.tuner](task)
        tuner.tune(args.trials or len(task.config_space), option, callbacks=callbacks)
        default = results.get(task.default_index, 0.0)
        best = tuner.best_flops / 1e9
        print(f"{name:<22}{len(task.config_space):>6}{tuner.trials:>7}{default:>10.1f}{best:>10.1f}"
              f"{best / default if default else float('nan'):>7.2f}  {tuner.best_config} ({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
